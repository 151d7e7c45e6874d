import t, { type Test } from 'tap';
import { startTestService, TestProject } from './support/service.js';

/**
 * Promotions in checkout info, over HTTP: every kind of discount as line items of type promotion,
 * taxes that follow, a rule that asks for a supervisor, activation changing what the next checkout
 * info computes (and never a signed one), orders with the discount fields, and the evaluate
 * operation that explains a configuration rule by rule.
 */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite', 'promotionsWrite', 'promotionsRead']);
const app = await svc.token(['productsRead', 'checkoutRead', 'setPaymentState']);

const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash'] } });
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Markt', externalId: 'M-1' } });
const products = [
  { sku: 'COFFEE', name: 'Kaffee', taxCategory: 'reduced', isDiscountable: true, price: '2.00' },
  { sku: 'WINE', name: 'Wein', taxCategory: 'normal', isDiscountable: true, price: '8.00' },
  { sku: 'BOOK', name: 'Buch', taxCategory: 'reduced', price: '10.00' },
];
await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson(products.map(({ price: _price, ...product }) => product)) });
await svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson(products.map((x) => ({ sku: x.sku, category: 'default', prices: [{ price: x.price, currency: 'EUR', tier: 'list' }] }))),
});

const sku = (equals: string) => ({ type: 'hasSKU', args: { equals } });
const rule = (id: string, condition: object | undefined, actions: object[]) => ({ id, rankID: 'main', ...(condition ? { condition } : {}), actions });
async function activate(rules: object[]): Promise<number> {
  const created = await svc.request('POST', `${p}/promotions/configurations`, {
    token: admin,
    body: { rounding: { mode: 'halfUp', precision: 0 }, ranks: [{ id: 'main', evaluationMode: 'applyAll' }], groups: [{ id: 'g', rules }] },
  });
  if (created.status !== 201) throw new Error(created.text);
  await svc.request('POST', `${p}/promotions/configurations/${created.body.id}/activate`, { token: admin });
  return created.body.id;
}
const cart = { shopID: 's1', items: [{ id: 'c', sku: 'COFFEE', amount: 3 }, { id: 'w', sku: 'WINE', amount: 1 }, { id: 'b', sku: 'BOOK', amount: 1 }] };
const info = async () => {
  const res = await svc.request('POST', `${p}/checkout/info`, { token: app, body: cart });
  if (res.status !== 200) throw new Error(res.text);
  return res.body;
};

/** Σ line totals = price, and tax + net = gross per rate (the tax rules of design.md). */
function balanced(t: Test, checkoutInfo: any): void {
  const { price, lineItems } = checkoutInfo;
  t.equal(lineItems.reduce((sum: number, l: any) => sum + l.totalPrice, 0), price.price, 'Σ line totals = price');
  for (const rate of Object.keys(price.taxPre)) t.equal(price.tax[rate] + price.taxNet[rate], price.taxPre[rate], `tax + net = gross at ${rate} %`);
  t.equal(price.netPrice + Object.values(price.tax as Record<string, number>).reduce((a, b) => a + b, 0), price.price, 'net + Σ tax = price');
}

t.test('prices without promotions while no configuration is active', async (t) => {
  const { checkoutInfo } = await info();
  t.equal(checkoutInfo.price.price, 600 + 800 + 1000);
  t.notOk(checkoutInfo.lineItems.some((l: any) => l.type === 'promotion'));
});

