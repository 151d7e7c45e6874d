import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { Pagination, ProjectApi } from '../api.js';
import { DateField, useDateError } from '../date-field.js';
import { isoDay, useFormat } from '../format.js';
import { useWords } from '../i18n.js';
import { useNames } from '../names.js';
import { ErrorMessage, Loading, Pager, saveBlob, useId, useLoad } from '../ui.js';
import type { ScreenProps } from './index.js';
import { ShopPicker } from './shop-picker.js';

/**
 * Orders: filtered by shop and date range (days in the browser's time zone), a page at a time; an
 * order's lines, taxes, payments and fiscal reference, and its receipt shown in the page (the PDF the
 * API makes) and downloadable.
 */
interface OrderLine {
  id: string;
  name: string;
  type: string;
  amount: number;
  taxRate: string;
  price: number;
  totalPrice: number;
}

interface Order {
  id: string;
  shopID: string;
  shop: { name?: string };
  sequenceNumber: number;
  finalizedAt: string;
  state: string;
  paymentMethod: string;
  currency: string;
  price: { price: number; netPrice: number; tax: Record<string, number>; taxNet: Record<string, number>; taxPre: Record<string, number> };
  lineItems: OrderLine[];
  payments: Array<{ method: string; state: string; paidAmount: number; currency: string }>;
  fiscalReference?: {
    securityDeviceModule: { serialNumber: string; signatureAlgorithm: string };
    clientSerialNumber: string;
    transactionNumber: number;
    logs: Array<{ timestamp: string; counter: number; processType: string; processData: string; error?: string }>;
  };
  links: { receipt?: { href: string } };
}

interface OrderPage {
  resources: Order[];
  pagination: Pagination;
}

const words = {
  de: {
    from: 'Von',
    to: 'Bis',
    search: 'Suchen',
    found: { one: '{n} Bestellung', other: '{n} Bestellungen' },
    backwards: '„Bis“ liegt vor „Von“.',
    none: 'Keine Bestellung in diesem Zeitraum.',
    when: 'Zeit',
    shop: 'Shop',
    number: 'Nr.',
    method: 'Zahlart',
    total: 'Summe',
    open: 'Bestellung {n} öffnen',
    pageOf: 'Seite {page} von {pages}',
    back: 'Zurück zur Liste',
    order: 'Bestellung {n} · {shop}',
    lines: 'Positionen',
    item: 'Artikel',
    amount: 'Menge',
    unit: 'Einzelpreis',
    rate: 'MwSt.',
    taxes: 'Steuern',
    net: 'Netto',
    tax: 'Steuer',
    gross: 'Brutto',
    payments: 'Zahlungen',
    state: 'Status',
    fiscal: 'Fiskalisierung (TSE)',
    serial: 'TSE-Seriennummer',
    client: 'Kasse (Client)',
    transaction: 'Transaktionsnummer',
    counter: 'Signaturzähler',
    unsigned: 'Noch nicht signiert (oder ohne TSE).',
    receipt: 'Beleg',
    showReceipt: 'Beleg anzeigen',
    downloadReceipt: 'Beleg herunterladen',
    receiptFrame: 'Beleg der Bestellung {n} (PDF)',
  },
  en: {
    from: 'From',
    to: 'To',
    search: 'Search',
    found: { one: '{n} order', other: '{n} orders' },
    backwards: '“To” is before “From”.',
    none: 'No order in this period.',
    when: 'Time',
    shop: 'Shop',
    number: 'No.',
    method: 'Payment method',
    total: 'Total',
    open: 'Open order {n}',
    pageOf: 'Page {page} of {pages}',
    back: 'Back to the list',
    order: 'Order {n} · {shop}',
    lines: 'Lines',
    item: 'Item',
    amount: 'Quantity',
    unit: 'Unit price',
    rate: 'VAT',
    taxes: 'Taxes',
    net: 'Net',
    tax: 'Tax',
    gross: 'Gross',
    payments: 'Payments',
    state: 'State',
    fiscal: 'Fiscalization (TSE)',
    serial: 'TSE serial number',
    client: 'Till (client)',
    transaction: 'Transaction number',
    counter: 'Signature counter',
    unsigned: 'Not signed yet (or no TSE).',
    receipt: 'Receipt',
    showReceipt: 'Show receipt',
    downloadReceipt: 'Download receipt',
    receiptFrame: 'Receipt of order {n} (PDF)',
  },
};

const PerPage = 25;

