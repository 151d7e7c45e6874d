import fc from 'fast-check';
import t from 'tap';
import { priceCart, type Catalog, type CatalogEntry, type CartContext } from '../src/domain/cart.js';
import type { PriceV2 } from '../src/domain/pricing.js';
import canonicalize from 'canonicalize';
import { canonicalCheckoutInfo, lineItemText, signCheckoutInfo, signedCheckoutInfoJson, verifyCheckoutInfo } from '../src/domain/signature.js';
import { taxIncluded } from '../src/domain/tax.js';
import { LineItem, type CartItem, type CheckoutInfo } from '../subjects/checkout.js';
import { PriceModifier } from '../subjects/promotions.js';
import { Product } from '../subjects/products.js';

/**
 * Random catalogs and carts, priced by the domain function the checkout worker uses: the identities
 * of design.md hold for every cart, and a signed checkout info cannot be changed unnoticed.
 */
const rates = { normal: '19', reduced: '7', zero: '0', half: '5.5' };
const context = (loyaltyCard: boolean): CartContext => ({ categories: ['default'], taxRates: rates, currency: 'EUR', at: new Date(), loyaltyCard, deviceType: 'app', fulfillmentAvailable: true });

const priceEntry = fc.record({
  amount: fc.integer({ min: 0, max: 50_000 }),
  tier: fc.constantFrom('list', 'discount'),
  quantity: fc.integer({ min: 1, max: 4 }),
});

const productSpec = fc.record({
  measure: fc.constantFrom(null, 'kg', 'l', 'piece'),
  taxCategory: fc.constantFrom('normal', 'reduced', 'zero', 'half'),
  deposit: fc.boolean(),
  sharedKey: fc.boolean(),
  // A plain list price always, so every product sells; quantity and discount prices besides.
  listPrice: fc.integer({ min: 0, max: 50_000 }),
  prices: fc.array(priceEntry, { maxLength: 3 }),
  legacyOnly: fc.option(fc.record({ listPrice: fc.integer({ min: 0, max: 50_000 }), customerCardPrice: fc.integer({ min: 0, max: 50_000 }) }), { nil: undefined }),
});

type ProductSpec = typeof productSpec extends fc.Arbitrary<infer T> ? T : never;

function buildCatalog(specs: ProductSpec[]): Catalog {
  const bySku = new Map<string, CatalogEntry>();
  bySku.set('DEPOSIT', {
    product: Product.parse({ sku: 'DEPOSIT', name: 'Pfand', taxCategory: 'normal' }),
    prices: { v2: new Map([['default', [{ amount: 25, currency: 'EUR', tier: 'list', quantity: 1 }]]]), legacy: new Map() },
    isDeposit: true,
  });
  specs.forEach((spec, i) => {
    const sku = `P${i}`;
    const product = Product.parse({
      sku,
      name: `Product ${i}`,
      taxCategory: spec.taxCategory,
      referenceUnit: spec.measure,
      encodingUnit: spec.measure === 'kg' ? 'g' : spec.measure === 'l' ? 'ml' : null,
      depositProduct: spec.deposit ? 'DEPOSIT' : '',
      quantityPriceKey: spec.sharedKey ? 'shared' : '',
    });
    const v2: PriceV2[] = [{ amount: spec.listPrice, tier: 'list', quantity: 1 }, ...spec.prices].map((p) => ({ ...p, currency: 'EUR' }));
    bySku.set(sku, {
      product,
      prices: spec.legacyOnly ? { v2: new Map(), legacy: new Map([['default', spec.legacyOnly]]) } : { v2: new Map([['default', v2]]), legacy: new Map() },
      isDeposit: false,
    });
  });
  return { bySku, skuOfCode: new Map(), skuOfPlu: new Map() };
}

const cartOf = (productCount: number) =>
  fc.array(
    fc.record({
      product: fc.integer({ min: 0, max: productCount - 1 }),
      amount: fc.integer({ min: 1, max: 6 }),
      weight: fc.integer({ min: 1, max: 25_000 }),
      units: fc.integer({ min: 1, max: 12 }),
    }),
    { minLength: 1, maxLength: 12 },
  );

const scenario = fc
  .array(productSpec, { minLength: 1, maxLength: 8 })
  .chain((specs) => fc.record({ specs: fc.constant(specs), cart: cartOf(specs.length), loyaltyCard: fc.boolean() }))
  .map(({ specs, cart, loyaltyCard }) => {
    const catalog = buildCatalog(specs);
    const items: CartItem[] = cart.map((c, i) => {
      const product = catalog.bySku.get(`P${c.product}`)!.product;
      return {
        id: `i${i}`,
        sku: product.sku,
        amount: c.amount,
        ...(product.referenceUnit && product.referenceUnit !== 'piece' ? { weight: c.weight } : {}),
        ...(product.referenceUnit === 'piece' ? { units: c.units } : {}),
      };
    });
    return { catalog, items, loyaltyCard };
  });

