import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Loading, useLoad } from '../../ui.js';
import type { ScreenProps } from '../index.js';
import { ClientEntry } from './client.js';
import { ClientSecret } from './client-secret.js';
import { CreateClient } from './create.js';
import type { Client, CreatedClient } from './names.js';

const words = {
  de: {
    intro: 'Apps und Dienste, die sich selbst Tokens holen: eine App mit dem App-SDK (ihre Installationen legen App-Nutzer an und sehen nur ihre eigenen Einkäufe) oder ein Dienst wie die Warenwirtschaft, der sich mit OAuth 2.0 Client Credentials anmeldet.',
    list: 'Apps und Dienste des Projekts',
    count: { one: '{n} Eintrag', other: '{n} Einträge' },
    none: 'Noch keine App und kein Dienst.',
    add: 'Neue App oder neuer Dienst',
  },
  en: {
    intro: 'Clients that get tokens by themselves: an app with the app SDK (its installations make app users and see only their own purchases), or a service such as the inventory system, which signs in with OAuth 2.0 client credentials.',
    list: "The project's clients",
    count: { one: '{n} client', other: '{n} clients' },
    none: 'No client yet.',
    add: 'New client',
  },
};

/**
 * Clients (owner): the project's apps and services, listed with what can be done to each, and new
 * ones made. A new client's secret is shown once, beside the form that made it, with what its holder
 * needs (base URL and app id, or the token address and client id); leaving the screen forgets it.
 */
export function Clients({ api }: ScreenProps) {
  const t = useWords(words);
  const list = useLoad((signal) => api.get<{ clients: Client[] }>('/clients', { signal }), [api]);
  const [created, setCreated] = useState<CreatedClient | null>(null);
  const clients = list.data?.clients ?? [];

  return html`<div>
    <p class="lead">${t('intro')}</p>
    <section class="panel" aria-labelledby="clients-title">
      <h2 id="clients-title">${t('list')}</h2>
      <${Loading} when=${list.loading && !list.data} />
      <${ErrorMessage} error=${list.error} />
      ${list.data ? html`<p class="muted">${clients.length ? t('count', { n: clients.length }) : t('none')}</p>` : null}
      ${clients.map((c) => html`<${ClientEntry} key=${c.id} api=${api} client=${c} onChanged=${list.reload} />`)}
    </section>
    <section class="panel" aria-labelledby="add-client-title">
      <h2 id="add-client-title">${t('add')}</h2>
      <div class="beside">
        <${CreateClient} api=${api} onCreated=${(c: CreatedClient) => (setCreated(c), list.reload())} />
        <${ClientSecret} created=${created} onHide=${() => setCreated(null)} />
      </div>
    </section>
  </div>`;
}
