import { html } from 'htm/preact';
import { useWords } from '../../i18n.js';
import { fileNameOf, OneTimeSecret } from '../../one-time-secret.js';
import type { CreatedClient } from './names.js';

const words = {
  de: {
    title: 'Zugangsdaten für {name}',
    appField: 'App-Geheimnis (TOTP-Schlüssel)',
    serviceField: 'Client-Secret',
    appWarning: 'Tragen Sie Basis-URL, App-ID und App-Geheimnis jetzt in die Konfiguration der App ein (App-SDK: endpointBaseUrl, appId, secret). Die Plattform zeigt das Geheimnis nicht noch einmal; geht es verloren, erneuern Sie es.',
    serviceWarning: 'Tragen Sie Client-ID und Client-Secret jetzt in das System ein, das Tokens holt (OAuth 2.0 Client Credentials). Die Plattform speichert nur einen Hash und kann das Secret nicht noch einmal zeigen; geht es verloren, erneuern Sie es.',
    baseUrl: 'Basis-URL',
    appId: 'App-ID',
    tokenUrl: 'Token-Adresse',
    clientId: 'Client-ID',
  },
  en: {
    title: 'Credentials of {name}',
    appField: 'App secret (TOTP key)',
    serviceField: 'Client secret',
    appWarning: "Enter the base URL, app id and app secret into the app's configuration now (app SDK: endpointBaseUrl, appId, secret). The platform will not show the secret again; if it is lost, rotate it.",
    serviceWarning: 'Enter the client id and client secret into the system that fetches tokens now (OAuth 2.0 client credentials). The platform keeps only a hash and cannot show the secret again; if it is lost, rotate it.',
    baseUrl: 'Base URL',
    appId: 'App id',
    tokenUrl: 'Token address',
    clientId: 'Client id',
  },
};

/**
 * A client's secret, shown the one time the API answers it, with what its holder needs beside it:
 * an app's base URL and app id (the app SDK's configuration), a service's token address and
 * client id.
 */
export function ClientSecret({ created, onHide }: { created: CreatedClient | null; onHide(): void }) {
  const t = useWords(words);
  const app = created?.kind === 'app';
  const origin = window.location.origin;
  return html`<${OneTimeSecret}
    value=${created?.secret ?? ''}
    title=${t('title', { name: created?.name ?? '' })}
    field=${t(app ? 'appField' : 'serviceField')}
    warning=${t(app ? 'appWarning' : 'serviceWarning')}
    file=${fileNameOf(created?.name ?? '', '-secret.txt', 'client')}
    onHide=${onHide}
  >
    <dl class="facts">
      ${app
        ? html`<dt>${t('baseUrl')}</dt><dd class="mono">${origin}</dd><dt>${t('appId')}</dt><dd class="mono">${created?.id}</dd>`
        : html`<dt>${t('tokenUrl')}</dt><dd class="mono">${origin}/oauth/token</dd><dt>${t('clientId')}</dt><dd class="mono">${created?.id}</dd>`}
    </dl>
  <//>`;
}