const isCount = (n: number) => Number.isSafeInteger(n) && n >= 0;

t.test('price = Σ totalPrice, netPrice + Σ tax = price, tax + taxNet = taxPre per rate; all integers, never negative', async () => {
  fc.assert(
    fc.property(scenario, ({ catalog, items, loyaltyCard }) => {
      const result = priceCart(items, catalog, context(loyaltyCard));
      if (!result.ok) return false;
      const { lineItems, price } = result;
      const sumOfLines = lineItems.reduce((sum, l) => sum + l.totalPrice, 0);
      const sumOfTax = Object.values(price.tax).reduce((sum, tax) => sum + tax, 0);
      return (
        price.price === sumOfLines &&
        price.netPrice + sumOfTax === price.price &&
        Object.keys(price.taxPre).every((rate) => (price.tax[rate] ?? NaN) + (price.taxNet[rate] ?? NaN) === price.taxPre[rate]) &&
        lineItems.every((l) => isCount(l.totalPrice) && isCount(l.price) && isCount(l.amount)) &&
        [price.price, price.netPrice, ...Object.values(price.tax), ...Object.values(price.taxNet), ...Object.values(price.taxPre)].every(isCount)
      );
    }),
    { numRuns: 1500 },
  );
});

t.test('the order of the items does not change the totals or the line items', async () => {
  const canonical = (lines: LineItem[]) => lines.map((l) => JSON.stringify(l)).sort();
  fc.assert(
    fc.property(scenario, fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true })), ({ catalog, items, loyaltyCard }, randoms) => {
      const shuffled = items
        .map((item) => ({ item, key: randoms.next().value as number }))
        .sort((a, b) => a.key - b.key)
        .map((x) => x.item);
      const a = priceCart(items, catalog, context(loyaltyCard));
      const b = priceCart(shuffled, catalog, context(loyaltyCard));
      return a.ok && b.ok && JSON.stringify(a.price) === JSON.stringify(b.price) && JSON.stringify(canonical(a.lineItems)) === JSON.stringify(canonical(b.lineItems));
    }),
    { numRuns: 1500 },
  );
});

t.test('a deposit line follows every product that has one, for the same amount', async () => {
  fc.assert(
    fc.property(scenario, ({ catalog, items, loyaltyCard }) => {
      const result = priceCart(items, catalog, context(loyaltyCard));
      if (!result.ok) return false;
      return result.lineItems.every((line, i) => {
        const needsDeposit = line.type === 'default' && catalog.bySku.get(line.sku)?.product.depositProduct === 'DEPOSIT';
        const next = result.lineItems[i + 1];
        return !needsDeposit || (next?.type === 'deposit' && next.refersTo === line.id && next.amount === line.amount && next.totalPrice === 25 * line.amount);
      });
    }),
    { numRuns: 1000 },
  );
});

t.test('the tax included in a gross amount is never negative and never above it', async () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 2000) }), fc.constantFrom('0', '5.5', '7', '19', '20', '25.5', '99.9999'), (gross, rate) => {
      const tax = taxIncluded(gross, rate);
      return Number.isSafeInteger(tax) && tax >= 0 && tax <= gross;
    }),
    { numRuns: 3000 },
  );
});

t.test('any change to a signed checkout info fails verification', async () => {
  const key = new TextEncoder().encode('property-test-key-that-is-long-enough-0123456789');
  const mutations: Array<[string, (info: CheckoutInfo) => boolean]> = [
    ['a price', (i) => changeLine(i, (l) => (l.price += 1))],
    ['an amount', (i) => changeLine(i, (l) => (l.amount += 1))],
    ['a total', (i) => changeLine(i, (l) => (l.totalPrice -= 1))],
    ['a line item removed', (i) => (i.lineItems.pop(), true)],
    ['a line item added', (i) => (i.lineItems.push({ ...i.lineItems[0]!, id: 'extra' }), true)],
    ['the price', (i) => ((i.price.price += 1), true)],
    ['a tax', (i) => ((i.price.tax = { ...i.price.tax, '19': (i.price.tax['19'] ?? 0) + 1 }), true)],
    ['the shop', (i) => ((i.shopID = 'elsewhere'), true)],
  ];
  fc.assert(
    fc.property(scenario, fc.integer({ min: 0, max: mutations.length - 1 }), ({ catalog, items, loyaltyCard }, m) => {
      const result = priceCart(items, catalog, context(loyaltyCard));
      if (!result.ok) return false;
      const info: CheckoutInfo = {
        session: 's', clientID: 'c', appUserID: 'u', shopID: 'shop', project: 'p',
        shop: { externalId: '', name: 'Shop', email: '', phone: '', street: '', zip: '', city: '', state: '', country: '' },
        customer: {}, createdAt: new Date().toISOString(), availableMethods: ['cash'], paymentMethods: [{ id: 'cash' }], lineItems: result.lineItems, price: result.price, currency: 'EUR',
        requiredInformation: [], violations: [],
      };
      const signature = signCheckoutInfo(info, key);
      verifyCheckoutInfo(structuredClone(info), signature, key, { ttlMs: 60_000 });
      const changed = structuredClone(info);
      const [, mutate] = mutations[m]!;
      if (!mutate(changed)) return true;
      try {
        verifyCheckoutInfo(changed, signature, key, { ttlMs: 60_000 });
        return false;
      } catch (err) {
        return (err as { type?: string }).type === 'invalid_signature';
      }
    }),
    { numRuns: 400 },
  );
});

