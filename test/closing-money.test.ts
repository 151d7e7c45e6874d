import fc from 'fast-check';
import t from 'tap';
import { checkoutPrice } from '../src/domain/tax.js';
import { p } from './support/checkout.js';
import { closingTokens, closingWithLogs, downloadLog, insertOrder, orderDocument, runJob, type SeededLine } from './support/closing.js';
import { cents, units, validateDsfinvk } from './support/dsfinvk-validator.js';
import { startTestService } from './support/service.js';

/**
 * Money through closings, for orders shaped as the checkout writes them with promotions and coupons:
 * promotion lines (negative totals that refer to the line they discount, or to none for a cart
 * discount split over the rates), modified prices with priceModifiers, coupon lines (no amount,
 * the rate "", redeemed or not), deposits and weighed lines, paid in several ways, with their own
 * tax figures or (a PoS's pricing) without. Whatever the orders, a closing's total, tax shares and
 * payment shares are the sums of its orders' own figures, and both logs add up to them.
 */
const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
const tokens = await closingTokens(svc);
const admin = await svc.token(['shopsWrite']);

const Item = fc.record({
  price: fc.integer({ min: 1, max: 3000 }),
  amount: fc.integer({ min: 1, max: 4 }),
  rate: fc.constantFrom('19', '7'),
  weighedGrams: fc.option(fc.integer({ min: 50, max: 2500 }), { nil: undefined }),
  deposit: fc.boolean(),
  modifiedPrice: fc.boolean(),
  discountPercent: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
  couponDiscount: fc.boolean(),
});
const Order = fc.record({
  items: fc.array(Item, { minLength: 1, maxLength: 5 }),
  cartDiscountPercent: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }),
  coupons: fc.array(fc.boolean(), { maxLength: 2 }),
  paymentMethod: fc.constantFrom('cash', 'girocard', 'creditCardVisa', 'paypal'),
  ownFigures: fc.boolean(),
});
type OrderSpec = typeof Order extends fc.Arbitrary<infer T> ? T : never;

/** The line items a checkout with promotions and coupons makes of a spec. */
function linesOf(spec: OrderSpec): SeededLine[] {
  const lines: SeededLine[] = [];
  spec.items.forEach((item, i) => {
    const id = `l${lines.length + 1}`;
    const price = item.modifiedPrice ? item.price - Math.floor(item.price / 10) : item.price;
    const modifiers = item.modifiedPrice ? { priceModifiers: [{ name: 'Happy Hour', method: 'promotion', action: 'add', price }] } : {};
    if (item.weighedGrams !== undefined) {
      const total = Math.round((price * item.weighedGrams) / 1000);
      lines.push({ type: 'default', sku: `W${i}`, name: `Lose Ware ${i}`, amount: 1, price, taxRate: item.rate, weight: item.weighedGrams, weightUnit: 'g', extra: { totalPrice: total, referenceUnit: 'kg', ...modifiers } });
    } else {
      lines.push({ type: 'default', sku: `I${i}`, name: `Artikel ${i}`, amount: item.amount, price, taxRate: item.rate, extra: modifiers });
    }
    const itemTotal = (lines.at(-1)!.extra?.totalPrice as number | undefined) ?? price * item.amount;
    if (item.deposit) lines.push({ type: 'deposit', sku: 'PFAND', name: 'Pfand 0,25', amount: item.amount, price: 25, taxRate: '19', refersTo: id });
    const discount = item.discountPercent === undefined ? 0 : Math.floor((itemTotal * item.discountPercent) / 100);
    if (discount > 0) {
      lines.push({
        type: 'promotion', sku: '', name: `${item.discountPercent} % auf Artikel ${i}`, amount: 1, price: -discount, taxRate: item.rate, refersTo: id,
        extra: {
          discountRuleID: `rule-${i}`, discountType: 'percentage', discountValue: discount, discountPercentage: item.discountPercent,
          ...(item.couponDiscount ? { couponID: `coupon-${i}` } : {}),
        },
      });
    }
  });
  if (spec.cartDiscountPercent !== undefined) {
    // A cart discount: one promotion line per rate, in proportion to the rate's gross.
    const gross = checkoutPrice(lines.map((l) => ({ totalPrice: (l.extra?.totalPrice as number | undefined) ?? l.price * l.amount, taxRate: l.taxRate }))).taxPre;
    for (const [rate, sum] of Object.entries(gross)) {
      const discount = Math.floor((sum * spec.cartDiscountPercent) / 100);
      if (discount > 0) {
        lines.push({ type: 'promotion', sku: '', name: 'Warenkorbrabatt', amount: 1, price: -discount, taxRate: rate, extra: { id: `cart-promotion-r-${rate}`, discountRuleID: 'cart', discountType: 'percentage', discountValue: discount } });
      }
    }
  }
  spec.coupons.forEach((redeemed, i) => {
    lines.push({ type: 'coupon', sku: '', name: `Coupon ${i}`, amount: 1, price: 0, taxRate: '', extra: { couponID: `paper-${i}`, redeemed } });
  });
  return lines;
}

