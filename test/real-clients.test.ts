import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import type { z } from 'zod';
import * as decoders from './real-clients/sdk-decoders.js';
import * as samples from './real-clients/samples.js';
import { sdkBase32Decode, sdkTotp } from './support/app-sdk.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * The public API's documented samples and the requests the public app SDKs send, against the
 * platform: every request is accepted and round-trips, and every answer the SDKs decode passes the
 * decoders written down (from the SDK sources) in real-clients/sdk-decoders.ts.
 */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'shopsRead', 'projectsWrite', 'productsRead', 'availabilitiesWrite', 'pricingCategoriesWrite']);
const app = await svc.token(['productsRead', 'checkoutRead']);
const payment = await svc.token(['setPaymentState']);
const pos = await svc.token(['checkoutRead', 'updatePricingCheckoutProcess']);
const supervisor = await svc.token(['supervisor', 'updatePricingCheckoutProcess', 'setPaymentState']);

const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });

/** The same JSON value with the members of every object in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversedKeys(v)]));
}

/** Asserts that `value` decodes with an SDK decoder, naming the first problem when it does not. */
function decodes(t: Test, decoder: z.ZodType, value: unknown, what: string): void {
  const result = decoder.safeParse(value);
  t.ok(result.success, `${what}${result.success ? '' : `: ${result.error.issues.slice(0, 3).map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`}`);
}

// A catalog with the products the SDK samples scan: a soda with its deposit, a weighed apple, rolls
// priced per piece, a price-encoded sausage selection, a product whose label carries a price.
await svc.request('PUT', `${p}/settings`, {
  token: admin,
  body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['qrCodePOS', 'deDirectDebit', 'creditCardVisa'] },
});
const sdkShop = await svc.request('POST', `${p}/shops`, { token: admin, body: { ...samples.SdkFixtureMetadataShops[0], id: '1774' } });
const catalog = [
  ...samples.DocsDerivedDepositProducts,
  samples.DocsDerivedWeighableProductV2,
  // The docs' price-encoded product names no tax category; a sale needs one.
  { ...samples.DocsDerivedPriceEncodedProductV2, taxCategory: 'reduced' },
  { sku: 'rolls', name: 'Brötchen', taxCategory: 'reduced', referenceUnit: 'piece', encodingUnit: 'piece' },
  { sku: '48', name: 'duplo white', taxCategory: 'normal', codes: [{ code: '42276630', template: 'default' }] },
];
const catalogImport = await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson(catalog) });
const price = (sku: string, amount: string) => ({ sku, category: 'default', prices: [{ price: amount, currency: 'EUR', tier: 'list' }] });
await svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson([price('51', '1.80'), price('49', '0.08'), price('53', '3.90'), price('rolls', '0.45'), price('48', '0.35'), price('52', '10.80'), price('50', '0.48')]),
});

t.test('the documented shop sample and the shops of the SDK fixtures are accepted and round-trip', async (t) => {
  const created = await svc.request('POST', `${p}/shops`, { token: admin, body: samples.DocsShop });
  t.equal(created.status, 201, `the docs' shop (email "email1"): ${created.text}`);
  const { project: _project, links: _links, ...sent } = samples.DocsShop;
  t.match(created.body, sent, 'every field as sent');
  t.equal(sdkShop.status, 201, `an SDK fixture shop (external null, HH:MM:SS, Tuesday): ${sdkShop.text}`);
  const list = await svc.request('GET', `${p}/shops`, { token: admin });
  for (const shop of list.body) decodes(t, decoders.IosShop, shop, `shop ${shop.id} decodes as the iOS SDK's Shop`);
  decodes(t, decoders.IosActiveShops, { shops: list.body }, 'the list decodes whole');
  const stored = list.body.find((s: any) => s.id === '1774');
  t.same(stored.openingHoursSpecification, samples.SdkFixtureMetadataShops[0]!.openingHoursSpecification, 'opening hours returned as they came');
  t.same(stored.external, {}, 'external: null is an empty object');
});

