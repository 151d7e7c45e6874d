import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Loading, useLoad } from '../../ui.js';
import type { ScreenProps } from '../index.js';
import { CreateIntegration } from './create.js';
import { IntegrationEntry } from './integration.js';
import type { CreatedIntegration, Integration } from './names.js';
import { OneTimeSecret } from './one-time-secret.js';

const words = {
  de: {
    intro: 'Integrationen geben anderen Systemen (Warenwirtschaft, Buchhaltung, Kassensysteme) die Ereignisse dieses Projekts, sobald sie geschehen: ein Webhook bekommt sie signiert per HTTP-POST, ein NATS-Zugang liest sie selbst mit seiner Zugangsdatei.',
    list: 'Integrationen des Projekts',
    count: { one: '{n} Integration', other: '{n} Integrationen' },
    none: 'Noch keine Integration.',
    add: 'Neue Integration',
  },
  en: {
    intro: "Integrations give other systems (inventory, accounting, till software) this project's events as they happen: a webhook receives them as signed HTTP POSTs, a NATS access reads them itself with its credentials file.",
    list: "The project's integrations",
    count: { one: '{n} integration', other: '{n} integrations' },
    none: 'No integration yet.',
    add: 'New integration',
  },
};

/**
 * Integrations (owner): the project's webhooks and NATS accesses, listed with what can be done to
 * each, and new ones made. A new integration's credential or secret is shown once, below the form
 * that made it; leaving the screen forgets it.
 */
export function Integrations({ api }: ScreenProps) {
  const t = useWords(words);
  const list = useLoad((signal) => api.get<{ integrations: Integration[] }>('/integrations', { signal }), [api]);
  const [created, setCreated] = useState<CreatedIntegration | null>(null);
  const integrations = list.data?.integrations ?? [];

  return html`<div>
    <p class="lead">${t('intro')}</p>
    <section class="panel" aria-labelledby="integrations-title">
      <h2 id="integrations-title">${t('list')}</h2>
      <${Loading} when=${list.loading && !list.data} />
      <${ErrorMessage} error=${list.error} />
      ${list.data ? html`<p class="muted">${integrations.length ? t('count', { n: integrations.length }) : t('none')}</p>` : null}
      ${integrations.map((i) => html`<${IntegrationEntry} key=${i.id} api=${api} integration=${i} onChanged=${list.reload} />`)}
    </section>
    <section class="panel" aria-labelledby="add-integration-title">
      <h2 id="add-integration-title">${t('add')}</h2>
      <${CreateIntegration} api=${api} onCreated=${(c: CreatedIntegration) => (setCreated(c), list.reload())} />
      <${OneTimeSecret} created=${created} onHide=${() => setCreated(null)} />
    </section>
  </div>`;
}
