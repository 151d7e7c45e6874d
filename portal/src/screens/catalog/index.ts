import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useFormat } from '../../format.js';
import { useNames } from '../../names.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, Loading, useId, useLoad } from '../../ui.js';
import type { ScreenProps } from '../index.js';
import { ImportProducts } from './import.js';

/** Catalog: products searched by name, SKU or code; a product's prices per category and its availability per shop; imports. */
interface Product {
  sku: string;
  name: string;
  taxCategory?: string;
  saleRestriction?: string | null;
  codes?: Array<{ code: string }>;
}

const words = {
  de: {
    search: 'Produkte suchen',
    query: 'Name, SKU oder Code',
    find: 'Suchen',
    none: 'Kein Produkt gefunden.',
    sku: 'SKU',
    name: 'Name',
    tax: 'Steuerkategorie',
    restriction: 'Verkaufsbeschränkung',
    show: 'Produkt {sku} anzeigen',
    prices: 'Preise je Kategorie',
    category: 'Kategorie',
    tier: 'Stufe',
    price: 'Preis',
    from: 'ab Menge',
    noPrices: 'Keine Preise.',
    availability: 'Verfügbarkeit je Shop',
    shop: 'Shop',
    value: 'Verfügbarkeit',
    noAvailability: 'Keine Verfügbarkeiten erfasst.',
  },
  en: {
    search: 'Search products',
    query: 'Name, SKU or code',
    find: 'Search',
    none: 'No product found.',
    sku: 'SKU',
    name: 'Name',
    tax: 'Tax category',
    restriction: 'Sale restriction',
    show: 'Show product {sku}',
    prices: 'Prices per category',
    category: 'Category',
    tier: 'Tier',
    price: 'Price',
    from: 'from quantity',
    noPrices: 'No prices.',
    availability: 'Availability per shop',
    shop: 'Shop',
    value: 'Availability',
    noAvailability: 'No availability recorded.',
  },
};

export function Catalog({ api, session }: ScreenProps) {
  const t = useWords(words);
  const names = useNames();
  const id = useId('q');
  const [draft, setDraft] = useState('');
  const [query, setQuery] = useState('');
  const [round, setRound] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const found = useLoad(
    (signal) => api.get<{ products: Product[] }>(`/products?limit=50${query ? `&q=${encodeURIComponent(query)}` : ''}`, { signal, headers: { accept: 'application/vnd.service.product.list.v2+json' } }),
    [api, query, round],
  );

  return html`<div>
    <section class="panel" aria-labelledby="search-title">
      <h2 id="search-title">${t('search')}</h2>
      <form class="toolbar" role="search" onSubmit=${(e: Event) => (e.preventDefault(), setQuery(draft.trim()), setOpen(null))}>
        <${Field} id=${id} label=${t('query')}><input id=${id} type="search" value=${draft} onInput=${(e: Event) => setDraft((e.target as HTMLInputElement).value)} /><//>
        <button type="submit">${t('find')}</button>
      </form>
      <${ErrorMessage} error=${found.error} />
      <${Loading} when=${found.loading && !found.data} />
      ${found.data && !found.data.products.length ? html`<p>${t('none')}</p>` : null}
      ${found.data?.products.length
        ? html`<table>
            <thead><tr><th scope="col">${t('sku')}</th><th scope="col">${t('name')}</th><th scope="col">${t('tax')}</th><th scope="col">${t('restriction')}</th></tr></thead>
            <tbody>
              ${found.data.products.map(
                (p) => html`<tr>
                  <td><button type="button" class="link" aria-label=${t('show', { sku: p.sku })} onClick=${() => setOpen(p.sku)}>${p.sku}</button></td>
                  <td>${p.name}</td><td>${p.taxCategory ?? ''}</td><td>${names.saleRestriction(p.saleRestriction)}</td>
                </tr>`,
              )}
            </tbody>
          </table>`
        : null}
    </section>
    ${open ? html`<${ProductDetail} api=${api} sku=${open} />` : null}
    ${session.permissions.includes('productsWrite') ? html`<${ImportProducts} api=${api} onImported=${() => setRound(round + 1)} />` : null}
  </div>`;
}

function ProductDetail({ api, sku }: { api: ProjectApi; sku: string }) {
  const t = useWords(words);
  const f = useFormat();
  const names = useNames();
  const path = encodeURIComponent(sku);
  const prices = useLoad((signal) => api.get<Array<{ pricings: Array<{ category: string; prices: Array<{ price: string; currency: string; tier: string; quantity: number }> }> }>>(`/pricing/v2/sku/${path}`, { signal }), [api, sku]);
  const availability = useLoad((signal) => api.get<{ availabilities: Array<{ shopID: string; value: string }> }>(`/availabilites/sku/${path}`, { signal }), [api, sku]);
  const pricings = prices.data?.flatMap((p) => p.pricings) ?? [];
  return html`<section class="panel" aria-labelledby="product-title">
    <h2 id="product-title">${sku}</h2>
    <h3>${t('prices')}</h3>
    <${ErrorMessage} error=${prices.error} />
    ${pricings.length
      ? html`<table>
          <thead><tr><th scope="col">${t('category')}</th><th scope="col">${t('tier')}</th><th scope="col" class="num">${t('from')}</th><th scope="col" class="num">${t('price')}</th></tr></thead>
          <tbody>${pricings.flatMap((c) => c.prices.map((p) => html`<tr><td>${c.category}</td><td>${p.tier}</td><td class="num">${p.quantity}</td><td class="num">${f.price(p.price, p.currency)}</td></tr>`))}</tbody>
        </table>`
      : prices.data
        ? html`<p>${t('noPrices')}</p>`
        : null}
    <h3>${t('availability')}</h3>
    <${ErrorMessage} error=${availability.error} />
    ${availability.data?.availabilities.length
      ? html`<table>
          <thead><tr><th scope="col">${t('shop')}</th><th scope="col">${t('value')}</th></tr></thead>
          <tbody>${availability.data.availabilities.map((a) => html`<tr><td>${a.shopID}</td><td>${names.availability(a.value)}</td></tr>`)}</tbody>
        </table>`
      : availability.data
        ? html`<p>${t('noAvailability')}</p>`
        : null}
  </section>`;
}