/** Midnight of a `YYYY-MM-DD` day in the browser's time zone, as an instant. */
const dayStart = (day: string) => new Date(`${day}T00:00:00`).toISOString();
const dayAfter = (day: string) => {
  const d = new Date(`${day}T00:00:00`);
  d.setDate(d.getDate() + 1);
  return d.toISOString();
};

export function Orders({ api }: ScreenProps) {
  const t = useWords(words);
  const f = useFormat();
  const names = useNames();
  const notADate = useDateError();
  const today = isoDay(new Date());
  const [filter, setFilter] = useState({ shop: '', from: today, to: today, page: 0 });
  const [draft, setDraft] = useState<{ shop: string; from: string | null; to: string | null }>(filter);
  const [errors, setErrors] = useState<{ from?: string; to?: string }>({});
  const [open, setOpen] = useState<string | null>(null);
  const ids = { from: useId('from'), to: useId('to') };

  const list = useLoad(
    (signal) => {
      const query = new URLSearchParams({ from: dayStart(filter.from), to: dayAfter(filter.to), page: String(filter.page), perPage: String(PerPage) });
      if (filter.shop) query.set('shopID', filter.shop);
      return api.get<OrderPage>(`/orders?${query}`, { signal });
    },
    [api, filter],
  );

  if (open) return html`<${OrderDetail} api=${api} id=${open} onBack=${() => setOpen(null)} />`;

  const submit = (event: Event) => {
    event.preventDefault();
    const { shop, from, to } = draft;
    const wrong = { from: from ? undefined : notADate, to: to ? (from && to < from ? t('backwards') : undefined) : notADate };
    setErrors(wrong);
    if (from && to && !wrong.from && !wrong.to) setFilter({ shop, from, to, page: 0 });
  };
  const pages = list.data?.pagination.totalPages ?? 0;

  return html`<div>
    <form class="toolbar" onSubmit=${submit} role="search">
      <${ShopPicker} api=${api} value=${draft.shop} onChange=${(shop: string) => setDraft({ ...draft, shop })} allowAll />
      <${DateField} id=${ids.from} label=${t('from')} day=${draft.from} error=${errors.from} onDay=${(from: string | null) => setDraft({ ...draft, from })} />
      <${DateField} id=${ids.to} label=${t('to')} day=${draft.to} error=${errors.to} onDay=${(to: string | null) => setDraft({ ...draft, to })} />
      <button type="submit">${t('search')}</button>
    </form>
    <${ErrorMessage} error=${list.error} />
    <${Loading} when=${list.loading && !list.data} />
    ${list.data
      ? html`<div class="panel">
          <p role="status">${list.data.pagination.totalItems ? t('found', { n: list.data.pagination.totalItems }) : t('none')}</p>
          ${list.data.resources.length
            ? html`<table>
                <thead><tr><th scope="col">${t('when')}</th><th scope="col">${t('shop')}</th><th scope="col" class="num">${t('number')}</th><th scope="col">${t('method')}</th><th scope="col" class="num">${t('total')}</th></tr></thead>
                <tbody>
                  ${list.data.resources.map(
                    (o) => html`<tr>
                      <td>${f.dateTime(o.finalizedAt)}</td>
                      <td>${o.shop.name || o.shopID}</td>
                      <td class="num"><button type="button" class="link" aria-label=${t('open', { n: o.sequenceNumber })} onClick=${() => setOpen(o.id)}>${o.sequenceNumber}</button></td>
                      <td>${names.paymentMethod(o.paymentMethod)}</td>
                      <td class="num">${f.money(o.price.price, o.currency)}</td>
                    </tr>`,
                  )}
                </tbody>
              </table>`
            : null}
          <${Pager} page=${filter.page} pages=${pages} label=${t('pageOf', { page: filter.page + 1, pages })} onPage=${(page: number) => setFilter({ ...filter, page })} />
        </div>`
      : null}
  </div>`;
}

