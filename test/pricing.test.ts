import fc from 'fast-check';
import t from 'tap';
import { formatAmount, parseAmount } from '../subjects/formats/money.js';
import { roundHalfAwayFromZero } from '../src/domain/money.js';
import { resolvePrice, shopCategoryOrder, type LegacyPrice, type PriceQuery, type PriceV2, type ProductPrices } from '../src/domain/pricing.js';

const now = new Date('2026-11-21T12:00:00Z');
const day = 86_400_000;
const iso = (offsetDays: number) => now.getTime() + offsetDays * day;
const query = (overrides: Partial<PriceQuery> = {}): PriceQuery => ({
  categories: ['summer', 'default'],
  at: now,
  quantity: 1,
  loyaltyCard: false,
  currency: 'EUR',
  ...overrides,
});
const prices = (v2: Record<string, readonly PriceV2[]> = {}, legacy: Record<string, LegacyPrice> = {}): ProductPrices => ({
  v2: new Map(Object.entries(v2)),
  legacy: new Map(Object.entries(legacy)),
});
const list = (amount: number, extra: Partial<PriceV2> = {}): PriceV2 => ({ amount, currency: 'EUR', tier: 'list', quantity: 1, ...extra });
const discount = (amount: number, extra: Partial<PriceV2> = {}): PriceV2 => ({ ...list(amount, extra), tier: 'discount' });

t.test('money', async (t) => {
  t.equal(parseAmount('1.99', 'EUR'), 199);
  t.equal(parseAmount('1.9', 'EUR'), 190);
  t.equal(parseAmount('12', 'EUR'), 1200);
  t.equal(parseAmount('0.10', 'EUR'), 10);
  t.equal(parseAmount('1.990', 'EUR'), 199, 'trailing zeros beyond the subunit are harmless');
  t.equal(parseAmount('1.999', 'EUR'), undefined, 'more decimals than cents is refused, not rounded');
  t.equal(parseAmount('150', 'JPY'), 150);
  t.equal(parseAmount('1.5', 'JPY'), undefined);
  t.equal(parseAmount('1.234', 'KWD'), 1234);
  t.equal(parseAmount('-1.00', 'EUR'), undefined);
  t.equal(parseAmount('1,99', 'EUR'), undefined);
  t.equal(parseAmount('1e3', 'EUR'), undefined);
  t.equal(parseAmount('99999999999999999999', 'EUR'), undefined, 'beyond exact integers');
  t.equal(formatAmount(199, 'EUR'), '1.99');
  t.equal(formatAmount(5, 'EUR'), '0.05');
  t.equal(formatAmount(150, 'JPY'), '150');
  t.equal(formatAmount(-1234, 'KWD'), '-1.234');
  t.same([2.5, -2.5, 2.4999, -0.5, 0].map(roundHalfAwayFromZero), [3, -3, 2, -1, 0]);
  fc.assert(fc.property(fc.integer({ min: 0, max: 10 ** 12 }), (n) => parseAmount(formatAmount(n, 'EUR'), 'EUR') === n));
});

t.test('orders a shop\'s categories by descending priority, then default', async (t) => {
  t.same(shopCategoryOrder([{ id: 'b', priority: 1 }, { id: 'default', priority: 99 }, { id: 'a', priority: 5 }, { id: 'c', priority: 1 }]), ['a', 'b', 'c', 'default']);
  t.same(shopCategoryOrder([]), ['default']);
});