function changeLine(info: CheckoutInfo, edit: (line: LineItem) => void): boolean {
  const line = info.lineItems[0];
  if (!line) return false;
  edit(line);
  return true;
}


t.test('line items are written with every member of the schema, in canonical order', async (t) => {
  // Required<>: a member added to the schema must be added here (and to lineItemText).
  const modifier: Required<PriceModifier> = { name: 'n', method: 'promotion', action: 'modify', price: 1, percentage: 2.5, ruleID: 'r' };
  const line: Required<LineItem> = {
    id: 'i', type: 'promotion', refersTo: 'r', sku: 's', amount: 1, weight: 2, weightUnit: 'g', referenceUnit: 'kg', units: 3, price: -4,
    priceOrigin: 'master', totalPrice: -4, name: 'n', taxRate: '19', scannedCode: 'c', saleRestriction: '', fulfillmentType: 'f',
    discountID: 'd', discountRuleID: 'dr', couponID: 'k', discountType: 'percentage', discountValue: 4, discountPercentage: 12.5,
    priceModifiers: [modifier], redeemed: true,
  };
  const text = lineItemText(line);
  t.equal(text, canonicalize(line));
  const written = JSON.parse(text) as Record<string, unknown> & { priceModifiers: object[] };
  t.same(Object.keys(written), Object.keys(LineItem.shape).sort());
  t.same(Object.keys(written.priceModifiers[0]!), Object.keys(PriceModifier.shape).sort());
});

t.test('a line item value without a JSON form is refused, not written', async (t) => {
  const line = { id: 'i', type: 'default', refersTo: null, sku: 's', amount: 1, weight: 0, units: 0, price: 1, priceOrigin: 'master', totalPrice: 1, name: 'n', taxRate: '19', scannedCode: '', saleRestriction: '' } satisfies LineItem;
  t.throws(() => lineItemText({ ...line, price: Number.NaN }), TypeError);
  t.throws(() => lineItemText({ ...line, totalPrice: Number.POSITIVE_INFINITY }), TypeError);
  t.throws(() => lineItemText({ ...line, name: 'a\ud800b' }), TypeError);
  t.throws(() => lineItemText({ ...line, sku: undefined as unknown as string }), TypeError);
  t.equal(lineItemText({ ...line, name: 'quote " backslash \\ tab \t' }), canonicalize({ ...line, name: 'quote " backslash \\ tab \t' }));
});

/** A promotion line as the engine writes them, with random discount fields and price modifiers. */
const promotionLine = (texts: fc.Arbitrary<string>) =>
  fc.record(
    {
      discountRuleID: texts,
      discountID: texts,
      couponID: texts,
      discountType: fc.constantFrom('absolute' as const, 'percentage' as const),
      discountValue: fc.integer({ min: 0, max: 100_000 }),
      discountPercentage: fc.double({ min: 0, max: 100, noNaN: true }),
      priceModifiers: fc.array(
        fc.record({ name: texts, method: fc.constant('promotion' as const), action: fc.constant('modify' as const), price: fc.integer({ min: 0, max: 50_000 }), percentage: fc.double({ min: 0, max: 100, noNaN: true }), ruleID: texts }, { requiredKeys: ['name', 'method', 'action', 'price', 'ruleID'] }),
        { maxLength: 2 },
      ),
      redeemed: fc.boolean(),
      fulfillmentType: texts,
    },
    { requiredKeys: [] },
  );