function OrderDetail({ api, id, onBack }: { api: ProjectApi; id: string; onBack(): void }) {
  const t = useWords(words);
  const f = useFormat();
  const names = useNames();
  const order = useLoad((signal) => api.get<Order>(`/orders/${encodeURIComponent(id)}`, { signal }), [api, id]);
  const o = order.data;
  return html`<div>
    <p><button type="button" class="secondary" onClick=${onBack}>${t('back')}</button></p>
    <${ErrorMessage} error=${order.error} />
    <${Loading} when=${order.loading && !o} />
    ${o
      ? html`<section class="panel" aria-labelledby="order-title">
          <h2 id="order-title">${t('order', { n: o.sequenceNumber, shop: o.shop.name || o.shopID })}</h2>
          <p>${f.dateTime(o.finalizedAt)} · ${names.orderState(o.state)} · ${f.money(o.price.price, o.currency)}</p>
          <h3>${t('lines')}</h3>
          <table>
            <thead><tr><th scope="col">${t('item')}</th><th scope="col" class="num">${t('amount')}</th><th scope="col" class="num">${t('unit')}</th><th scope="col" class="num">${t('rate')}</th><th scope="col" class="num">${t('total')}</th></tr></thead>
            <tbody>${o.lineItems.map((l) => html`<tr><td>${l.name}</td><td class="num">${l.amount}</td><td class="num">${f.money(l.price, o.currency)}</td><td class="num">${f.number(l.taxRate)} %</td><td class="num">${f.money(l.totalPrice, o.currency)}</td></tr>`)}</tbody>
          </table>
          <h3>${t('taxes')}</h3>
          <table>
            <thead><tr><th scope="col">${t('rate')}</th><th scope="col" class="num">${t('net')}</th><th scope="col" class="num">${t('tax')}</th><th scope="col" class="num">${t('gross')}</th></tr></thead>
            <tbody>${Object.keys(o.price.taxPre).sort().map((rate) => html`<tr><td>${f.number(rate)} %</td><td class="num">${f.money(o.price.taxNet[rate], o.currency)}</td><td class="num">${f.money(o.price.tax[rate], o.currency)}</td><td class="num">${f.money(o.price.taxPre[rate], o.currency)}</td></tr>`)}</tbody>
          </table>
          <h3>${t('payments')}</h3>
          <table>
            <thead><tr><th scope="col">${t('method')}</th><th scope="col">${t('state')}</th><th scope="col" class="num">${t('total')}</th></tr></thead>
            <tbody>${o.payments.map((p) => html`<tr><td>${names.paymentMethod(p.method)}</td><td>${names.paymentState(p.state)}</td><td class="num">${f.money(p.paidAmount, p.currency)}</td></tr>`)}</tbody>
          </table>
          <h3>${t('fiscal')}</h3>
          ${o.fiscalReference
            ? html`<dl class="facts">
                <dt>${t('serial')}</dt><dd class="mono">${o.fiscalReference.securityDeviceModule.serialNumber}</dd>
                <dt>${t('client')}</dt><dd>${o.fiscalReference.clientSerialNumber}</dd>
                <dt>${t('transaction')}</dt><dd>${o.fiscalReference.transactionNumber}</dd>
                <dt>${t('counter')}</dt><dd>${o.fiscalReference.logs.map((l) => l.counter).join(', ')}</dd>
                ${o.fiscalReference.logs.filter((l) => l.error).map((l) => html`<dt>TSE</dt><dd class="error-text">${l.error}</dd>`)}
              </dl>`
            : html`<p class="muted">${t('unsigned')}</p>`}
          ${o.links.receipt ? html`<${Receipt} api=${api} order=${o} />` : null}
        </section>`
      : null}
  </div>`;
}

/** The receipt PDF, fetched with the session and shown in a frame (a blob: URL), or saved. */
function Receipt({ api, order }: { api: ProjectApi; order: Order }) {
  const t = useWords(words);
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  useEffect(() => () => void (url && URL.revokeObjectURL(url)), [url]);
  const fetchPdf = async () => {
    const response = await fetch(api.url(`/orders/${encodeURIComponent(order.id)}/receipt`), { credentials: 'same-origin' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response.blob();
  };
  const show = async () => {
    try {
      setUrl(URL.createObjectURL(await fetchPdf()));
    } catch (err) {
      setError(err);
    }
  };
  const download = async () => {
    try {
      saveBlob(await fetchPdf(), `beleg-${order.shopID}-${order.sequenceNumber}.pdf`);
    } catch (err) {
      setError(err);
    }
  };
  return html`<div>
    <h3>${t('receipt')}</h3>
    <div class="actions">
      <button type="button" onClick=${show}>${t('showReceipt')}</button>
      <button type="button" class="secondary" onClick=${download}>${t('downloadReceipt')}</button>
    </div>
    <${ErrorMessage} error=${error} />
    ${url ? html`<iframe class="receipt" src=${url} title=${t('receiptFrame', { n: order.sequenceNumber })}></iframe>` : null}
  </div>`;
}