t.test('the documented products and the products the SDK samples need are imported and round-trip', async (t) => {
  t.ok(catalogImport.body.every((r: any) => r.status === 'ok'), `every line ok: ${catalogImport.text}`);
  // v1 and v2 samples share their SKU: v1 first, so that v2 (the later write) is what stands.
  const v1 = await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson([samples.DocsProductV1, samples.SdkFixtureResolvedProduct]) });
  t.same(v1.body.map((r: any) => r.status), ['ok', 'ok'], `the deprecated v1 sample (depositProduct null) and an SDK fixture: ${v1.text}`);
  const docs = await svc.request('POST', `${p}/products`, { token: admin, body: samples.DocsProductV2 });
  t.equal(docs.status, 200, docs.text);
  const v2 = await svc.request('GET', `${p}/products/sku/${samples.DocsProductV2.sku}`, { token: admin });
  const { project: _project, ...sent } = samples.DocsProductV2;
  t.match(v2.body, sent, 'the v2 sample as sent');
  const priceEncoded = await svc.request('GET', `${p}/products/sku/sausage-mix`, { token: admin });
  t.match(priceEncoded.body, { encodingUnit: 'price', codes: [{ code: '292929', encodingUnit: 'price' }] }, 'encodingUnit price is stored');
});

t.test('the documented pricing samples are accepted', async (t) => {
  const category = await svc.request('POST', `${p}/pricing/categories`, { token: admin, body: samples.DocsPricingCategory });
  t.equal(category.status, 201, category.text);
  const pricing = await svc.request('PUT', `${p}/pricing/products/sku/${samples.DocsPricing.sku}`, { token: admin, body: samples.DocsPricing });
  t.equal(pricing.status, 200, pricing.text);
  const batch = await svc.request('POST', `${p}/pricing/products/_batch`, { token: admin, ...ndjson([samples.DocsPricingBatchUpdate]) });
  t.same(batch.body.map((r: any) => r.status), ['ok']);
  const prices = await svc.request('POST', `${p}/pricing/_batch`, { token: admin, ...ndjson([samples.DocsPriceBatchUpdate]) });
  t.same(prices.body.map((r: any) => r.status), ['ok']);
});

/** Checkout info for a cart as an SDK sends it, with the SDKs' header. */
const checkoutInfo = (cart: object) => svc.request('POST', `${p}/checkout/info`, { headers: { 'client-token': app }, body: cart });

for (const [name, cart] of [['iOS', samples.IosCartRequest], ['Android', samples.AndroidCartRequest]] as const) {
  t.test(`prices the cart the ${name} SDK sends, in the answer both SDKs decode`, async (t) => {
    const res = await checkoutInfo(cart);
    t.equal(res.status, 200, res.text);
    decodes(t, decoders.IosSignedCheckoutInfoKept, res.body, 'decodes as the iOS SDK, every payment method kept');
    decodes(t, decoders.AndroidSignedCheckoutInfo, res.body, 'decodes as the Android SDK');
    const info = res.body.checkoutInfo;
    const productIds = cart.items.filter((i: any) => !('couponID' in i) && i.type !== 'depositReturnVoucher').map((i) => i.id);
    t.same(info.lineItems.filter((l: any) => l.type === 'default').map((l: any) => l.id), productIds, 'line item ids are the cart item ids');
    const byId = Object.fromEntries(info.lineItems.map((l: any) => [l.id, l]));
    const [soda, apple, rolls, sausage] = productIds.map((id) => byId[id!]);
    t.match(soda, { sku: '51', amount: 2, price: 180, totalPrice: 360, priceOrigin: 'master' });
    t.match(info.lineItems.find((l: any) => l.type === 'deposit'), { sku: '49', refersTo: soda.id, totalPrice: 16 });
    t.match(apple, { sku: '53', weight: 720, weightUnit: 'g', referenceUnit: 'kg', price: 390, totalPrice: 281 }, 'the weight the app decoded: 720 g × 3.90/kg');
    t.match(rolls, { sku: 'rolls', units: 6, price: 45, totalPrice: 270 }, 'the units the app decoded');
    t.match(sausage, { sku: 'sausage-mix', price: 129, totalPrice: 129, priceOrigin: 'client' }, 'the price the app decoded from a price-encoded code');
    if (name === 'iOS') t.match(byId[productIds[4]!], { sku: '48', price: 25, totalPrice: 25, priceOrigin: 'client' }, 'a price from a label');
    t.same(info.requiredInformation, cart.requiredInformation, 'requiredInformation answered back');
    const couponItems = cart.items.filter((i: any) => 'couponID' in i);
    t.same(
      info.violations.filter((v: any) => v.type === 'coupon_invalid').map((v: any) => v.refersTo),
      couponItems.map((i) => i.id),
      'each unknown coupon is a violation, not a refusal',
    );
    t.match(info.violations.find((v: any) => v.refersTo === cart.items.at(-1)!.id), { type: 'invalid_line_item' }, 'so is the voucher');
    t.same(info.paymentMethods.map((m: any) => m.id), info.availableMethods, 'paymentMethods: the availableMethods as the SDKs decode them');
  });
}