t.test('examples', async (t) => {
  t.match(resolvePrice(prices({ default: [list(199)] }), query()), { unitPrice: 199, listPrice: 199, source: 'v2', category: 'default' });
  t.match(resolvePrice(prices({ default: [list(199)], summer: [list(179)] }), query()), { unitPrice: 179, category: 'summer' }, 'the shop category before default');
  t.match(resolvePrice(prices({ default: [list(199), discount(149)] }), query()), { unitPrice: 149, listPrice: 199 }, 'a valid discount');
  t.match(resolvePrice(prices({ default: [list(199), discount(149, { validTo: iso(-1) })] }), query()), { unitPrice: 199 }, 'an expired discount');
  t.match(resolvePrice(prices({ default: [list(199), discount(149, { validFrom: iso(1) })] }), query()), { unitPrice: 199 }, 'a future discount');
  t.match(resolvePrice(prices({ default: [list(199), list(219, { validFrom: iso(-1) })] }), query()), { unitPrice: 219, listPrice: 219 }, 'a scheduled price change supersedes the standing price');
  t.match(resolvePrice(prices({ default: [list(199), list(99, { quantity: 3 })] }), query({ quantity: 2 })), { unitPrice: 199 });
  t.match(resolvePrice(prices({ default: [list(199), list(99, { quantity: 3 })] }), query({ quantity: 3 })), { unitPrice: 99, listPrice: 199 }, 'a quantity price from 3 counted units on');
  t.match(resolvePrice(prices({ summer: [list(99, { quantity: 5 })], default: [list(199)] }), query({ quantity: 1 })), { unitPrice: 199, category: 'default' }, 'a category with only larger quantities gives no price');
  t.match(resolvePrice(prices({ default: [list(199, { currency: 'CHF' })] }), query()), undefined, 'another currency');
  t.match(resolvePrice(prices({ default: [{ ...list(10), tier: 'employee' }] }), query()), undefined, 'an unknown tier does not price a sale');
  t.match(resolvePrice(prices({}, { default: { listPrice: 299, discountedPrice: 249, customerCardPrice: 199 } }), query()), { unitPrice: 249, listPrice: 299, source: 'legacy' });
  t.match(resolvePrice(prices({}, { default: { listPrice: 299, discountedPrice: 249, customerCardPrice: 199 } }), query({ loyaltyCard: true })), { unitPrice: 199 });
  t.match(resolvePrice(prices({}, { default: { listPrice: 299, discountedPrice: 0, customerCardPrice: 0 } }), query({ loyaltyCard: true })), { unitPrice: 299 }, '0 means none, not free');
  t.match(resolvePrice(prices({ default: [list(199)] }, { summer: { listPrice: 99 } }), query()), { unitPrice: 199, source: 'v2' }, 'v2 wins over legacy even in a lower category');
  t.match(resolvePrice(prices({ default: [list(199, { validTo: iso(-1) })] }, { summer: { listPrice: 99 } }), query()), { unitPrice: 99, source: 'legacy' }, 'legacy when no v2 price applies now');
  t.equal(resolvePrice(prices(), query()), undefined, 'no price');
  t.match(resolvePrice(prices({ default: [list(199, { validFrom: now.getTime() })] }), query()), { unitPrice: 199 }, 'validFrom is inclusive');
  t.equal(resolvePrice(prices({ default: [list(199, { validTo: now.getTime() })] }), query()), undefined, 'validTo is exclusive');
});

// Random price data: a few categories, entries around `now`, both tiers, quantities 1-5.
const category = fc.constantFrom('a', 'b', 'default');
const moment = fc.option(fc.integer({ min: -5, max: 5 }).map(iso), { nil: undefined });
const entry = fc.record({
  amount: fc.integer({ min: 0, max: 100_000 }),
  currency: fc.constantFrom('EUR', 'EUR', 'EUR', 'CHF'),
  tier: fc.constantFrom('list', 'list', 'discount', 'employee'),
  quantity: fc.integer({ min: 1, max: 5 }),
  validFrom: moment,
  validTo: moment,
}).map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)) as unknown as PriceV2);
const legacy = fc.record({
  listPrice: fc.integer({ min: 0, max: 100_000 }),
  discountedPrice: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
  customerCardPrice: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
});
const productPrices = fc
  .record({ v2: fc.array(fc.tuple(category, fc.array(entry, { maxLength: 6 })), { maxLength: 3 }), legacy: fc.array(fc.tuple(category, legacy), { maxLength: 3 }) })
  .map(({ v2, legacy: l }) => prices(Object.fromEntries(v2), Object.fromEntries(l)));
const priceQuery = fc.record({
  categories: fc.constantFrom(['a', 'b', 'default'], ['b', 'a', 'default'], ['default']),
  quantity: fc.integer({ min: 1, max: 8 }),
  loyaltyCard: fc.boolean(),
}).map((q) => query(q));

