import fc from 'fast-check';
import t from 'tap';
import { loadConfig } from '../src/config.js';
import { receiptLayout } from '../src/domain/receipt/layout.js';
import { readReceiptOrder, type ReceiptSettings } from '../src/domain/receipt/source.js';
import { checkoutPrice } from '../src/domain/tax.js';

const settings: ReceiptSettings = {
  currency: 'EUR',
  locale: 'de-DE',
  companyName: 'Müller Handels GmbH',
  taxNumber: '',
  vatID: '',
  companyAdress: { street: '', zip: '', city: '', country: '' },
};
const berlin = { timeZone: 'Europe/Berlin' };
const nbsp = (s: string) => s.replace(/\u00a0/g, ' ');

function order(lineItems: object[], extra: object = {}) {
  const price = checkoutPrice((lineItems as Array<{ totalPrice: number; taxRate?: string }>).flatMap((l) => (l.taxRate ? [{ totalPrice: l.totalPrice, taxRate: l.taxRate }] : [])));
  return readReceiptOrder({
    id: 'order-1', state: 'final', sequenceNumber: 7, finalizedAt: '2026-07-01T10:00:00.000Z', currency: 'EUR',
    shop: { name: 'Markt' }, checkoutDevice: { type: 'app' }, paymentMethod: 'cash', paidAmount: price.price,
    lineItems, price, ...extra,
  });
}

t.test('prints coupons as lines of their own, with the discount they took, if any', async (t) => {
  const layout = receiptLayout(order([
    { id: '1', name: 'Kaffee', amount: 1, price: 599, totalPrice: 599, taxRate: '7' },
    { id: 'c1', type: 'coupon', couponID: 'WELCOME', name: 'Willkommen', amount: 1, totalPrice: -100, taxRate: '7' },
    { id: 'c2', type: 'coupon', couponID: 'PAPER', amount: 1, totalPrice: 0 },
  ]), settings, berlin);
  const lines = layout.lines.map((l) => nbsp(`${l.kind}|${l.text}|${l.amount}|${l.taxMark}`));
  t.same(lines, ['item|Kaffee|5,99 €|A', 'coupon|Coupon: Willkommen|-1,00 €|A', 'coupon|Coupon: PAPER||']);
});

t.test('prints promotions with their percentage and price modifiers under the line they changed', async (t) => {
  const layout = receiptLayout(order([
    { id: '1', name: 'Käse', amount: 2, price: 250, totalPrice: 500, taxRate: '7', priceModifiers: [{ name: 'Happy Hour', method: 'promotion', action: 'add', price: 250 }] },
    { id: 'p', type: 'promotion', name: 'Käsetage', refersTo: '1', discountRuleID: 'r', discountPercentage: 10, amount: 1, totalPrice: -50, taxRate: '7' },
  ]), settings, berlin);
  t.same(layout.lines.map((l) => nbsp([l.text, l.amount, ...l.details].join('|'))), ['Käse|5,00 €|2 × 2,50 €|Happy Hour 2,50 €', 'Käsetage 10 %|-0,50 €']);
  t.same(layout.lines.map((l) => l.kind), ['item', 'discount']);
});

t.test('speaks English for other locales and formats in their way', async (t) => {
  const layout = receiptLayout(order([{ id: '1', name: 'Coffee', amount: 3, price: 123456, totalPrice: 370368, taxRate: '19' }], { currency: 'USD', paymentMethod: 'creditCardVisa' }), { ...settings, locale: 'en-US', currency: 'USD' }, { timeZone: 'America/New_York' });
  t.equal(layout.title, 'Receipt');
  t.same(layout.total, { label: 'TOTAL USD', amount: '$3,703.68' });
  t.same(layout.lines[0]!.details, ['3 × $1,234.56']);
  t.same(layout.sale[0], ['Date', 'Jul 1, 2026, 6:00:00 AM'], 'the time in the configured zone');
  t.same(layout.payment[0], ['Payment', 'Visa']);
});

