import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useFormat } from '../../format.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, Loading, useId, useLoad } from '../../ui.js';
import type { ScreenProps } from '../index.js';
import { EditCoupon, type Coupon } from './edit.js';

const words = {
  de: {
    none: 'Noch kein Gutschein.',
    name: 'Name',
    code: 'Code',
    valid: 'Gültig',
    edit: 'Gutschein {name} bearbeiten',
    add: 'Neuer Gutschein',
    newName: 'Name des neuen Gutscheins',
    create: 'Anlegen',
    back: 'Zurück zur Liste',
  },
  en: {
    none: 'No coupon yet.',
    name: 'Name',
    code: 'Code',
    valid: 'Valid',
    edit: 'Edit coupon {name}',
    add: 'New coupon',
    newName: 'Name of the new coupon',
    create: 'Create',
    back: 'Back to the list',
  },
};

/** Coupons: the project's coupons; one edited at a time (its ETag guards against edits made meanwhile). */
export function Coupons({ api, session }: ScreenProps) {
  const t = useWords(words);
  const f = useFormat();
  const [open, setOpen] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  const [error, setError] = useState<unknown>();
  const id = useId('new-coupon');
  const list = useLoad((signal) => api.get<{ coupons: Coupon[] }>('/coupons', { signal, headers: { 'accept-language': 'de' } }), [api, open]);
  const canWrite = session.permissions.includes('couponsWrite');

  if (open) return html`<div><p><button type="button" class="secondary" onClick=${() => setOpen(null)}>${t('back')}</button></p><${EditCoupon} api=${api} id=${open} canWrite=${canWrite} /></div>`;

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const coupon = await api.send<Coupon>('POST', '/coupons', { channels: ['app', 'sco'], type: 'digital', translations: { name: { de: newName }, description: {} } });
      setNewName('');
      setOpen(coupon.id);
    } catch (err) {
      setError(err);
    }
  };

  return html`<div>
    <section class="panel">
      <${ErrorMessage} error=${list.error} />
      <${Loading} when=${list.loading && !list.data} />
      ${list.data && !list.data.coupons.length ? html`<p>${t('none')}</p>` : null}
      ${list.data?.coupons.length
        ? html`<table>
            <thead><tr><th scope="col">${t('name')}</th><th scope="col">${t('code')}</th><th scope="col">${t('valid')}</th></tr></thead>
            <tbody>${list.data.coupons.map(
              (c) => html`<tr>
                <td><button type="button" class="link" aria-label=${t('edit', { name: c.name || c.id })} onClick=${() => setOpen(c.id)}>${c.name || c.id}</button></td>
                <td>${c.code ?? ''}</td>
                <td>${c.validFrom || c.validUntil ? `${f.date(c.validFrom)} – ${f.date(c.validUntil)}` : ''}</td>
              </tr>`,
            )}</tbody>
          </table>`
        : null}
    </section>
    ${canWrite
      ? html`<section class="panel" aria-labelledby="new-coupon-title">
          <h2 id="new-coupon-title">${t('add')}</h2>
          <form class="toolbar" onSubmit=${create}>
            <${Field} id=${id} label=${t('newName')}><input id=${id} required value=${newName} onInput=${(e: Event) => setNewName((e.target as HTMLInputElement).value)} /><//>
            <button type="submit">${t('create')}</button>
          </form>
          <${ErrorMessage} error=${error} />
        </section>`
      : null}
  </div>`;
}