t.test("prices the documented cart sample (in a shop with the docs' products)", async (t) => {
  await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 'shop-01', name: 'Docs shop' } });
  const products = [
    { sku: '1', name: 'Kugelschreiber', taxCategory: 'normal', codes: [{ code: '0000000000001' }] },
    { sku: '2', name: 'Käse', taxCategory: 'reduced', referenceUnit: 'kg', encodingUnit: 'g' },
    { sku: '3', name: 'Cap', taxCategory: 'normal' },
    { sku: '4', name: 'Eier', taxCategory: 'reduced', referenceUnit: 'piece' },
    { sku: '5', name: 'Aufschnitt', taxCategory: 'reduced', encodingUnit: 'price' },
  ];
  await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson(products) });
  await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, ...ndjson([price('1', '3.99'), price('2', '19.90'), price('3', '10.99'), price('4', '0.30')]) });
  const res = await checkoutInfo(samples.DocsCart);
  t.equal(res.status, 200, res.text);
  t.same(
    res.body.checkoutInfo.lineItems.map((l: any) => [l.sku, l.totalPrice, l.priceOrigin]),
    [['1', 798, 'master'], ['2', 203, 'master'], ['3', 46158, 'master'], ['4', 180, 'master'], ['5', 129, 'client']],
    '102 g × 19.90/kg, 6 × 0.30, the price from the code',
  );
  t.same(res.body.checkoutInfo.lineItems.map((l: any) => l.id), ['1', '2', '3', '4', '5'], 'items without ids are numbered');
  decodes(t, decoders.IosSignedCheckoutInfoKept, res.body, 'decodes as the iOS SDK');
  const ours = res.body;
  for (const key of Object.keys(samples.DocsSignedCheckoutInfo.checkoutInfo)) t.ok(key in ours.checkoutInfo, `the answer has the documented ${key}`);
  for (const key of Object.keys(samples.DocsSignedCheckoutInfo.checkoutInfo.price)) t.ok(key in ours.checkoutInfo.price, `and price.${key}`);
});

t.test('answers cart errors where both SDKs read them', async (t) => {
  const res = await checkoutInfo({ shopID: '1774', items: [{ id: 'x', sku: 'unknown-sku', amount: 1 }] });
  t.equal(res.status, 400);
  decodes(t, decoders.ApiErrorEnvelope, res.body, 'the wrapped error both SDKs understand');
  decodes(t, decoders.IosApiError, res.body, 'iOS');
  decodes(t, decoders.AndroidApiError, res.body, 'Android');
  t.match(res.body, { type: 'invalid_cart_item', details: [{ sku: 'unknown-sku', type: 'product_not_found', id: 'x' }] }, 'the spec\'s fields at the top as well');
  const noShop = await checkoutInfo({ ...samples.AndroidCartRequest, shopID: 'unknown' });
  t.match(noShop.body, { error: { type: 'shop_not_found' } }, 'Android\'s "unknown" shop');
});

