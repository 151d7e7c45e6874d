import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Loading, useLoad } from '../../ui.js';
import type { ScreenProps } from '../index.js';
import { EditConfiguration, type Configuration } from './edit.js';

const words = {
  de: {
    list: 'Konfigurationen',
    none: 'Noch keine Konfiguration.',
    open: 'Konfiguration {id} öffnen',
    active: 'aktiv',
    add: 'Neue Konfiguration',
    back: 'Zurück zur Liste',
    summary: '{groups} Gruppen, {rules} Regeln',
  },
  en: {
    list: 'Configurations',
    none: 'No configuration yet.',
    open: 'Open configuration {id}',
    active: 'active',
    add: 'New configuration',
    back: 'Back to the list',
    summary: '{groups} groups, {rules} rules',
  },
};

/** Promotions: the project's configurations; one edited as JSON, tried on a cart, activated. */
export function Promotions({ api, session }: ScreenProps) {
  const t = useWords(words);
  const [open, setOpen] = useState<number | null>(null);
  const [error, setError] = useState<unknown>();
  const list = useLoad((signal) => api.get<{ configurations: Configuration[] }>('/promotions/configurations', { signal }), [api, open]);
  const canWrite = session.permissions.includes('promotionsWrite');
  if (open !== null) return html`<div><p><button type="button" class="secondary" onClick=${() => setOpen(null)}>${t('back')}</button></p><${EditConfiguration} api=${api} id=${open} canWrite=${canWrite} /></div>`;
  const create = async () => {
    try {
      setOpen((await api.send<Configuration>('POST', '/promotions/configurations', { ranks: [], groups: [] })).id);
    } catch (err) {
      setError(err);
    }
  };
  return html`<section class="panel" aria-labelledby="configurations-title">
    <h2 id="configurations-title">${t('list')}</h2>
    <${ErrorMessage} error=${list.error ?? error} />
    <${Loading} when=${list.loading && !list.data} />
    ${list.data && !list.data.configurations.length ? html`<p>${t('none')}</p>` : null}
    <ul class="plain">
      ${(list.data?.configurations ?? []).map(
        (c) => html`<li>
          <button type="button" class="link" aria-label=${t('open', { id: c.id })} onClick=${() => setOpen(c.id)}>${c.id}</button>
          ${' '}${t('summary', { groups: c.groups.length, rules: c.groups.reduce((n, g) => n + (g.rules?.length ?? 0), 0) })}
          ${c.active ? html` <span class="badge ok-badge">${t('active')}</span>` : null}
        </li>`,
      )}
    </ul>
    ${canWrite ? html`<button type="button" class="secondary" onClick=${create}>${t('add')}</button>` : null}
  </section>`;
}
