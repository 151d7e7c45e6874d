import canonicalize from 'canonicalize';
import { compactVerify } from 'jose';
import t from 'tap';
import { gs1CheckDigit } from '../src/domain/codes.js';
import { verifyCheckoutInfo } from '../src/domain/signature.js';
import { SignedCheckoutInfo } from '../subjects/checkout.js';
import { startTestService, TestCheckoutSecret, TestProject } from './support/service.js';

const svc = await startTestService(t);
const admin = await svc.token(['productsWrite', 'pricingWrite', 'pricingCategoriesWrite', 'shopsWrite', 'projectsWrite']);
const token = await svc.token(['productsRead']);
const p = `/${TestProject}`;
const key = new TextEncoder().encode(TestCheckoutSecret);
const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
const ean = (first12: string) => `${first12}${gs1CheckDigit(first12)}`;
const eur = (price: string, extra: object = {}) => ({ price, currency: 'EUR', tier: 'list', ...extra });

const milkCode = ean('400123456789');
const cheeseByWeight = ean('231234500250'); // in-store: weight, PLU 12345, 250 g
const hamByPrice = ean('215432100499'); // in-store: price, PLU 54321, 4.99
const rollsByUnits = ean('270077700006'); // in-store: units, PLU 777, 6 pieces

await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'] } });
for (const id of ['s1', 's2']) await svc.request('POST', `${p}/shops`, { token: admin, body: { id, name: `Shop ${id}`, externalId: `E-${id}`, city: 'Berlin', street: 'Torstraße 1' } });
await svc.request('POST', `${p}/pricing/categories`, { token: admin, body: { id: 'summer', priority: 10, shops: [{ id: 's1' }] } });
await svc.request('POST', `${p}/products/_batch`, {
  token: admin,
  ...ndjson([
    { sku: 'MILK', name: 'Milch 1 l', taxCategory: 'reduced', depositProduct: 'DEP-015', codes: [{ code: milkCode }] },
    { sku: 'DEP-015', name: 'Pfand 0,15', taxCategory: 'normal' },
    { sku: 'WATER', name: 'Wasser', taxCategory: 'normal' },
    { sku: 'APPLE', name: 'Äpfel', productType: 'weighable', referenceUnit: 'kg', encodingUnit: 'g', pluSet: ['4011'], taxCategory: 'reduced' },
    { sku: 'CHEESE', name: 'Gouda', productType: 'weighable', referenceUnit: 'kg', encodingUnit: 'g', pluSet: ['12345'], taxCategory: 'reduced' },
    { sku: 'HAM', name: 'Schinken', pluSet: ['54321'], taxCategory: 'reduced' },
    { sku: 'ROLL', name: 'Brötchen', referenceUnit: 'piece', pluSet: ['777'], taxCategory: 'reduced' },
    { sku: 'CHOC', name: 'Schokolade', taxCategory: 'normal' },
    { sku: 'TOBACCO', name: 'Tabak', taxCategory: 'normal', allowedOnDeviceTypes: ['pos'] },
    { sku: 'STOPPED', name: 'Rückruf', taxCategory: 'normal', saleStop: true },
    { sku: 'AT-CASHIER', name: 'Pfandbon', taxCategory: 'normal', notForSale: true, scanMessage: 'Bitte an der Kasse bezahlen' },
    { sku: 'WINE', name: 'Rotwein', taxCategory: 'normal', maxSaleQuantity: 6, saleRestriction: 'min_age_18' },
    { sku: 'LUXURY', name: 'Luxus', taxCategory: 'luxury' },
    { sku: 'NOPRICE', name: 'Ohne Preis', taxCategory: 'normal' },
    { sku: 'MANUAL', name: 'Freie Eingabe', taxCategory: 'normal', priceEntryRequired: true },
  ]),
});
await svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson([
    { sku: 'MILK', category: 'default', prices: [eur('1.19')] },
    { sku: 'DEP-015', category: 'default', prices: [eur('0.15')] },
    { sku: 'WATER', category: 'default', prices: [eur('0.99'), eur('0.79', { quantity: 3 })] },
    { sku: 'WATER', category: 'summer', prices: [eur('0.89')] },
    { sku: 'APPLE', category: 'default', prices: [eur('2.99')] },
    { sku: 'CHEESE', category: 'default', prices: [eur('14.90')] },
    { sku: 'HAM', category: 'default', prices: [eur('3.99')] },
    { sku: 'ROLL', category: 'default', prices: [eur('0.35')] },
    { sku: 'TOBACCO', category: 'default', prices: [eur('7.00')] },
    { sku: 'WINE', category: 'default', prices: [eur('5.99')] },
    { sku: 'LUXURY', category: 'default', prices: [eur('99.00')] },
  ]),
});
await svc.request('PUT', `${p}/pricing/products/sku/CHOC`, { token: admin, body: { sku: 'CHOC', prices: [{ category: 'default', listPrice: 199, customerCardPrice: 149 }] } });