const allAmounts = (p: ProductPrices) => [
  ...[...p.v2.values()].flat().map((e) => e.amount),
  ...[...p.legacy.values()].flatMap((l) => [l.listPrice, l.discountedPrice, l.customerCardPrice]),
];

t.test('properties of price resolution', async () => {
  fc.assert(
    fc.property(productPrices, priceQuery, (p, q) => {
      const r = resolvePrice(p, q);
      if (!r) return true;
      return r.unitPrice <= r.listPrice && Number.isInteger(r.unitPrice) && r.unitPrice >= 0 && allAmounts(p).includes(r.unitPrice);
    }),
    { numRuns: 2000 },
  );
});

t.test('the order of the entries never changes the price', async () => {
  fc.assert(
    fc.property(productPrices, priceQuery, fc.integer(), (p, q, seed) => {
      const shuffled = prices(
        Object.fromEntries([...p.v2].map(([c, entries]) => [c, [...entries].sort(() => ((seed = (seed * 1103515245 + 12345) | 0) & 1) - 0.5)])),
        Object.fromEntries(p.legacy),
      );
      const a = resolvePrice(p, q);
      const b = resolvePrice(shuffled, q);
      return a?.unitPrice === b?.unitPrice && a?.listPrice === b?.listPrice && a?.category === b?.category;
    }),
    { numRuns: 2000 },
  );
});

t.test('within one category, buying more never raises the unit price', async () => {
  fc.assert(
    fc.property(fc.array(entry, { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 6 }), (entries, n) => {
      const p = prices({ default: entries });
      const fewer = resolvePrice(p, query({ categories: ['default'], quantity: n }));
      const more = resolvePrice(p, query({ categories: ['default'], quantity: n + 1 }));
      return !fewer || (more !== undefined && more.unitPrice <= fewer.unitPrice);
    }),
    { numRuns: 2000 },
  );
});

t.test('a loyalty card never makes a price higher', async () => {
  fc.assert(
    fc.property(productPrices, priceQuery, (p, q) => {
      const without = resolvePrice(p, { ...q, loyaltyCard: false });
      const withCard = resolvePrice(p, { ...q, loyaltyCard: true });
      return without?.unitPrice === undefined || (withCard !== undefined && withCard.unitPrice <= without.unitPrice);
    }),
    { numRuns: 2000 },
  );
});

t.test('prices that do not apply now, or in another currency, change nothing', async () => {
  fc.assert(
    fc.property(productPrices, priceQuery, category, fc.integer({ min: 0, max: 100_000 }), fc.constantFrom('expired', 'future', 'currency'), (p, q, c, amount, kind) => {
      const extra: PriceV2 =
        kind === 'expired' ? list(amount, { validTo: iso(-6) }) : kind === 'future' ? list(amount, { validFrom: iso(6) }) : list(amount, { currency: 'USD' });
      const withExtra = prices({ ...Object.fromEntries(p.v2), [c]: [...(p.v2.get(c) ?? []), extra] }, Object.fromEntries(p.legacy));
      const a = resolvePrice(p, q);
      const b = resolvePrice(withExtra, q);
      return a?.unitPrice === b?.unitPrice && a?.category === b?.category;
    }),
    { numRuns: 2000 },
  );
});

t.test('v2 wins over legacy whenever a v2 price applies', async () => {
  fc.assert(
    fc.property(productPrices, priceQuery, (p, q) => {
      const v2Only = resolvePrice(prices(Object.fromEntries(p.v2)), q);
      const r = resolvePrice(p, q);
      return v2Only ? r?.source === 'v2' && r.unitPrice === v2Only.unitPrice : r === undefined || r.source === 'legacy';
    }),
    { numRuns: 2000 },
  );
});

t.test('the first category in the shop\'s order that has an applicable price gives it', async () => {
  fc.assert(
    fc.property(productPrices, priceQuery, (p, q) => {
      const r = resolvePrice(p, q);
      if (!r || r.source !== 'v2') return true;
      const earlier = q.categories.slice(0, q.categories.indexOf(r.category));
      return earlier.every((c) => resolvePrice(prices({ [c]: [...(p.v2.get(c) ?? [])] }), { ...q, categories: [c] }) === undefined);
    }),
    { numRuns: 2000 },
  );
});
