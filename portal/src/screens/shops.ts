import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, type ProjectApi } from '../api.js';
import { useWords } from '../i18n.js';
import { ErrorMessage, Field, invalid, Loading, useId, useLoad } from '../ui.js';
import type { ScreenProps } from './index.js';

interface Shop {
  id: string;
  externalId?: string | null;
  name: string;
  email?: string;
  phone?: string;
  street?: string;
  zip?: string;
  city?: string;
  country?: string;
  [field: string]: unknown;
}

const Fields = ['name', 'externalId', 'street', 'zip', 'city', 'country', 'email', 'phone'] as const;
type FieldName = (typeof Fields)[number];

const words = {
  de: {
    list: 'Alle Shops', none: 'Noch kein Shop.', edit: 'Shop {name} bearbeiten', add: 'Neuer Shop', id: 'Kennung (optional)',
    name: 'Name', externalId: 'Externe Kennung', street: 'Straße', zip: 'PLZ', city: 'Ort', country: 'Land', email: 'E-Mail', phone: 'Telefon',
    save: 'Shop speichern', saved: 'Gespeichert.', cancel: 'Abbrechen',
  },
  en: {
    list: 'All shops', none: 'No shop yet.', edit: 'Edit shop {name}', add: 'New shop', id: 'Id (optional)',
    name: 'Name', externalId: 'External id', street: 'Street', zip: 'Postcode', city: 'City', country: 'Country', email: 'Email', phone: 'Phone',
    save: 'Save shop', saved: 'Saved.', cancel: 'Cancel',
  },
};

/** The project's shops: listed, created, edited (the API's validation shown at the field). */
export function Shops({ api, session }: ScreenProps) {
  const t = useWords(words);
  const list = useLoad((signal) => api.get<Shop[]>('/shops', { signal }), [api]);
  const [editing, setEditing] = useState<Shop | null>(null);
  const [status, setStatus] = useState('');
  const canWrite = session.permissions.includes('shopsWrite');
  return html`<div>
    <section class="panel" aria-labelledby="shops-title">
      <h2 id="shops-title">${t('list')}</h2>
      <${ErrorMessage} error=${list.error} />
      <${Loading} when=${list.loading && !list.data} />
      <p role="status">${status}</p>
      ${list.data && !list.data.length ? html`<p>${t('none')}</p>` : null}
      <ul class="plain">
        ${(list.data ?? []).map(
          (s) => html`<li>
            ${canWrite ? html`<button type="button" class="link" aria-label=${t('edit', { name: s.name || s.id })} onClick=${() => setEditing(s)}>${s.name || s.id}</button>` : s.name || s.id}
            ${' '}<span class="muted">${[s.id, s.street, [s.zip, s.city].filter(Boolean).join(' ')].filter(Boolean).join(' · ')}</span>
          </li>`,
        )}
      </ul>
      ${canWrite && !editing ? html`<button type="button" class="secondary" onClick=${() => setEditing({ id: '', name: '' })}>${t('add')}</button>` : null}
    </section>
    ${editing ? html`<${ShopForm} api=${api} shop=${editing} onDone=${(saved: boolean) => (setEditing(null), saved && (setStatus(t('saved')), list.reload()))} />` : null}
  </div>`;
}

function ShopForm({ api, shop, onDone }: { api: ProjectApi; shop: Shop; onDone(saved: boolean): void }) {
  const t = useWords(words);
  const [draft, setDraft] = useState<Shop>(shop);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const prefix = useId('shop');
  const fresh = !shop.id;
  const save = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    const body: Record<string, unknown> = Object.fromEntries(Object.entries(draft).filter(([k]) => k !== 'project' && k !== 'links'));
    if (fresh && !draft.id) delete body.id;
    try {
      await api.send(fresh ? 'POST' : 'PUT', fresh ? '/shops' : `/shops/${encodeURIComponent(shop.id)}`, body);
      onDone(true);
    } catch (err) {
      if (err instanceof ApiError && err.details.length) setErrors(Object.fromEntries(err.details.map((d) => [(d.path ?? '').split('.')[0] ?? '', d.message ?? ''])));
      else setError(err);
    }
  };
  const field = (name: FieldName | 'id') => {
    const id = `${prefix}-${name}`;
    return html`<${Field} id=${id} label=${t(name)} error=${errors[name]}>
      <input id=${id} value=${(draft[name] as string | null | undefined) ?? ''} onInput=${(e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })} ...${invalid(id, errors[name])} />
    <//>`;
  };
  return html`<section class="panel" aria-labelledby=${`${prefix}-title`}>
    <h2 id=${`${prefix}-title`}>${fresh ? t('add') : t('edit', { name: shop.name || shop.id })}</h2>
    <form onSubmit=${save}>
      <div class="row">${fresh ? field('id') : null}${Fields.map(field)}</div>
      <${ErrorMessage} error=${error} />
      <div class="actions"><button type="submit">${t('save')}</button><button type="button" class="secondary" onClick=${() => onDone(false)}>${t('cancel')}</button></div>
    </form>
  </section>`;
}