/** What a refused verification rejects with (tap matches an error by its name and fields). */
const refused = (type: string) => ({ name: 'AppError', type });
const info = (cart: object) => svc.request('POST', `${p}/checkout/info`, { token, body: cart });
const lines = (res: { body: { checkoutInfo: { lineItems: Array<Record<string, unknown>> } } }) =>
  res.body.checkoutInfo.lineItems.map((l) => `${l.id} ${l.type} ${l.sku} ${l.amount}×${l.price}=${l.totalPrice} @${l.taxRate}`);

t.test('prices a cart by SKU, code, PLU and in-store codes, with deposits, quantity prices and weights, and hand-computed totals', async (t) => {
  const res = await info({
    shopID: 's2',
    session: 'sess-1',
    clientID: 'phone-1',
    appUserID: 'user-1',
    items: [
      { id: 'a', scannedCode: milkCode, amount: 2 },
      { id: 'b', sku: 'WATER', amount: 2 },
      { id: 'c', sku: 'WATER', amount: 1 },
      { id: 'd', scannedCode: '4011', amount: 1, weight: 1234, weightUnit: 'g' },
      { id: 'e', scannedCode: cheeseByWeight, amount: 1 },
      { id: 'f', scannedCode: hamByPrice, amount: 1 },
      { id: 'g', scannedCode: rollsByUnits, amount: 1 },
    ],
  });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.same(lines(res), [
    'a default MILK 2×119=238 @7',
    'a-deposit deposit DEP-015 2×15=30 @19',
    'b default WATER 2×79=158 @19', // 3 counted across items b and c: the price from 3 on
    'c default WATER 1×79=79 @19',
    'd default APPLE 1×299=369 @7', // 2.99/kg × 1.234 kg = 3.68966
    'e default CHEESE 1×1490=373 @7', // 14.90/kg × 0.250 kg = 3.725, half away from zero
    'f default HAM 1×499=499 @7', // the price in the code, not the 3.99 of the catalog
    'g default ROLL 1×35=210 @7', // 6 units × 0.35
  ]);
  const { checkoutInfo } = res.body;
  t.same(checkoutInfo.price, {
    tax: { '19': 43, '7': 110 }, // 267 × 19/119 = 42.63; 1689 × 7/107 = 110.495
    taxNet: { '19': 224, '7': 1579 },
    taxPre: { '19': 267, '7': 1689 },
    netPrice: 1803,
    price: 1956,
  });
  t.match(checkoutInfo, {
    session: 'sess-1',
    clientID: 'phone-1',
    appUserID: 'user-1',
    shopID: 's2',
    project: TestProject,
    shop: { externalId: 'E-s2', name: 'Shop s2', city: 'Berlin', street: 'Torstraße 1', email: '', phone: '', zip: '', state: '', country: '' },
    customer: {},
    availableMethods: ['cash', 'girocard'],
    currency: 'EUR',
  });
  t.ok(Math.abs(Date.parse(checkoutInfo.createdAt) - Date.now()) < 10_000);
  t.same(res.body.links, { checkoutProcess: { href: `${p}/checkout/process` } });

  const [milk, deposit, , , apple, cheese, ham, rolls] = checkoutInfo.lineItems;
  t.same(milk, {
    id: 'a', type: 'default', refersTo: null, sku: 'MILK', amount: 2, weight: 0, units: 0,
    price: 119, priceOrigin: 'master', totalPrice: 238, name: 'Milch 1 l', taxRate: '7', scannedCode: milkCode, saleRestriction: '',
  }, 'every field of the spec\'s LineItem');
  t.match(deposit, { type: 'deposit', refersTo: 'a', sku: 'DEP-015', name: 'Pfand 0,15' });
  t.match(apple, { weight: 1234, weightUnit: 'g', referenceUnit: 'kg', priceOrigin: 'master' });
  t.match(cheese, { weight: 250, weightUnit: 'g', referenceUnit: 'kg', scannedCode: cheeseByWeight });
  t.match(ham, { priceOrigin: 'client', price: 499 });
  t.match(rolls, { units: 6, referenceUnit: 'piece' });
  // The edge sends the worker's JSON on unchanged: it must still be the contract's shape.
  t.match(res.headers.get('content-type'), /^application\/json/);
  const contract = SignedCheckoutInfo.safeParse(res.body);
  t.ok(contract.success, contract.error?.message ?? 'the reply follows SignedCheckoutInfo');
});