t.test('computes the tax table from the lines when a PoS left the taxes out', async (t) => {
  const o = order([
    { id: '1', name: 'A', amount: 1, price: 119, totalPrice: 119, taxRate: '19' },
    { id: '2', name: 'B', amount: 1, price: 107, totalPrice: 107, taxRate: '7' },
  ]);
  const layout = receiptLayout({ ...o, price: { price: 226 } }, settings, berlin);
  t.same(layout.taxTable.rows.map((r) => nbsp(r.join('|'))), ['A 19 %|1,00 €|0,19 €|1,19 €', 'B 7 %|1,00 €|0,07 €|1,07 €']);
  t.same(nbsp(layout.taxTable.sum.join('|')), 'Summe|2,00 €|0,26 €|2,26 €');
});

t.test('prints coupon lines as the checkout writes them: no amount, no tax row of their own, whether a promotion redeemed them', async (t) => {
  // The checkout prices every line, coupons too: their "" rate is in the figures, at 0.
  const lineItems = [
    { id: '1', name: 'Kaffee', amount: 1, price: 599, totalPrice: 599, taxRate: '7' },
    { id: 'p', type: 'promotion', refersTo: '1', name: 'Kaffee -1 €', amount: 1, price: -100, totalPrice: -100, taxRate: '7', discountRuleID: 'r1', couponID: 'C1', discountType: 'absolute', discountValue: 100 },
    { id: 'c1', type: 'coupon', couponID: 'C1', name: 'Kaffee-Coupon', amount: 1, price: 0, totalPrice: 0, taxRate: '', redeemed: true },
    { id: 'c2', type: 'coupon', couponID: 'C2', name: 'Anderer Coupon', amount: 1, price: 0, totalPrice: 0, taxRate: '', redeemed: false },
  ];
  const layout = receiptLayout(readReceiptOrder({ id: 'o', state: 'final', currency: 'EUR', lineItems, price: checkoutPrice(lineItems), paidAmount: 499 }), settings, berlin);
  t.same(layout.lines.map((l) => nbsp([l.text, l.amount, l.taxMark, ...l.details].join('|'))), [
    'Kaffee|5,99 €|A', 'Kaffee -1 €|-1,00 €|A', 'Coupon: Kaffee-Coupon|||eingelöst', 'Coupon: Anderer Coupon|||nicht eingelöst',
  ]);
  t.same(layout.taxTable.rows.map((r) => nbsp(r.join('|'))), ['A 7 %|4,66 €|0,33 €|4,99 €'], 'one rate: the coupons\' empty one is no row');
});

t.test('prints what the figures leave of the total, and rates that are no number, without tax, so the table adds up to the total', async (t) => {
  const lineItems = [
    { id: '1', name: 'A', amount: 1, price: 119, totalPrice: 119, taxRate: '19' },
    { id: '2', name: 'B', amount: 1, price: 100, totalPrice: 100, taxRate: 'reduziert' },
  ];
  const incomplete = receiptLayout(readReceiptOrder({ id: 'o', state: 'final', lineItems, price: { price: 250, taxPre: { '19': 119 }, tax: { '19': 19 } } }), settings, berlin);
  t.same(incomplete.taxTable.rows.map((r) => nbsp(r.join('|'))), ['A 19 %|1,00 €|0,19 €|1,19 €', 'B ohne MwSt.|1,31 €|0,00 €|1,31 €']);
  t.same(nbsp(incomplete.taxTable.sum.join('|')), 'Summe|2,31 €|0,19 €|2,50 €', 'the sums row is the total');
  const computed = receiptLayout(readReceiptOrder({ id: 'o', state: 'final', lineItems, price: { price: 219 } }), settings, berlin);
  t.same(computed.taxTable.rows.map((r) => nbsp(r.join('|'))), ['A 19 %|1,00 €|0,19 €|1,19 €', 'B reduziert|1,00 €|0,00 €|1,00 €'], 'a rate that is no number takes no tax');
});

t.test('prints rates and payment methods named like members of every object as the text they are', async (t) => {
  const lineItems = [{ id: '1', name: 'A', amount: 1, price: 100, totalPrice: 100, taxRate: 'valueOf' }];
  const layout = receiptLayout(readReceiptOrder({ id: 'o', state: 'final', lineItems, paymentMethod: 'toString', paidAmount: 100, price: { price: 100, taxPre: { valueOf: 100 }, tax: {} } }), settings, berlin);
  t.same(layout.taxTable.rows.map((r) => nbsp(r.join('|'))), ['A valueOf|1,00 €|0,00 €|1,00 €']);
  t.same(layout.payment[0], ['Zahlungsart', 'toString']);
});