t.test('goes through the SDKs\' checkout flow: PUT {href}/{uuid}, the same again, GET after a 409, polling, abort', async (t) => {
  for (const [name, body] of [['iOS', samples.IosCreateCheckoutProcessPut.body], ['Android', samples.AndroidCreateCheckoutProcessPut.body]] as const) {
    const signed = (await checkoutInfo(samples.IosCartRequest)).body;
    const uuid = randomUUID().toUpperCase();
    const url = `${signed.links.checkoutProcess.href}/${uuid}`;
    // The apps send the checkout info back re-serialized: other key order, same values.
    const resent = reversedKeys(signed);
    const request = { ...body, signedCheckoutInfo: resent };
    const created = await svc.request('PUT', url, { headers: { 'client-token': app }, body: request });
    t.equal(created.status, 201, `${name}: ${created.text}`);
    decodes(t, decoders.IosCheckoutProcessKept, created.body, `${name}: the process decodes as the iOS SDK`);
    decodes(t, decoders.AndroidCheckoutProcess, created.body, `${name}: and as the Android SDK`);
    t.equal(created.body.links.self.href, url, 'its self link is where it was PUT');
    t.same(created.body.paymentInformation, { ...body.paymentInformation, qrCodeContent: `service:${uuid}` }, 'what the app sent, with the PoS handover code');

    const again = await svc.request('PUT', url, { headers: { 'client-token': app }, body: request });
    t.equal(again.status, 200, `${name}: the same PUT again (a retry)`);
    t.same(again.body, created.body);
    const other = await svc.request('PUT', url, { headers: { 'client-token': app }, body: { ...request, paymentMethod: 'qrCodePOS' } });
    t.equal(other.status, 409, `${name}: another request for the id`);
    decodes(t, decoders.ApiErrorEnvelope, { error: { ...other.body.error, details: other.body.error.details ?? undefined } }, 'a 409 the SDKs read');
    const fallback = await svc.request('GET', url, { headers: { 'client-token': app } });
    t.equal(fallback.status, 200, `${name}: after a 403/409 the SDKs GET the same URL`);
    t.same(fallback.body, created.body);

    const polled = await svc.request('GET', created.body.links.self.href, { headers: { 'client-token': app } });
    decodes(t, decoders.IosCheckoutProcessKept, polled.body, `${name}: polling links.self`);
    const aborted = await svc.request('PATCH', created.body.links.self.href, { headers: { 'client-token': app }, body: samples.SdkAbortPatch.body });
    t.equal(aborted.status, 200);
    decodes(t, decoders.IosCheckoutProcessKept, aborted.body, `${name}: the abort answers the full process`);
    t.match(aborted.body, { aborted: true, paymentState: 'failed', orderID: uuid });
  }
});