t.test('uses the shop\'s categories: the first one with a price wins over default', async (t) => {
  const res = await info({ shopID: 's1', items: [{ sku: 'WATER', amount: 3 }] });
  t.same(lines(res), ['1 default WATER 3×89=267 @19'], 'summer\'s 0.89 in shop s1, although default has 0.79 from 3 on');
});

t.test('gives the customer-card price of legacy pricing only with a loyalty card', async (t) => {
  t.same(lines(await info({ shopID: 's2', items: [{ sku: 'CHOC', amount: 1 }] })), ['1 default CHOC 1×199=199 @19']);
  const carded = await info({ shopID: 's2', items: [{ sku: 'CHOC', amount: 1 }], customer: { loyaltyCard: 'CARD-42' } });
  t.same(lines(carded), ['1 default CHOC 1×149=149 @19']);
  t.same(carded.body.checkoutInfo.customer, { loyaltyCard: 'CARD-42' });
});

t.test('takes the client\'s price for a product whose price is entered', async (t) => {
  const res = await info({ shopID: 's2', items: [{ sku: 'MANUAL', amount: 2, price: 250 }] });
  t.same(lines(res), ['1 default MANUAL 2×250=500 @19']);
  t.equal(res.body.checkoutInfo.lineItems[0].priceOrigin, 'client');
});

t.test('sells a product restricted to a device type on that device only', async (t) => {
  const pos = await info({ shopID: 's2', deviceType: 'pos', items: [{ sku: 'TOBACCO', amount: 1 }] });
  t.equal(pos.status, 200);
});

t.test('refuses every bad item at once with invalid_cart_item', async (t) => {
  const wrongCheckDigit = `${cheeseByWeight.slice(0, 12)}${(Number(cheeseByWeight.at(-1)) + 1) % 10}`;
  const res = await info({
    shopID: 's2',
    items: [
      { id: 'ok', sku: 'WATER', amount: 1 },
      { id: 'unknown-sku', sku: 'NOPE', amount: 1 },
      { id: 'unknown-code', scannedCode: '999999999', amount: 1 },
      { id: 'bad-digit', scannedCode: wrongCheckDigit, amount: 1 },
      { id: 'stopped', sku: 'STOPPED', amount: 1 },
      { id: 'cashier', sku: 'AT-CASHIER', amount: 1 },
      { id: 'deposit', sku: 'DEP-015', amount: 1 },
      { id: 'device', sku: 'TOBACCO', amount: 1 },
      { id: 'wine1', sku: 'WINE', amount: 4 },
      { id: 'wine2', sku: 'WINE', amount: 3 },
      { id: 'tax', sku: 'LUXURY', amount: 1 },
      { id: 'price', sku: 'NOPRICE', amount: 1 },
      { id: 'weight', scannedCode: '4011', amount: 1 },
      { id: 'manual', sku: 'MANUAL', amount: 1 },
    ],
  });
  t.equal(res.status, 400);
  t.equal(res.body.type, 'invalid_cart_item');
  t.same(
    res.body.details.map((d: { id: string; sku: string; type: string }) => `${d.id} ${d.sku} ${d.type}`).sort(),
    [
      'bad-digit  invalid_code',
      'cashier AT-CASHIER not_for_sale',
      'deposit DEP-015 deposit_alone',
      'device TOBACCO device_not_allowed',
      'manual MANUAL no_price',
      'price NOPRICE no_price',
      'stopped STOPPED sale_stop',
      'tax LUXURY no_tax_rate',
      'unknown-code  product_not_found',
      'unknown-sku NOPE product_not_found',
      'weight APPLE weight_required',
      'wine1 WINE max_sale_quantity',
    ].sort(),
  );
  const byId = Object.fromEntries(res.body.details.map((d: { id: string; message: string }) => [d.id, d.message]));
  t.equal(byId.cashier, 'Bitte an der Kasse bezahlen', 'the product\'s scan message');
  t.match(byId.wine1, /at most 6/);
});

