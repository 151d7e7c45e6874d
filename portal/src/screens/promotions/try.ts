import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useFormat } from '../../format.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, useId } from '../../ui.js';
import { ShopPicker } from '../shop-picker.js';

interface Evaluation {
  checkoutInfo: { lineItems: Array<{ id: string; type: string; name: string; amount: number; totalPrice: number }>; price: { price: number }; currency?: string };
  rules: Array<{ ruleID: string; groupID: string; conditionHeld: boolean; granted: number; skippedReason?: string }>;
}

const words = {
  de: {
    title: 'An einem Warenkorb ausprobieren',
    items: 'Artikel (je Zeile: SKU Menge)',
    run: 'Ausprobieren',
    item: 'Position',
    amount: 'Menge',
    total: 'Summe',
    rule: 'Regel',
    held: 'Bedingung erfüllt',
    granted: 'Rabatt',
    yes: 'ja',
    no: 'nein',
    result: 'Ergebnis',
  },
  en: {
    title: 'Try on a cart',
    items: 'Items (one per line: SKU quantity)',
    run: 'Try',
    item: 'Line',
    amount: 'Quantity',
    total: 'Total',
    rule: 'Rule',
    held: 'Condition held',
    granted: 'Discount',
    yes: 'yes',
    no: 'no',
    result: 'Result',
  },
};

/** Prices a cart with the configuration (active or not) through the evaluate operation, rule by rule. */
export function TryOnCart({ api, id }: { api: ProjectApi; id: number }) {
  const t = useWords(words);
  const f = useFormat();
  const itemsId = useId('items');
  const [shop, setShop] = useState('');
  const [items, setItems] = useState('');
  const [result, setResult] = useState<Evaluation | null>(null);
  const [error, setError] = useState<unknown>();
  const run = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    const cart = items
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter(([sku]) => sku)
      .map(([sku, amount], i) => ({ id: `line-${i + 1}`, sku, amount: Number(amount ?? 1) || 1 }));
    try {
      setResult(await api.send<Evaluation>('POST', `/promotions/configurations/${id}/evaluate`, { shopID: shop, items: cart }));
    } catch (err) {
      setError(err);
    }
  };
  const currency = result?.checkoutInfo.currency ?? 'EUR';
  return html`<section class="panel" aria-labelledby="try-title">
    <h2 id="try-title">${t('title')}</h2>
    <form onSubmit=${run}>
      <${ShopPicker} api=${api} value=${shop} onChange=${setShop} />
      <${Field} id=${itemsId} label=${t('items')}><textarea id=${itemsId} rows="4" value=${items} onInput=${(e: Event) => setItems((e.target as HTMLTextAreaElement).value)}></textarea><//>
      <button type="submit">${t('run')}</button>
    </form>
    <${ErrorMessage} error=${error} />
    ${result
      ? html`<div aria-live="polite">
          <h3>${t('result')}</h3>
          <table>
            <thead><tr><th scope="col">${t('item')}</th><th scope="col" class="num">${t('amount')}</th><th scope="col" class="num">${t('total')}</th></tr></thead>
            <tbody>${result.checkoutInfo.lineItems.map((l) => html`<tr><td>${l.name}</td><td class="num">${l.amount}</td><td class="num">${f.money(l.totalPrice, currency)}</td></tr>`)}</tbody>
            <tfoot><tr><th scope="row" colspan="2">${t('total')}</th><td class="num">${f.money(result.checkoutInfo.price.price, currency)}</td></tr></tfoot>
          </table>
          <table>
            <thead><tr><th scope="col">${t('rule')}</th><th scope="col">${t('held')}</th><th scope="col" class="num">${t('granted')}</th></tr></thead>
            <tbody>${result.rules.map((r) => html`<tr><td>${r.groupID} / ${r.ruleID}</td><td>${r.conditionHeld ? t('yes') : t('no')}${r.skippedReason ? ` (${r.skippedReason})` : ''}</td><td class="num">${f.money(r.granted, currency)}</td></tr>`)}</tbody>
          </table>
        </div>`
      : null}
  </section>`;
}