t.test('lets a payment system report success for a pending process, and a PoS complete an age-restricted one', async (t) => {
  await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson([{ sku: 'wine', name: 'Rotwein', taxCategory: 'normal', saleRestriction: 'min_age_18' }]) });
  await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, ...ndjson([price('wine', '5.99')]) });
  const start = async (items: object[]) => {
    const signed = (await checkoutInfo({ shopID: '1774', items })).body;
    return (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: signed, paymentMethod: 'qrCodePOS' } })).body;
  };
  const plain = await start([{ sku: '48', amount: 1 }]);
  const paid = await svc.request('PATCH', `${p}/checkout/process/${plain.id}`, { token: payment, body: samples.DocsSetPaymentStateRequest });
  t.equal(paid.status, 200, `pending → successful: ${paid.text}`);
  t.match(paid.body, { paymentState: 'successful', orderID: plain.id, links: { receipt: { href: `${p}/orders/${plain.id}/receipt` } } });
  decodes(t, decoders.IosCheckoutProcessKept, paid.body, 'decodes');

  const wine = await start([{ sku: 'wine', amount: 1 }]);
  t.match(wine, { routingTarget: 'supervisor', checks: [{ type: 'min_age', requiredAge: 18, state: 'pending' }] });
  decodes(t, decoders.AndroidCheckoutProcess, wine, 'a process waiting for its check decodes');
  const processing = await svc.request('PATCH', `${p}/pos/checkout/id/${wine.id}`, {
    token: pos,
    headers: { 'content-type': 'application/merge-patch+json' },
    body: samples.DocsPosPatchProcessing,
  });
  t.equal(processing.status, 200, processing.text);
  const figures = { ...samples.DocsPosPatchSuccessful, lineItems: [{ sku: 'wine', scannedCode: '', amount: 1, price: 599, totalPrice: 599, taxRate: 19 }], tax: { '19': 96 }, taxNet: { '19': 503 }, netPrice: 503, price: 599 };
  const done = await svc.request('PATCH', `${p}/pos/checkout/id/${wine.id}`, { token: pos, headers: { 'content-type': 'application/merge-patch+json' }, body: figures });
  t.equal(done.status, 200, `the PoS completes it in the shape of the PoS documentation (price, tax, taxNet, numeric rates): ${done.text}`);
  t.match(done.body, { state: 'successful', totalPrice: 599, taxShares: [{ rate: '19', net: 503, share: 96, total: 599 }], loyaltyCard: '12345678' });
  const after = (await svc.request('GET', `${p}/checkout/process/${wine.id}`, { token: app })).body;
  t.match(after, { supervisorApproval: true, checks: [{ state: 'successful', performedBy: samples.DocsPosPatchProcessing.processedBy }] }, 'the cashier checked the age');
  decodes(t, decoders.AndroidCheckoutProcess, after, 'a check performed by a PoS decodes (performedBy is any string)');
});

t.test('takes the documented pricing update and the PoS walkthrough\'s PATCH of pricing and payment at once', async (t) => {
  const signed = (await checkoutInfo({ shopID: '1774', items: [{ sku: '48', amount: 2 }] })).body;
  const process = (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: signed, paymentMethod: 'qrCodePOS' } })).body;
  const updated = await svc.request('PATCH', `${p}/checkout/process/${process.id}`, { token: supervisor, body: samples.DocsUpdatePricingRequest });
  t.equal(updated.status, 200, updated.text);
  t.match(updated.body.pricing, { lineItems: [{ id: 'line-1', type: 'default', taxRate: '19', totalPrice: 399 }], price: { price: 399, netPrice: 335, tax: { '19': 64 } } }, 'what the apps need is derived');
  decodes(t, decoders.IosCheckoutProcessKept, updated.body, 'decodes');

  const next = (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: (await checkoutInfo({ shopID: '1774', items: [{ sku: '48', amount: 1 }] })).body, paymentMethod: 'qrCodePOS' } })).body;
  const both = await svc.request('PATCH', `${p}/checkout/process/${next.id}`, { token: supervisor, body: samples.DocsExamplePosPatchRequest });
  t.equal(both.status, 200, both.text);
  t.match(both.body, { paymentState: 'successful', modified: true, pricing: { price: { price: 399 } } });
  const order = await svc.request('GET', `${p}/orders/${next.id}`, { token: await svc.token(['ordersRead']) });
  t.match(order.body, { state: 'final', paidAmount: 399 });
});