t.test('applies a line discount, a percentage, a cart discount split over the rates, and a modified price', async (t) => {
  const configured = await activate([
    rule('coffee-off', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.50', isMultiusable: 'true', name: '50 Cent auf Kaffee' } }]),
    rule('wine-pct', sku('WINE'), [{ type: 'addLineItemDiscount', args: { value: '10', name: '10 % auf Wein' } }]),
    rule('cart', { type: 'totalGreaterThanOrEqual', args: { value: '5' } }, [{ type: 'addCartDiscount', args: { absolute: 'true', value: '1', name: '1 € ab 5 €' } }]),
  ]);
  const { checkoutInfo } = await info();
  const promotions = checkoutInfo.lineItems.filter((l: any) => l.type === 'promotion');
  t.match(promotions.find((l: any) => l.discountRuleID === 'coffee-off'), { refersTo: 'c', totalPrice: -150, name: '50 Cent auf Kaffee', taxRate: '7', discountType: 'absolute' }, '0.50 on each of 3 coffees');
  t.match(promotions.find((l: any) => l.discountRuleID === 'wine-pct'), { refersTo: 'w', totalPrice: -80, taxRate: '19', discountType: 'percentage' });
  const cartLines = promotions.filter((l: any) => l.discountRuleID === 'cart');
  t.same(cartLines.map((l: any) => l.refersTo), [null, null], 'a cart discount refers to nothing');
  t.equal(cartLines.reduce((s: number, l: any) => s + l.totalPrice, 0), -100, 'split over the rates');
  t.same(cartLines.map((l: any) => l.taxRate).sort(), ['19', '7']);
  t.notOk(promotions.some((l: any) => l.refersTo === 'b'), 'BOOK is not discountable: no line discount');
  t.ok(promotions.every((l: any) => l.discountID === `${configured}/${l.discountRuleID}`), 'each names its discount: configuration and rule');
  t.notOk(promotions.some((l: any) => 'weightUnit' in l || 'referenceUnit' in l), 'no empty units (the iOS SDK refuses an empty weightUnit)');
  t.equal(checkoutInfo.price.price, 2400 - 150 - 80 - 100);
  balanced(t, checkoutInfo);

  await activate([rule('cheap-coffee', sku('COFFEE'), [{ type: 'modifyPrice', args: { absolute: 'true', value: '1.50', name: 'Kaffee-Angebot', isMultiusable: 'true' } }])]);
  const modified = (await info()).checkoutInfo;
  t.match(modified.lineItems.find((l: any) => l.id === 'c'), { price: 150, totalPrice: 450, priceModifiers: [{ name: 'Kaffee-Angebot', method: 'promotion', price: 150 }] });
  balanced(t, modified);
});

t.test('asks for a supervisor when a rule says so', async (t) => {
  await activate([rule('control', sku('WINE'), [{ type: 'addForceControl' }])]);
  const signed = await info();
  t.equal(signed.checkoutInfo.forceControl, true);
  const process = (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: signed, paymentMethod: 'cash' } })).body;
  t.match(process, { supervisorApproval: null, routingTarget: 'supervisor', checks: [{ type: 'supervisor_approval', state: 'pending' }] });
  t.equal((await svc.request('PATCH', `${p}/checkout/process/${process.id}`, { token: app, body: { paymentState: 'successful' } })).status, 409, 'an app payment waits for the supervisor');
});

t.test('changes what the next checkout info computes on activation; a signed one keeps its prices', async (t) => {
  const first = await activate([rule('one', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '1', isMultiusable: 'true' } }])]);
  const before = await info();
  t.equal(before.checkoutInfo.price.price, 2400 - 300);
  await activate([rule('two', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.10', isMultiusable: 'true' } }])]);
  t.equal((await info()).checkoutInfo.price.price, 2400 - 30, 'the next checkout info uses the new configuration');
  const process = (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: before, paymentMethod: 'cash' } })).body;
  t.equal(process.pricing.price.price, 2100, 'a checkout info signed before keeps its prices');
  await svc.request('PATCH', `${p}/checkout/process/${process.id}`, { token: app, body: { paymentState: 'successful' } });
  const order = (await svc.request('GET', `${p}/orders/${process.id}`, { token: await svc.token(['ordersRead']) })).body;
  t.match(
    order.lineItems.find((l: any) => l.type === 'promotion'),
    { refersTo: 'c', discountID: `${first}/one`, discountRuleID: 'one', discountType: 'absolute', discountValue: 300, totalPrice: -300 },
    'the order carries the discount fields',
  );
  t.equal(order.paidAmount, 2100);
});

t.test('evaluates a configuration that is not active, rule by rule, without signing anything', async (t) => {
  const created = await svc.request('POST', `${p}/promotions/configurations`, {
    token: admin,
    body: {
      rounding: { mode: 'halfUp', precision: 0 },
      ranks: [{ id: 'best', evaluationMode: 'selectBest' }],
      groups: [
        {
          id: 'g',
          rules: [
            { id: 'small', rankID: 'best', condition: sku('COFFEE'), actions: [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.20', isMultiusable: 'true' } }] },
            { id: 'big', rankID: 'best', condition: sku('COFFEE'), actions: [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.50', isMultiusable: 'true' } }] },
            { id: 'shop', rankID: 'best', condition: { type: 'hasExternalShopID', args: { oneOf: 'OTHER' } }, actions: [{ type: 'addCartDiscount', args: { absolute: 'true', value: '5' } }] },
          ],
        },
      ],
    },
  });
  const path = `${p}/promotions/configurations/${created.body.id}/evaluate`;
  const res = await svc.request('POST', path, { token: admin, body: cart });
  t.equal(res.status, 200, res.text);
  t.notOk('signature' in res.body, 'not signed');
  t.same(
    res.body.rules.map((r: any) => [r.ruleID, r.conditionHeld, r.granted, r.skippedReason ?? null]),
    [['small', true, 0, 'not_best'], ['big', true, 150, null], ['shop', false, 0, 'condition_failed']],
  );
  t.equal(res.body.checkoutInfo.price.price, 2400 - 150);
  t.equal((await svc.request('GET', `${p}/promotions/configurations/active`, { token: admin })).body.id !== created.body.id, true, 'evaluating activates nothing');
  t.equal((await svc.request('POST', path, { token: app, body: cart })).status, 403, 'needs promotionsRead');
  const missing = await svc.request('POST', `${p}/promotions/configurations/99999/evaluate`, { token: admin, body: cart });
  t.equal(missing.status, 404);
  t.equal(missing.body.error.type, 'not_found');
  t.equal((await svc.request('POST', path, { token: admin, body: { items: [] } })).body.error.type, 'bad_shop_id');
});
