import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { Pagination, ProjectApi } from '../../api.js';
import { downloadFile } from '../../download.js';
import { useFormat } from '../../format.js';
import { useWords } from '../../i18n.js';
import { useNames } from '../../names.js';
import { ErrorMessage, Loading, Pager, useLoad } from '../../ui.js';
import type { ScreenProps } from '../index.js';
import { ShopPicker } from '../shop-picker.js';
import { StartReport } from './start-report.js';
import { Schedules } from './schedules.js';
import { useFormatName, type ClosingRef } from './names.js';

/**
 * Closings: a shop's closings by sequence number and date, each with its totals per tax rate and
 * payment method and every log to download (the DSFinV-K zip, the aggregated receipts); a report
 * job started and watched until it is done; the shop's closing schedules edited.
 */
export interface ClosingSummary {
  shopID: string;
  sequenceNumber: number;
  createdAt: string;
  cutOffAt: string;
  orderCount: number;
  currency: string;
  total: number;
  tseFailures: number;
  shop: { name?: string };
  taxShares: Array<{ rate: number; net: number; tax: number; total: number }>;
  shareByPaymentMethod: Array<{ paymentMethod: string; amount: number }>;
  logs: Array<{ id: number; format: string; state: string; kind: string }>;
}

const words = {
  de: {
    list: 'Abschlüsse',
    none: 'Noch kein Abschluss.',
    number: 'Nr.',
    shop: 'Shop',
    date: 'Datum',
    orders: 'Bestellungen',
    total: 'Summe',
    open: 'Abschluss {n} öffnen',
    back: 'Zurück zur Liste',
    closing: 'Abschluss {n} · {shop}',
    byRate: 'Nach Steuersatz',
    rate: 'Satz',
    net: 'Netto',
    tax: 'Steuer',
    gross: 'Brutto',
    byMethod: 'Nach Zahlart',
    method: 'Zahlart',
    amount: 'Betrag',
    logs: 'Dateien',
    download: '{format} herunterladen',
    notReady: '{format}: wird noch erstellt',
    tse: 'Ohne TSE-Signatur: {n}',
    cutOff: 'Bestellungen bis {time}',
    orderCount: { one: '{n} Bestellung', other: '{n} Bestellungen' },
  },
  en: {
    list: 'Closings',
    none: 'No closing yet.',
    number: 'No.',
    shop: 'Shop',
    date: 'Date',
    orders: 'Orders',
    total: 'Total',
    open: 'Open closing {n}',
    back: 'Back to the list',
    closing: 'Closing {n} · {shop}',
    byRate: 'By tax rate',
    rate: 'Rate',
    net: 'Net',
    tax: 'Tax',
    gross: 'Gross',
    byMethod: 'By payment method',
    method: 'Payment method',
    amount: 'Amount',
    logs: 'Files',
    download: 'Download {format}',
    notReady: '{format}: still being made',
    tse: 'Without TSE signature: {n}',
    cutOff: 'Orders up to {time}',
    orderCount: { one: '{n} order', other: '{n} orders' },
  },
};

const PerPage = 20;

export function Closings({ api, session }: ScreenProps) {
  const t = useWords(words);
  const f = useFormat();
  const [shop, setShop] = useState('');
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState<ClosingRef | null>(null);
  const canWrite = session.permissions.includes('closingsWrite');
  const list = useLoad(
    (signal) => {
      const query = new URLSearchParams({ page: String(page), perPage: String(PerPage) });
      if (shop) query.set('shopID', shop);
      return api.get<{ closings: ClosingSummary[]; pagination: Pagination }>(`/closings?${query}`, { signal });
    },
    [api, shop, page],
  );

  if (open) return html`<${ClosingDetail} api=${api} at=${open} onBack=${() => (setOpen(null), list.reload())} />`;
  const pages = list.data?.pagination.totalPages ?? 0;

  return html`<div>
    <div class="toolbar"><${ShopPicker} api=${api} value=${shop} onChange=${(s: string) => (setShop(s), setPage(0))} allowAll /></div>
    ${canWrite ? html`<${StartReport} api=${api} shop=${shop} onDone=${list.reload} onOpen=${setOpen} />` : null}
    <section class="panel" aria-labelledby="closings-title">
      <h2 id="closings-title">${t('list')}</h2>
      <${ErrorMessage} error=${list.error} />
      <${Loading} when=${list.loading && !list.data} />
      ${list.data && !list.data.closings.length ? html`<p>${t('none')}</p>` : null}
      ${list.data?.closings.length
        ? html`<table>
            <thead><tr><th scope="col">${t('shop')}</th><th scope="col" class="num">${t('number')}</th><th scope="col">${t('date')}</th><th scope="col" class="num">${t('orders')}</th><th scope="col" class="num">${t('total')}</th></tr></thead>
            <tbody>
              ${list.data.closings.map(
                (c) => html`<tr>
                  <td>${c.shop.name || c.shopID}</td>
                  <td class="num"><button type="button" class="link" aria-label=${t('open', { n: c.sequenceNumber })} onClick=${() => setOpen({ shopID: c.shopID, sequenceNumber: c.sequenceNumber })}>${c.sequenceNumber}</button></td>
                  <td>${f.dateTime(c.createdAt)}</td>
                  <td class="num">${c.orderCount}</td>
                  <td class="num">${f.money(c.total, c.currency)}</td>
                </tr>`,
              )}
            </tbody>
          </table>`
        : null}
      <${Pager} page=${page} pages=${pages} label=${`${page + 1} / ${pages}`} onPage=${setPage} />
    </section>
    ${shop ? html`<${Schedules} api=${api} shop=${shop} canWrite=${canWrite} />` : null}
  </div>`;
}

