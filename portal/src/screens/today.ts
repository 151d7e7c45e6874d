import { html } from 'htm/preact';
import type { Pagination, ProjectApi } from '../api.js';
import { isoDay, useFormat } from '../format.js';
import { useWords } from '../i18n.js';
import { ErrorMessage, Loading, useLoad } from '../ui.js';
import type { ScreenProps } from './index.js';

interface OrderPage {
  resources: Array<{ shopID: string; shop: { name?: string }; finalizedAt: string; price: { price: number }; currency: string }>;
  pagination: Pagination;
}

const words = {
  de: {
    today: 'Heute je Shop',
    none: 'Heute noch kein Verkauf.',
    shop: 'Shop',
    orders: 'Bestellungen',
    sales: 'Umsatz',
    total: 'Gesamt',
    chart: 'Umsatz der letzten 14 Tage',
    day: 'Tag',
  },
  en: {
    today: 'Today per shop',
    none: 'No sale today yet.',
    shop: 'Shop',
    orders: 'Orders',
    sales: 'Sales',
    total: 'Total',
    chart: 'Sales of the last 14 days',
    day: 'Day',
  },
};

const Days = 14;

/** The final orders of the last 14 days (browser's time zone), read page by page from the orders API. */
async function lastDays(api: ProjectApi, signal: AbortSignal) {
  const start = new Date();
  start.setHours(0, 0, 0, 0);
  start.setDate(start.getDate() - (Days - 1));
  const end = new Date();
  end.setHours(24, 0, 0, 0);
  const orders: OrderPage['resources'] = [];
  for (let page = 0; ; page++) {
    const query = new URLSearchParams({ from: start.toISOString(), to: end.toISOString(), page: String(page), perPage: '10000' });
    const answer = await api.get<OrderPage>(`/orders?${query}`, { signal });
    orders.push(...answer.resources);
    if (page + 1 >= answer.pagination.totalPages) break;
  }
  const days = Array.from({ length: Days }, (_, i) => {
    const d = new Date(start);
    d.setDate(d.getDate() + i);
    return { day: isoDay(d), date: d, total: 0 };
  });
  const byDay = new Map(days.map((d) => [d.day, d]));
  const today = new Map<string, { name: string; count: number; total: number }>();
  const todayKey = isoDay(new Date());
  for (const o of orders) {
    const key = isoDay(new Date(o.finalizedAt));
    const day = byDay.get(key);
    if (day) day.total += o.price.price;
    if (key === todayKey) {
      const shop = today.get(o.shopID) ?? { name: o.shop.name || o.shopID, count: 0, total: 0 };
      shop.count++;
      shop.total += o.price.price;
      today.set(o.shopID, shop);
    }
  }
  return { days, today: [...today.values()].sort((a, b) => b.total - a.total), currency: orders[0]?.currency ?? 'EUR' };
}

export function Today({ api }: ScreenProps) {
  const t = useWords(words);
  const f = useFormat();
  const data = useLoad((signal) => lastDays(api, signal), [api]);
  const d = data.data;
  const max = Math.max(1, ...(d?.days.map((x) => x.total) ?? [1]));
  const barWidth = 100 / Days;
  return html`<div>
    <${ErrorMessage} error=${data.error} />
    <${Loading} when=${data.loading && !d} />
    ${d
      ? html`<section class="panel" aria-labelledby="today-title">
            <h2 id="today-title">${t('today')}</h2>
            ${d.today.length
              ? html`<table>
                  <thead><tr><th scope="col">${t('shop')}</th><th scope="col" class="num">${t('orders')}</th><th scope="col" class="num">${t('sales')}</th></tr></thead>
                  <tbody>${d.today.map((s) => html`<tr><td>${s.name}</td><td class="num">${s.count}</td><td class="num">${f.money(s.total, d.currency)}</td></tr>`)}</tbody>
                  <tfoot><tr><th scope="row">${t('total')}</th><td class="num">${d.today.reduce((n, s) => n + s.count, 0)}</td><td class="num">${f.money(d.today.reduce((n, s) => n + s.total, 0), d.currency)}</td></tr></tfoot>
                </table>`
              : html`<p>${t('none')}</p>`}
          </section>
          <section class="panel" aria-labelledby="chart-title">
            <h2 id="chart-title">${t('chart')}</h2>
            <svg class="chart" viewBox="0 0 100 50" preserveAspectRatio="none" aria-hidden="true" focusable="false">
              ${d.days.map((x, i) => {
                const h = (x.total / max) * 48;
                return html`<rect x=${i * barWidth + barWidth * 0.15} y=${50 - h} width=${barWidth * 0.7} height=${h} />`;
              })}
            </svg>
            <table class="chart-table">
              <caption class="sr-only">${t('chart')}</caption>
              <thead><tr><th scope="col">${t('day')}</th><th scope="col" class="num">${t('sales')}</th></tr></thead>
              <tbody>${d.days.map((x) => html`<tr><td>${f.date(x.date)}</td><td class="num">${f.money(x.total, d.currency)}</td></tr>`)}</tbody>
            </table>
          </section>`
      : null}
  </div>`;
}