t.test('the canonical text of a checkout info is exactly what the canonicalize package writes', async () => {
  const texts = fc.string({ unit: 'grapheme', maxLength: 12 });
  fc.assert(
    fc.property(scenario, texts, texts, fc.dictionary(texts, fc.oneof(texts, fc.integer(), fc.boolean(), fc.constant(null))), fc.array(promotionLine(texts), { maxLength: 4 }), ({ catalog, items, loyaltyCard }, name, session, customer, promotions) => {
      const result = priceCart(items, catalog, context(loyaltyCard));
      if (!result.ok) return false;
      const info: CheckoutInfo = {
        session, clientID: name, appUserID: '', shopID: 'shop-1', project: 'p',
        shop: { externalId: name, name, email: '', phone: '+49', street: session, zip: '1', city: 'Köln', state: '', country: 'DE' },
        customer: { ...customer, loyaltyCard: name }, createdAt: new Date().toISOString(), availableMethods: ['cash', name],
        paymentMethods: [{ id: 'cash' }, { id: name, acceptedOriginTypes: [session, 'iban'] }],
        lineItems: result.lineItems.map((l, i) => ({ ...l, name: `${l.name} ${name}`, refersTo: l.refersTo, ...promotions[i] })), price: result.price, currency: 'EUR',
        requiredInformation: [{ id: 'taxation', value: name }, { id: session }],
        violations: [{ type: 'coupon_invalid', message: name, refersTo: session }, { type: 'invalid_line_item', message: session }],
      };
      return canonicalCheckoutInfo(info) === canonicalize(info);
    }),
    { numRuns: 1500 },
  );
});

t.test('a checkout info larger than the memory its text is first written in is written whole, and signed as written', async (t) => {
  const line = (i: number): LineItem => ({ id: String(i), type: 'default', refersTo: null, sku: `SKU-${i}`, amount: 1, weight: 0, units: 0, price: 100 + i, priceOrigin: 'master', totalPrice: 100 + i, name: `Käse 🧀 ${i} "extra"`, taxRate: '19', scannedCode: '', saleRestriction: '' });
  const info: CheckoutInfo = {
    session: '', clientID: '', appUserID: '', shopID: 'shop', project: 'p',
    shop: { externalId: '', name: 'Shop', email: '', phone: '', street: '', zip: '', city: '', state: '', country: '' },
    customer: {}, createdAt: new Date().toISOString(), availableMethods: ['cash'], paymentMethods: [{ id: 'cash' }], lineItems: Array.from({ length: 400 }, (_, i) => line(i)),
    price: { tax: {}, taxNet: {}, taxPre: {}, netPrice: 0, price: 0 }, currency: 'EUR', requiredInformation: [], violations: [],
  };
  const canonical = canonicalize(info)!;
  t.ok(Buffer.byteLength(canonical) > 64 * 1024, 'past the first 16 KB, and grown more than once');
  t.equal(canonicalCheckoutInfo(info), canonical);
  const key = new TextEncoder().encode('a-key-of-at-least-thirty-two-characters');
  const links = { checkoutProcess: { href: '/p/checkout/process' } };
  const signed = JSON.parse(signedCheckoutInfoJson(info, key, links).toString()) as { checkoutInfo: unknown; signature: string; links: unknown };
  t.same(signed, { checkoutInfo: JSON.parse(canonical) as unknown, signature: signCheckoutInfo(info, key), links });
  t.doesNotThrow(() => verifyCheckoutInfo(signed.checkoutInfo as CheckoutInfo, signed.signature, key, { ttlMs: 60_000 }));
});

t.test('what has no canonical form is refused, as canonicalize refuses it', async (t) => {
  const line: LineItem = { id: '1', type: 'default', refersTo: null, sku: 'a', amount: 1, weight: 0, units: 0, price: 100, priceOrigin: 'master', totalPrice: 100, name: 'A', taxRate: '19', scannedCode: '', saleRestriction: '' };
  const info = (l: LineItem): CheckoutInfo => ({
    session: '', clientID: '', appUserID: '', shopID: 'shop', project: 'p',
    shop: { externalId: '', name: 'Shop', email: '', phone: '', street: '', zip: '', city: '', state: '', country: '' },
    customer: {}, createdAt: new Date().toISOString(), availableMethods: ['cash'], paymentMethods: [{ id: 'cash' }], lineItems: [l],
    price: { tax: {}, taxNet: {}, taxPre: {}, netPrice: 0, price: 0 }, currency: 'EUR', requiredInformation: [], violations: [],
  });
  t.throws(() => canonicalCheckoutInfo(info({ ...line, name: 'A \ud800' })), 'a lone surrogate');
  t.throws(() => canonicalCheckoutInfo(info({ ...line, price: Number.NaN })), 'a price that is not a number');
  t.throws(() => canonicalCheckoutInfo(info({ ...line, priceModifiers: [{ name: 'x', method: 'promotion', action: 'modify', price: Number.POSITIVE_INFINITY, ruleID: 'r' }] })), 'an infinite modified price');
  // One info for both sides: each info() call stamps its own createdAt.
  const escaped = info({ ...line, name: 'A \u0001 \\ud800' });
  t.equal(canonicalCheckoutInfo(escaped), canonicalize(escaped), 'a control character and a written backslash-u are text');
});
