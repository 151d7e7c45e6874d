import { html } from 'htm/preact';
import { useWords } from '../../i18n.js';
import { fileNameOf, OneTimeSecret as Shown } from '../../one-time-secret.js';
import type { CreatedIntegration } from './names.js';

const words = {
  de: {
    natsTitle: 'Zugangsdatei für {name}',
    webhookTitle: 'Signiergeheimnis für {name}',
    natsField: 'Inhalt der Datei {file}',
    webhookField: 'Signiergeheimnis',
    natsWarning: 'Laden Sie die Datei jetzt herunter und geben Sie sie nur dem System, das die Ereignisse liest. Die Plattform speichert sie nicht und kann sie nicht noch einmal zeigen; geht sie verloren, erneuern Sie den Zugang.',
    webhookWarning: 'Kopieren Sie das Geheimnis jetzt in den Empfänger, der damit die Signaturen prüft. Die Plattform zeigt es nicht noch einmal; geht es verloren, erneuern Sie es.',
  },
  en: {
    natsTitle: 'Credentials file for {name}',
    webhookTitle: 'Signing secret for {name}',
    natsField: 'Contents of the file {file}',
    webhookField: 'Signing secret',
    natsWarning: 'Download the file now and give it only to the system that reads the events. The platform does not keep it and cannot show it again; if it is lost, rotate the access.',
    webhookWarning: 'Copy the secret now into the receiver that checks the signatures with it. The platform will not show it again; if it is lost, rotate it.',
  },
};

/**
 * An integration's NATS credential (`.creds`, downloaded first) or webhook signing secret (copied
 * first), shown the one time the API answers it. Nothing is shown for an answer without one.
 */
export function OneTimeSecret({ created, onHide }: { created: CreatedIntegration | null; onHide(): void }) {
  const t = useWords(words);
  const nats = Boolean(created?.creds);
  const name = created?.name ?? '';
  const file = nats ? fileNameOf(name, '.creds', 'integration') : fileNameOf(name, '-secret.txt', 'integration');
  return html`<${Shown}
    value=${created?.creds ?? created?.secret ?? ''}
    title=${t(nats ? 'natsTitle' : 'webhookTitle', { name })}
    field=${nats ? t('natsField', { file }) : t('webhookField')}
    warning=${t(nats ? 'natsWarning' : 'webhookWarning')}
    file=${file}
    downloadFirst=${nats}
    rows=${nats ? 8 : 2}
    onHide=${onHide}
  />`;
}