t.test('answers bad_shop_id, shop_not_found and bad_request for a bad cart', async (t) => {
  const missing = await info({ items: [{ sku: 'WATER', amount: 1 }] });
  t.equal(missing.status, 400);
  t.equal(missing.body.type, 'bad_shop_id');
  t.equal((await info({ shopID: 'not a shop/id', items: [{ sku: 'WATER', amount: 1 }] })).body.type, 'bad_shop_id');
  t.equal((await info({ shopID: 42, items: [{ sku: 'WATER', amount: 1 }] })).body.type, 'bad_shop_id');

  const unknown = await info({ shopID: 'nowhere', items: [{ sku: 'WATER', amount: 1 }] });
  t.equal(unknown.status, 404);
  const notFound = { type: 'shop_not_found', message: 'no shop with id nowhere' };
  t.same(unknown.body, { ...notFound, error: notFound }, 'the fields, and again under error where the app SDKs read them');

  const bad = await info({ shopID: 's2', items: [{ sku: 'WATER', amount: 0 }, { amount: 1 }, { sku: 'WATER', amount: 1, weight: 'heavy' }] });
  t.equal(bad.status, 400);
  t.equal(bad.body.type, 'bad_request');
  t.same(bad.body.details.map((d: { path: string }) => d.path).sort(), ['items.0.amount', 'items.1.sku', 'items.2.weight']);
  t.ok(bad.body.details.every((d: { type: string }) => d.type === 'invalid_field'), 'every detail has a type');
  t.same(bad.body.error.details, bad.body.details);
  const empty = await info({ shopID: 's2', items: [] });
  t.equal(empty.status, 200, 'an empty cart is priced');
  t.equal(empty.body.checkoutInfo.price.price, 0);
  t.equal((await info({ shopID: 's2', items: [{ id: 'x', sku: 'WATER', amount: 1 }, { id: 'x', sku: 'WATER', amount: 1 }] })).status, 400, 'repeated item ids');
});

t.test('answers no_available_method when the project offers no payment method', async (t) => {
  await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: [] } });
  t.teardown(() => svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'] } }));
  const res = await info({ shopID: 's2', items: [{ sku: 'WATER', amount: 1 }] });
  t.equal(res.status, 400);
  t.equal(res.body.type, 'no_available_method');
});

t.test('signs the checkout info so that any change fails verification', async (t) => {
  const res = await info({ shopID: 's2', items: [{ sku: 'WATER', amount: 2 }, { scannedCode: milkCode, amount: 1 }] });
  const { checkoutInfo, signature } = res.body;
  const ttlMs = 3_600_000;
  t.match(signature, /^[\w-]+\.\.[\w-]+$/, 'a JWS with a detached payload');
  t.equal(JSON.parse(Buffer.from(signature.split('.')[0], 'base64url').toString()).typ, 'checkout-info+jws');
  t.doesNotThrow(() => verifyCheckoutInfo(checkoutInfo, signature, key, { ttlMs }));

  // A standard JWS: with the payload put back, a JWS library accepts it.
  const [header, , mac] = signature.split('.');
  const attached = `${header}.${Buffer.from(canonicalize(checkoutInfo) as string).toString('base64url')}.${mac}`;
  const verified = await compactVerify(attached, key, { algorithms: ['HS256'] });
  t.equal(verified.protectedHeader.typ, 'checkout-info+jws');

  // Clients parse and re-serialize: another key order is the same checkout info.
  const reordered = Object.fromEntries(Object.entries(checkoutInfo).reverse());
  t.doesNotThrow(() => verifyCheckoutInfo(JSON.parse(JSON.stringify(reordered)), signature, key, { ttlMs }));

  const changed = (edit: (info: typeof checkoutInfo) => void) => () => {
    const copy = structuredClone(checkoutInfo);
    edit(copy);
    verifyCheckoutInfo(copy, signature, key, { ttlMs });
  };
  t.throws(changed((i) => (i.lineItems[0].price -= 1)), refused('invalid_signature'), 'a price');
  t.throws(changed((i) => (i.lineItems[0].amount += 1)), refused('invalid_signature'), 'an amount');
  t.throws(changed((i) => i.lineItems.pop()), refused('invalid_signature'), 'a line item removed');
  t.throws(changed((i) => (i.price.price = 0)), refused('invalid_signature'), 'the total');
  t.throws(changed((i) => i.availableMethods.push('free')), refused('invalid_signature'), 'a payment method');
  t.throws(() => verifyCheckoutInfo(checkoutInfo, signature, new TextEncoder().encode('another-key-another-key-another-key'), { ttlMs }), refused('invalid_signature'), 'another key');
  t.throws(() => verifyCheckoutInfo(checkoutInfo, 'garbage', key, { ttlMs }), refused('invalid_signature'));
  const noneAlg = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'checkout-info+jws' })).toString('base64url')}..${signature.split('.')[2]}`;
  t.throws(() => verifyCheckoutInfo(checkoutInfo, noneAlg, key, { ttlMs }), refused('invalid_signature'), 'another algorithm');
  t.throws(
    () => verifyCheckoutInfo(checkoutInfo, signature, key, { ttlMs, now: new Date(Date.parse(checkoutInfo.createdAt) + ttlMs + 1) }),
    refused('checkout_info_expired'),
    'older than its time to live',
  );
});

t.test('needs productsRead and reads or changes nothing otherwise', async (t) => {
  const res = await svc.request('POST', `${p}/checkout/info`, { token: await svc.token(['shopsRead']), body: { shopID: 's2', items: [{ sku: 'WATER', amount: 1 }] } });
  t.equal(res.status, 403);
  t.equal(res.body.type, 'forbidden');
});
