import t from 'tap';
import { watchEvents } from './support/checkout.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * Coupons in carts: coupon items and scanned coupon codes become coupon line items; coupons that
 * cannot be used are violations, never a refused cart; redemption (through promotion rules) is
 * recorded when the process succeeds, once per the coupon's redeemType, also when two processes race.
 */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite', 'couponsWrite', 'promotionsWrite']);
const app = await svc.token(['productsRead', 'checkoutRead', 'setPaymentState']);
const events = await watchEvents(t, svc);

const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'] } });
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Markt' } });
await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson([{ sku: 'COFFEE', name: 'Kaffee', taxCategory: 'normal', isDiscountable: true }]) });
await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, ...ndjson([{ sku: 'COFFEE', category: 'default', prices: [{ price: '5.00', currency: 'EUR', tier: 'list' }] }]) });

const day = 86_400_000;
const coupon = (id: string, more: object = {}) =>
  svc.request('POST', `${p}/coupons`, { token: admin, body: { id, channels: ['app'], type: 'manual', translations: { name: { de: `Gutschein ${id}` } }, ...more } });
await coupon('app-user', { redeemType: 'once-per-app-user-id', code: 'SAVE1' });
await coupon('printed', { type: 'printed', redeemType: 'once-per-scanned-code', codes: [{ code: '2900000000018', template: 'default' }] });
await coupon('everyone', { redeemType: 'multiple', code: 'EVERY' });
await coupon('expired', { validUntil: new Date(Date.now() - day).toISOString() });
await coupon('future', { validFrom: new Date(Date.now() + day).toISOString() });
await coupon('loyal', { requiresLoyaltyCard: true });
await coupon('sco-only', { channels: ['sco'] });
await coupon('unredeemed');

// Rules redeem the coupons: 1 EUR off the cart for each.
const redeemRule = (id: string, code: string) => ({
  id,
  rankID: 'coupons',
  condition: { type: 'hasCouponCode', args: { equals: code } },
  actions: [{ type: 'redeemCouponCode', args: { code } }, { type: 'addCartDiscount', args: { absolute: 'true', value: '1', name: `Gutschein ${code}` } }],
});
const config = await svc.request('POST', `${p}/promotions/configurations`, {
  token: admin,
  body: {
    rounding: { mode: 'halfUp', precision: 0 },
    ranks: [{ id: 'coupons', evaluationMode: 'applyAll' }],
    groups: [{ id: 'g', rules: [redeemRule('r-save', 'SAVE1'), redeemRule('r-printed', '2900000000018'), redeemRule('r-every', 'EVERY')] }],
  },
});
await svc.request('POST', `${p}/promotions/configurations/${config.body.id}/activate`, { token: admin });

const info = (items: object[], more: object = {}) =>
  svc.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', appUserID: 'user-1', items: [{ id: 'k', sku: 'COFFEE', amount: 1 }, ...items], ...more } });

t.test('makes a coupon item a coupon line, and recognises a scanned coupon code as its coupon', async (t) => {
  const res = await info([{ id: 'c1', couponID: 'unredeemed', refersTo: 'k', amount: 1 }, { id: 'c2', scannedCode: '2900000000018', amount: 1 }]);
  t.equal(res.status, 200, res.text);
  const lines = res.body.checkoutInfo.lineItems;
  t.match(lines.find((l: any) => l.id === 'c1'), { type: 'coupon', couponID: 'unredeemed', refersTo: 'k', redeemed: false, totalPrice: 0, name: 'Gutschein unredeemed' }, 'no rule redeems it');
  t.match(lines.find((l: any) => l.id === 'c2'), { type: 'coupon', couponID: 'printed', scannedCode: '2900000000018', redeemed: true }, 'the printed coupon, scanned, redeemed by its rule');
  t.match(lines.find((l: any) => l.type === 'promotion'), { totalPrice: -100, discountRuleID: 'r-printed', couponID: 'printed' });
  t.equal(res.body.checkoutInfo.price.price, 400, '5.00 − 1.00');
  t.same(res.body.checkoutInfo.violations, []);
});

t.test('lists coupons it cannot use as violations and sells the rest', async (t) => {
  const res = await info([
    { id: 'u', couponID: 'no-such-coupon', amount: 1 },
    { id: 'x', couponID: 'expired', amount: 1 },
    { id: 'f', couponID: 'future', amount: 1 },
    { id: 'l', couponID: 'loyal', amount: 1 },
    { id: 's', couponID: 'sco-only', amount: 1 },
  ]);
  t.equal(res.status, 200, res.text);
  t.same(
    res.body.checkoutInfo.violations.map((v: any) => [v.refersTo, v.type]),
    [['u', 'coupon_invalid'], ['x', 'coupon_currently_not_valid'], ['f', 'coupon_currently_not_valid'], ['l', 'coupon_invalid'], ['s', 'coupon_invalid']],
  );
  t.same(res.body.checkoutInfo.lineItems.map((l: any) => l.type), ['default'], 'no coupon lines for them');
  const withCard = await info([{ id: 'l', couponID: 'loyal', amount: 1 }], { customer: { loyaltyCard: 'CARD-1' } });
  t.match(withCard.body.checkoutInfo.lineItems.find((l: any) => l.id === 'l'), { type: 'coupon', couponID: 'loyal' }, 'with a loyalty card it is usable');
});