t.test('refuses text Postgres cannot store with a 400 naming the field, and keeps the good lines of a batch', async (t) => {
  const shopsBefore = (await svc.request('GET', `${p}/shops`, { token: admin })).body.length;
  const named = await svc.request('POST', `${p}/shops`, { token: admin, body: { name: 'Bad\u0000Shop' } });
  t.equal(named.status, 400, named.text);
  t.match(named.body, { type: 'bad_request', message: /name/ });
  const external = await svc.request('POST', `${p}/shops`, { token: admin, body: { name: 'Shop', external: { note: { deep: 'a\u0000b' } } } });
  t.equal(external.status, 400);
  t.match(external.body.message, /external\.note\.deep/);
  const surrogate = await svc.request('POST', `${p}/shops`, { token: admin, raw: '{"name":"\\ud800"}', headers: { 'content-type': 'application/json' } });
  t.equal(surrogate.status, 400, 'a lone surrogate');
  t.equal((await svc.request('GET', `${p}/shops`, { token: admin })).body.length, shopsBefore, 'no shop stored');

  const batch = await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson([{ sku: 'nul-1', name: 'Good' }, { sku: 'nul-2', name: 'Bad\u0000' }]) });
  t.equal(batch.status, 200);
  t.same(batch.body.map((r: any) => [r.sku, r.status]), [['nul-1', 'ok'], ['nul-2', 'error']]);
  t.match(batch.body[1].message, /^name .*U\+0000/);
  t.equal((await svc.request('GET', `${p}/products/sku/nul-1`, { token: admin })).status, 200, 'the good line is stored');
  t.equal((await svc.request('GET', `${p}/products/sku/nul-2`, { token: admin })).status, 404, 'the bad one is not');
});

t.test("the SDKs' sign-in: their own fixtures pass the decoders written down, and the platform's metadata, app user and token answers do too", async (t) => {
  decodes(t, decoders.AndroidMetadata, samples.SdkFixtureMetadata, "the Android SDK's own metadata fixture decodes as Android decodes it");
  decodes(t, decoders.AppUserAndToken, samples.SdkFixtureUsersResponse, "the iOS SDK's own app user fixture decodes");
  t.notOk(decoders.AndroidMetadata.safeParse({ ...samples.SdkFixtureMetadata, projects: [{ ...samples.SdkFixtureMetadata.projects[0], customerCards: undefined }] }).success, 'a project without customerCards is lost on Android');
  t.notOk(decoders.IosMetadata.safeParse(samples.SdkFixtureMetadata).success, 'iOS needs more of a project than the Android fixture has (its name)');

  const owner = await svc.token(['projectsWrite']);
  const made = await svc.request('POST', `${p}/clients`, { token: owner, body: { kind: 'app', name: 'SDK-App' } });
  t.equal(made.status, 201, made.text);
  const metadata = await svc.request('GET', `/metadata/app/${made.body.id}/android/4.2.0`);
  decodes(t, decoders.AndroidMetadata, metadata.body, "the platform's metadata decodes as Android decodes it");
  decodes(t, decoders.IosMetadata, metadata.body, 'and as iOS decodes it');
  for (const shop of metadata.body.projects[0].shops) decodes(t, decoders.IosShop, shop, `its shop ${shop.id} decodes as the iOS SDK's Shop`);
  const code = sdkTotp(sdkBase32Decode(made.body.secret), Math.floor(Date.now() / 1000));
  const basic = (...parts: string[]) => `Basic ${Buffer.from(parts.join(':')).toString('base64')}`;
  const user = await svc.request('POST', `${metadata.body.links.createAppUser.href}?project=${TestProject}`, { headers: { authorization: basic(made.body.id, code) } });
  t.equal(user.status, 201, user.text);
  decodes(t, decoders.AppUserAndToken, user.body, 'the new app user and its token decode as both SDKs decode them');
  const tokenPath = `${metadata.body.projects[0].links.tokens.href}?role=retailerApp`;
  const token = await svc.request('GET', tokenPath, { headers: { authorization: basic(made.body.id, code, user.body.appUser.id, user.body.appUser.secret) } });
  t.equal(token.status, 200, token.text);
  decodes(t, decoders.AppToken, token.body, 'a token decodes as both SDKs decode it');
  const self = await svc.request('GET', metadata.body.links.appUser.href.replace('{appUserID}', user.body.appUser.id), { headers: { 'client-token': token.body.token } });
  decodes(t, decoders.AppUserData, self.body, 'the app user decodes');
});