/** One closing, loaded again every 2 s while one of its logs is still being made. */
function ClosingDetail({ api, at, onBack }: { api: ProjectApi; at: ClosingRef; onBack(): void }) {
  const t = useWords(words);
  const f = useFormat();
  const names = useNames();
  const formatName = useFormatName();
  const [error, setError] = useState<unknown>();
  const loaded = useLoad((signal) => api.get<ClosingSummary>(`/closings/shops/${encodeURIComponent(at.shopID)}/sequenceNumbers/${at.sequenceNumber}`, { signal }), [api, at.shopID, at.sequenceNumber]);
  const c = loaded.data;
  const pending = c?.logs.some((l) => l.state !== 'present');
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(loaded.reload, 2000);
    return () => clearTimeout(timer);
  }, [c]);
  if (!c) return html`<div><p><button type="button" class="secondary" onClick=${onBack}>${t('back')}</button></p><${ErrorMessage} error=${loaded.error} /><${Loading} when=${loaded.loading} /></div>`;
  const download = (log: ClosingSummary['logs'][number]) => async () => {
    try {
      await downloadFile(api.url(`/closings/logs/${log.id}`), `closing-${c.shopID}-${c.sequenceNumber}-${log.format}`);
    } catch (err) {
      setError(err);
    }
  };
  const name = (log: ClosingSummary['logs'][number]) => formatName(log.kind === 'batch' ? `batch_${log.format}` : log.format);
  return html`<div>
    <p><button type="button" class="secondary" onClick=${onBack}>${t('back')}</button></p>
    <section class="panel" aria-labelledby="closing-title">
      <h2 id="closing-title">${t('closing', { n: c.sequenceNumber, shop: c.shop.name || c.shopID })}</h2>
      <p>${f.dateTime(c.createdAt)} · ${t('cutOff', { time: f.dateTime(c.cutOffAt) })} · ${t('orderCount', { n: c.orderCount })} · ${f.money(c.total, c.currency)}</p>
      ${c.tseFailures ? html`<p class="error-text">${t('tse', { n: c.tseFailures })}</p>` : null}
      <h3>${t('byRate')}</h3>
      <table>
        <thead><tr><th scope="col">${t('rate')}</th><th scope="col" class="num">${t('net')}</th><th scope="col" class="num">${t('tax')}</th><th scope="col" class="num">${t('gross')}</th></tr></thead>
        <tbody>${c.taxShares.map((s) => html`<tr><td>${f.number(s.rate)} %</td><td class="num">${f.money(s.net, c.currency)}</td><td class="num">${f.money(s.tax, c.currency)}</td><td class="num">${f.money(s.total, c.currency)}</td></tr>`)}</tbody>
      </table>
      <h3>${t('byMethod')}</h3>
      <table>
        <thead><tr><th scope="col">${t('method')}</th><th scope="col" class="num">${t('amount')}</th></tr></thead>
        <tbody>${c.shareByPaymentMethod.map((s) => html`<tr><td>${names.paymentMethod(s.paymentMethod)}</td><td class="num">${f.money(s.amount, c.currency)}</td></tr>`)}</tbody>
      </table>
      <h3>${t('logs')}</h3>
      <${ErrorMessage} error=${error} />
      <div class="actions">
        ${c.logs.map((log) =>
          log.state === 'present'
            ? html`<button type="button" class="secondary" onClick=${download(log)}>${t('download', { format: name(log) })}</button>`
            : html`<span class="muted">${t('notReady', { format: name(log) })}</span>`,
        )}
      </div>
    </section>
  </div>`;
}