async function checkout(items: object[], appUserID = 'user-1'): Promise<any> {
  const signed = (await info(items, { appUserID })).body;
  return (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: signed, paymentMethod: 'cash' } })).body;
}
const pay = (id: string) => svc.request('PATCH', `${p}/checkout/process/${id}`, { token: app, body: { paymentState: 'successful' } });
const redemptions = async (couponId: string) =>
  (await svc.sql<{ redemption_key: string; process_id: string }[]>`select redemption_key, process_id from coupon_redemptions where coupon_id = ${couponId} order by redeemed_at`);

t.test('records a redemption when the process succeeds, and refuses the coupon again as already voided', async (t) => {
  const process = await checkout([{ id: 'c', couponID: 'app-user', amount: 1 }]);
  t.equal((await redemptions('app-user')).length, 0, 'nothing recorded before the payment');
  t.equal((await pay(process.id)).status, 200);
  t.same(await redemptions('app-user'), [{ redemption_key: 'user:user-1', process_id: process.id }], 'once per app user');
  const order = await svc.request('GET', `${p}/orders/${process.id}`, { token: await svc.token(['ordersRead']) });
  t.match(order.body.lineItems.find((l: any) => l.type === 'coupon'), { couponID: 'app-user', redeemed: true });
  t.match(order.body.lineItems.find((l: any) => l.type === 'promotion'), { couponID: 'app-user', discountRuleID: 'r-save', totalPrice: -100 });

  const again = await info([{ id: 'c', couponID: 'app-user', amount: 1 }]);
  t.match(again.body.checkoutInfo.violations, [{ type: 'coupon_already_voided', refersTo: 'c' }], 'the same user again');
  t.equal(again.body.checkoutInfo.price.price, 500, 'no discount');
  const other = await info([{ id: 'c', couponID: 'app-user', amount: 1 }], { appUserID: 'user-2' });
  t.same(other.body.checkoutInfo.violations, [], 'another user may');

  const multi = [await checkout([{ id: 'c', couponID: 'everyone', amount: 1 }]), await checkout([{ id: 'c', couponID: 'everyone', amount: 1 }])];
  for (const m of multi) await pay(m.id);
  t.equal((await redemptions('everyone')).length, 2, 'multiple: every process redeems it');
  await events.settle();
  t.same(events.of('app-user').filter((e) => e.event === 'redeemed').map((e) => e.payload.redeemed), [true], 'the redeemed event');
});

t.test('records one redemption of a once-only coupon when two processes succeed at once', async (t) => {
  const [a, b] = [await checkout([{ id: 'c', scannedCode: '2900000000018', amount: 1 }], 'x'), await checkout([{ id: 'c', scannedCode: '2900000000018', amount: 1 }], 'y')];
  t.match(a.pricing.lineItems.find((l: any) => l.type === 'coupon'), { redeemed: true }, 'both checkout infos redeemed it');
  t.match(b.pricing.lineItems.find((l: any) => l.type === 'coupon'), { redeemed: true });
  const paid = await Promise.all([pay(a.id), pay(b.id)]);
  t.same(paid.map((r) => r.status), [200, 200], 'both processes succeed');
  const recorded = await redemptions('printed');
  t.equal(recorded.length, 1, 'one redemption');
  const winner = recorded[0]!.process_id;
  const loser = winner === a.id ? b.id : a.id;
  const lost = (await svc.request('GET', `${p}/checkout/process/${loser}`, { token: app })).body;
  t.match(lost.pricing.lineItems.find((l: any) => l.type === 'coupon'), { couponID: 'printed', redeemed: false }, "the other process's coupon line shows not redeemed");
  const won = (await svc.request('GET', `${p}/checkout/process/${winner}`, { token: app })).body;
  t.match(won.pricing.lineItems.find((l: any) => l.type === 'coupon'), { redeemed: true });
  await events.settle();
  const said = events.of('printed').filter((e) => e.event === 'redeemed').map((e) => [e.payload.processID, e.payload.redeemed]);
  t.same(said.sort(), [[winner, true], [loser, false]].sort(), 'and the events say so');
  const again = await info([{ id: 'c', scannedCode: '2900000000018', amount: 1 }]);
  t.match(again.body.checkoutInfo.violations, [{ type: 'coupon_already_voided' }], 'the printed code is spent');
});