let run = 0;

t.test("a closing's totals and shares are the sums of its orders' own figures, and its logs add up to them", async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(Order, { minLength: 1, maxLength: 6 }), async (specs) => {
      const shop = `money-${++run}`;
      await svc.request('POST', `${p}/shops`, { token: admin, body: { id: shop, name: shop } });
      const expected = { total: 0, byMethod: new Map<string, number>(), byRate: new Map<string, { net: number; tax: number; total: number }>(), discounts: 0, deposits: 0 };
      for (const spec of specs) {
        const lines = linesOf(spec);
        const totals = lines.map((l) => ({ totalPrice: (l.extra?.totalPrice as number | undefined) ?? l.price * l.amount, taxRate: l.taxRate }));
        const own = checkoutPrice(totals);
        const order = orderDocument({ shop, lines, paymentMethod: spec.paymentMethod, ...(spec.ownFigures ? {} : { price: { price: own.price } }) });
        await insertOrder(svc.sql, order);
        // The reference: what the order says of itself (its figures, or as a checkout works them out).
        expected.total += own.price;
        expected.byMethod.set(spec.paymentMethod, (expected.byMethod.get(spec.paymentMethod) ?? 0) + own.price);
        for (const [rate, gross] of Object.entries(own.taxPre)) {
          const sum = expected.byRate.get(rate) ?? { net: 0, tax: 0, total: 0 };
          sum.net += own.taxNet[rate]!;
          sum.tax += own.tax[rate]!;
          sum.total += gross;
          expected.byRate.set(rate, sum);
        }
        lines.forEach((l, i) => {
          if (l.type === 'promotion') expected.discounts += totals[i]!.totalPrice;
          if (l.type === 'deposit') expected.deposits += totals[i]!.totalPrice;
        });
      }

      const job = await runJob(svc, tokens, { shopID: shop, formats: ['dsfinvk_2023_03', 'aggregated_receipts'] });
      const closing = await closingWithLogs(svc, tokens.read, shop, job.sequenceNumber);
      const fail = (what: string) => {
        throw new Error(`${what}\norders: ${JSON.stringify(specs)}\nclosing: ${JSON.stringify({ total: closing.total, taxShares: closing.taxShares, shareByPaymentMethod: closing.shareByPaymentMethod })}`);
      };
      if (closing.total !== expected.total) fail(`total ${closing.total} ≠ Σ orders ${expected.total}`);
      const shares = [...expected.byRate].filter(([, s]) => s.net || s.tax || s.total).map(([rate, s]) => ({ rate: Number(rate || 0), ...s }));
      const sortShares = (list: Array<{ rate: number; total: number }>) => [...list].sort((a, b) => b.rate - a.rate || a.total - b.total);
      if (JSON.stringify(sortShares(closing.taxShares)) !== JSON.stringify(sortShares(shares))) fail(`taxShares ≠ Σ orders' own figures ${JSON.stringify(shares)}`);
      const methods = [...expected.byMethod].map(([paymentMethod, amount]) => ({ paymentMethod, amount })).sort((a, b) => (a.paymentMethod < b.paymentMethod ? -1 : 1));
      if (JSON.stringify(closing.shareByPaymentMethod) !== JSON.stringify(methods)) fail(`shareByPaymentMethod ≠ ${JSON.stringify(methods)}`);

      const zip = await downloadLog(svc, tokens.read, closing.links.dsfinvk_2023_03.href);
      const { problems, tables } = validateDsfinvk(zip.bytes, closing);
      if (problems.length) fail(`the DSFinV-K export: ${problems.slice(0, 5).join('; ')}`);
      const byCase = (type: string) => cents((tables['businesscases.csv'] ?? []).filter((c) => c.GV_TYP === type).reduce((s, c) => s + units(c.Z_UMS_BRUTTO), 0n));
      if (byCase('Rabatt') !== expected.discounts) fail(`Rabatt ${byCase('Rabatt')} ≠ Σ promotion lines ${expected.discounts}`);
      if (byCase('Pfand') !== expected.deposits) fail(`Pfand ${byCase('Pfand')} ≠ Σ deposit lines ${expected.deposits}`);
      if ((tables['transactions_vat.csv'] ?? []).some((v) => v.UST_SCHLUESSEL === '5')) fail('a VAT row without a rate: the coupons\' empty rate is no VAT row');

      const csv = new TextDecoder().decode((await downloadLog(svc, tokens.read, closing.links.aggregated_receipts.href)).bytes).trimEnd().split('\r\n');
      const header = csv[0]!.split(',');
      const column = (name: string) => csv.slice(1).reduce((s, row) => s + Math.round(Number(row.split(',')[header.indexOf(name)]) * 100), 0);
      if (column('total') !== closing.total) fail(`aggregated_receipts: Σ total ${column('total')} ≠ ${closing.total}`);
      for (const share of closing.taxShares) {
        if (column(`gross_${share.rate}`) !== share.total || column(`tax_${share.rate}`) !== share.tax) fail(`aggregated_receipts: the ${share.rate} % columns ≠ the share`);
      }
    }),
    { numRuns: 12 },
  );
  t.pass('held for every generated set of orders');
});