t.test('reads whatever an order document holds without failing: missing fields print as nothing', async (t) => {
  const layout = receiptLayout(readReceiptOrder({ lineItems: [{}, null, { name: 7 }], price: 'x' }), settings, berlin);
  t.equal(layout.lines.length, 3);
  t.equal(nbsp(layout.total.amount), '0,00 €');
});

t.test('the tax table adds up: net + tax = gross per rate, and the grosses to the total, for any lines', async () => {
  const line = fc.record({ totalPrice: fc.integer({ min: -5000, max: 500_000 }), taxRate: fc.constantFrom('19', '7', '5.5', '0') });
  fc.assert(
    fc.property(fc.array(line, { minLength: 1, maxLength: 40 }), fc.boolean(), (lines, dropRates) => {
      const items = lines.map((l, i) => ({ id: String(i), name: `L${i}`, amount: 1, price: l.totalPrice, ...l }));
      const o = order(items);
      // The figures as a PoS may leave them: none, or only some rates' (not adding up to the total).
      const price = dropRates ? { price: o.price.price, taxPre: { '19': o.price.taxPre?.['19'] ?? 0 }, tax: { '19': o.price.tax?.['19'] ?? 0 } } : { price: o.price.price };
      const layout = receiptLayout({ ...o, price }, settings, berlin);
      const cents = (s: string) => Number(nbsp(s).replace(/[^\d,-]/g, '').replace(',', '.')) * 100;
      let gross = 0;
      for (const [, net, tax, g] of layout.taxTable.rows) {
        if (Math.round(cents(net) + cents(tax)) !== Math.round(cents(g))) return false;
        gross += cents(g);
      }
      return Math.round(gross) === o.price.price && Math.round(cents(layout.taxTable.sum[3])) === o.price.price;
    }),
  );
});

t.test("prints a line that refers to another right under it, else in the order's order", async (t) => {
  const layout = receiptLayout(order([
    { id: 'a', name: 'Kaffee', amount: 1, price: 899, totalPrice: 899, taxRate: '7' },
    { id: 'b', name: 'Wasser', amount: 1, price: 59, totalPrice: 59, taxRate: '19' },
    { id: 'b-dep', type: 'deposit', refersTo: 'b', name: 'Pfand 0,25', amount: 1, price: 25, totalPrice: 25, taxRate: '19' },
    { id: 'cart', type: 'promotion', name: 'Warenkorbrabatt', amount: 1, totalPrice: -50, taxRate: '19' },
    { id: 'a-promo', type: 'promotion', refersTo: 'a', name: 'Kaffee -1 €', amount: 1, totalPrice: -100, taxRate: '7' },
    { id: 'x', type: 'coupon', refersTo: 'missing', name: 'Gutschein', amount: 1, totalPrice: 0 },
  ]), settings, berlin);
  t.same(layout.lines.map((l) => l.text), ['Kaffee', 'Kaffee -1 €', 'Wasser', 'Pfand 0,25', 'Warenkorbrabatt', 'Coupon: Gutschein']);
});

t.test('takes the receipt options from the environment, refusing a time zone Intl does not know', async (t) => {
  const base = { NATS_URL: 'nats://127.0.0.1:4222' };
  t.same(loadConfig(base).receipts, { timeZone: 'Europe/Berlin', partBytes: 524288, renderThreads: 1, ahead: false }, 'the defaults: made when first asked for');
  t.same(loadConfig({ ...base, RECEIPT_TIME_ZONE: 'America/New_York', RECEIPT_PART_BYTES: '4096', RECEIPT_RENDER_THREADS: '0', RECEIPTS_AHEAD: 'true' }).receipts, {
    timeZone: 'America/New_York',
    partBytes: 4096,
    renderThreads: 0,
    ahead: true,
  });
  t.throws(() => loadConfig({ ...base, RECEIPTS_AHEAD: 'sometimes' }), { name: 'ConfigError', message: /RECEIPTS_AHEAD/ });
  t.throws(() => loadConfig({ ...base, RECEIPT_TIME_ZONE: 'Mars/Olympus' }), { name: 'ConfigError', message: /RECEIPT_TIME_ZONE/ });
  t.throws(() => loadConfig({ ...base, RECEIPT_PART_BYTES: '2000000' }), { name: 'ConfigError', message: /RECEIPT_PART_BYTES/ });
});
