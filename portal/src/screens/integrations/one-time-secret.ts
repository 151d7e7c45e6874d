import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useWords } from '../../i18n.js';
import { saveBlob, useId } from '../../ui.js';
import type { CreatedIntegration } from './names.js';

const words = {
  de: {
    natsTitle: 'Zugangsdatei für {name}',
    webhookTitle: 'Signiergeheimnis für {name}',
    natsField: 'Inhalt der Datei {file}',
    webhookField: 'Signiergeheimnis',
    warningLead: 'Wird nur jetzt angezeigt.',
    natsWarning: 'Laden Sie die Datei jetzt herunter und geben Sie sie nur dem System, das die Ereignisse liest. Die Plattform speichert sie nicht und kann sie nicht noch einmal zeigen; geht sie verloren, erneuern Sie den Zugang.',
    webhookWarning: 'Kopieren Sie das Geheimnis jetzt in den Empfänger, der damit die Signaturen prüft. Die Plattform zeigt es nicht noch einmal; geht es verloren, erneuern Sie es.',
    copy: 'Kopieren',
    download: 'Herunterladen ({file})',
    copied: 'In die Zwischenablage kopiert.',
    selectToCopy: 'Der Text ist markiert: kopieren Sie ihn mit Strg+C (Mac: ⌘+C).',
    downloaded: 'Als {file} gespeichert.',
    hide: 'Gesichert, ausblenden',
  },
  en: {
    natsTitle: 'Credentials file for {name}',
    webhookTitle: 'Signing secret for {name}',
    natsField: 'Contents of the file {file}',
    webhookField: 'Signing secret',
    warningLead: 'Shown only now.',
    natsWarning: 'Download the file now and give it only to the system that reads the events. The platform does not keep it and cannot show it again; if it is lost, rotate the access.',
    webhookWarning: 'Copy the secret now into the receiver that checks the signatures with it. The platform will not show it again; if it is lost, rotate it.',
    copy: 'Copy',
    download: 'Download ({file})',
    copied: 'Copied to the clipboard.',
    selectToCopy: 'The text is selected: copy it with Ctrl+C (Mac: ⌘+C).',
    downloaded: 'Saved as {file}.',
    hide: 'Saved it, hide',
  },
};

/** A file name from what a person named the integration (no path separators or control characters). */
function fileNameOf(name: string, suffix: string): string {
  // eslint-disable-next-line no-control-regex
  const safe = name.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, '-').trim().replace(/^\.+/, '');
  return `${safe || 'integration'}${suffix}`;
}

/**
 * A NATS credential (`.creds`) or a webhook's signing secret, shown the one time the API answers it,
 * with a plain warning, a copy and a download button. The reader is taken to it when it appears.
 * Nothing keeps it: it is gone once the screen is left (or `onHide`). Nothing is shown for an
 * answer without one.
 */
export function OneTimeSecret({ created, onHide }: { created: CreatedIntegration | null; onHide(): void }) {
  const value = created?.creds ?? created?.secret ?? '';
  const kind = created?.creds ? 'nats' : 'webhook';
  const name = created?.name ?? '';
  const t = useWords(words);
  const heading = useRef<HTMLHeadingElement>(null);
  const field = useRef<HTMLTextAreaElement>(null);
  const [status, setStatus] = useState('');
  const ids = { title: useId('secret-title'), field: useId('secret-field') };
  const file = kind === 'nats' ? fileNameOf(name, '.creds') : fileNameOf(name, '-secret.txt');
  useEffect(() => {
    heading.current?.focus();
    setStatus('');
  }, [value]);

  const copy = async () => {
    try {
      if (!navigator.clipboard?.writeText) throw new Error('no clipboard');
      await navigator.clipboard.writeText(value);
      setStatus(t('copied'));
    } catch {
      // Without the clipboard (an http page not on this machine, a refused permission): the person copies.
      field.current?.focus();
      field.current?.select();
      setStatus(t('selectToCopy'));
    }
  };
  const download = () => {
    saveBlob(new Blob([value], { type: 'text/plain' }), file);
    setStatus(t('downloaded', { file }));
  };

  if (!value) return null;
  return html`<section class="one-time-secret" aria-labelledby=${ids.title}>
    <h3 id=${ids.title} ref=${heading} tabindex="-1">${t(kind === 'nats' ? 'natsTitle' : 'webhookTitle', { name })}</h3>
    <p class="warning"><strong>${t('warningLead')}</strong> ${t(kind === 'nats' ? 'natsWarning' : 'webhookWarning')}</p>
    <label for=${ids.field}>${kind === 'nats' ? t('natsField', { file }) : t('webhookField')}</label>
    <textarea id=${ids.field} ref=${field} class="secret" readonly rows=${kind === 'nats' ? 8 : 2} spellcheck=${false} value=${value}></textarea>
    <div class="actions">
      ${kind === 'nats'
        ? html`<button type="button" onClick=${download}>${t('download', { file })}</button><button type="button" class="secondary" onClick=${copy}>${t('copy')}</button>`
        : html`<button type="button" onClick=${copy}>${t('copy')}</button><button type="button" class="secondary" onClick=${download}>${t('download', { file })}</button>`}
      <button type="button" class="secondary" onClick=${onHide}>${t('hide')}</button>
    </div>
    <p role="status" class="one-time">${status}</p>
  </section>`;
}