t.test('an order whose rate is no number (a PoS may write any text) is closed without tax, never failing the shop\'s closings', async (t) => {
  await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 'odd-rates', name: 'Odd rates' } });
  const lines: SeededLine[] = [
    { type: 'default', sku: 'A', name: 'A', amount: 1, price: 119, taxRate: '19' },
    { type: 'default', sku: 'B', name: 'B', amount: 2, price: 150, taxRate: '19%' },
  ];
  await insertOrder(svc.sql, orderDocument({ shop: 'odd-rates', lines, price: { price: 419 } }));
  const job = await runJob(svc, tokens, { shopID: 'odd-rates', formats: ['dsfinvk_2023_03'] });
  t.equal(job.state, 'done');
  const closing = await closingWithLogs(svc, tokens.read, 'odd-rates', job.sequenceNumber);
  t.equal(closing.total, 419);
  t.same(closing.taxShares, [{ rate: 19, net: 100, tax: 19, total: 119 }, { rate: 0, net: 300, tax: 0, total: 300 }]);
  const zip = await downloadLog(svc, tokens.read, closing.links.dsfinvk_2023_03.href);
  const { problems, tables } = validateDsfinvk(zip.bytes, closing);
  t.same(problems, []);
  t.same(tables['transactions_vat.csv']!.map((v) => [v.UST_SCHLUESSEL, v.BON_BRUTTO, v.BON_UST]), [['1', '1,19000', '0,19000'], ['5', '3,00000', '0,00000']], 'not taxable (key 5)');
});
