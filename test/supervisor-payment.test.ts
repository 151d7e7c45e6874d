import t, { type Test } from 'tap';
import { p, patchPos, seedCheckout, watchEvents } from './support/checkout.js';
import type { HttpResponse } from './support/http.js';
import { startTestService } from './support/service.js';

/**
 * A supervisor who checked the customer's ID and took the cash reports the payment: that passes the
 * pending checks (age, forceControl) in the same change, performed by the supervisor's token `sub`.
 * Anyone else's payment success still waits for the checks. Every way the checks pass records who
 * performed them (issue 21).
 */
const svc = await startTestService(t);
const fx = await seedCheckout(svc);
const events = await watchEvents(t, svc, 'stream');

const supervisor = await svc.token(['supervisor', 'setPaymentState', 'updatePricingCheckoutProcess'], { sub: 'sup-anna' });
const cashier = await svc.token(['setPaymentState', 'updatePricingCheckoutProcess'], { sub: 'cashier-ben' });
const approver = (sub: string) => svc.token(['supervisor'], { sub });

const patch = (id: string, token: string, body: object) => svc.request('PATCH', `${p}/checkout/process/${id}`, { token, body });
const approve = (id: string, token: string) => svc.request('POST', `${p}/checkout/process/${id}/approval`, { token, body: { type: 'supervisor' } });
const order = (id: string) => svc.request('GET', `${p}/orders/${id}`, { token: fx.tokens.orders });
// The order's fiscalized event follows from its TSE job, not from a process change (test/fiscal-local.test.ts covers it).
const processEvents = (id: string) => events.of(id).filter((e) => e.event !== 'fiscalized');
const names = (id: string) => processEvents(id).map((e) => `${e.domain}.${e.event}`);

const wine = [{ sku: 'WINE', amount: 1 }];
const razor = [{ sku: 'RAZOR', amount: 1 }];
const newPricing = { lineItems: [{ sku: 'WINE', amount: 1, price: 499, totalPrice: 499, taxRate: '19' }], price: { price: 499 } };

function refusedUnchanged(t: Test, res: HttpResponse, what: string) {
  t.equal(res.status, 409, `${what}: ${res.text}`);
  t.equal(res.body.type, 'invalid_state_transition', what);
}

/** A new process with `items`, moved to `from` by a payment system; its body. */
async function waiting(items: object[], from: 'pending' | 'processing' = 'pending'): Promise<any> {
  const before = await fx.processIn(from, { items });
  if (before.supervisorApproval !== null || before.checks[0]?.state !== 'pending') throw new Error(`the process does not wait for its check: ${JSON.stringify(before)}`);
  return before;
}

t.test("a supervisor's payment success passes the pending age check and finishes the order in one change", async (t) => {
  for (const from of ['pending', 'processing'] as const) {
    const before = await waiting(wine, from);
    const res = await patch(before.id, supervisor, { paymentState: 'successful', paymentResult: { cash: 599 } });
    t.equal(res.status, 200, `${from}: ${res.text}`);
    t.same(
      res.body,
      {
        ...before,
        paymentState: 'successful',
        paymentResult: { cash: 599 },
        supervisorApproval: true,
        paymentApproval: true,
        finalizedAt: res.body.finalizedAt,
        routingTarget: 'none',
        checks: [{ ...before.checks[0], state: 'successful', performedBy: 'sup-anna' }],
        orderID: before.id,
        links: { ...before.links, receipt: { href: `${p}/orders/${before.id}/receipt` } },
      },
      `${from}: approved by sup-anna and paid, nothing else changed`,
    );
    t.same((await fx.getProcess(before.id)).body, res.body, `${from}: stored`);
    t.match((await order(before.id)).body, { state: 'final', paidAmount: 599 }, `${from}: the order is final`);

    const again = await patch(before.id, supervisor, { paymentState: 'successful', paymentResult: { cash: 599 } });
    t.equal(again.status, 200, `${from}: a repeat is a retry`);
    t.same(again.body, res.body, `${from}: and changes nothing`);
  }
});

t.test("publishes an approval's event before the payment's, in the same change", async (t) => {
  const { id } = await waiting(wine);
  t.equal((await patch(id, supervisor, { paymentState: 'successful' })).status, 200);
  await events.settle();
  t.same(names(id), ['checkout.created', 'pos.pending', 'checkout.approved', 'checkout.successful', 'pos.successful', 'order.final']);
  t.same(
    processEvents(id).map((e) => e.payload.version),
    [1, 1, 2, 2, 2, 2],
    'one change: one version',
  );
  t.match(processEvents(id)[2]!.payload.process, { supervisorApproval: true, checks: [{ state: 'successful', performedBy: 'sup-anna' }] });
});

t.test('refuses a payment success from a caller without supervisor while a check is pending, changing nothing', async (t) => {
  for (const [items, what] of [[wine, 'age check'], [razor, 'forced control']] as const) {
    for (const from of ['pending', 'processing'] as const) {
      const before = await waiting(items, from);
      for (const token of [cashier, fx.tokens.payment]) {
        refusedUnchanged(t, await patch(before.id, token, { paymentState: 'successful' }), `${what}, ${from}`);
      }
      refusedUnchanged(t, await patch(before.id, cashier, { pricing: newPricing, paymentState: 'successful' }), `${what}, ${from}: with a pricing`);
      t.same((await fx.getProcess(before.id)).body, before, `${what}, ${from}: the process as it was (no pricing either)`);
      t.equal((await order(before.id)).status, 404, `${what}, ${from}: no order`);
    }
  }
  const plain = await fx.processIn('pending');
  t.equal((await patch(plain.id, cashier, { paymentState: 'successful' })).status, 200, 'a process without checks is paid as before');
});

t.test("a supervisor's payment success passes a forced control the same way", async (t) => {
  const before = await waiting(razor);
  t.match(before.checks, [{ type: 'supervisor_approval', state: 'pending' }]);
  const res = await patch(before.id, supervisor, { paymentState: 'successful' });
  t.equal(res.status, 200, res.text);
  t.match(res.body, { paymentState: 'successful', supervisorApproval: true, routingTarget: 'none', checks: [{ type: 'supervisor_approval', state: 'successful', performedBy: 'sup-anna' }] });
  t.match((await order(before.id)).body, { state: 'final', paidAmount: 1299 });
  await events.settle();
  t.same(names(before.id), ['checkout.created', 'pos.pending', 'checkout.approved', 'checkout.successful', 'pos.successful', 'order.final']);
});

t.test('a supervisor reporting the final pricing with the payment passes the checks too', async (t) => {
  const before = await waiting(wine);
  const res = await patch(before.id, supervisor, { pricing: newPricing, paymentState: 'successful' });
  t.equal(res.status, 200, res.text);
  t.match(res.body, { paymentState: 'successful', modified: true, pricing: { price: { price: 499 } }, supervisorApproval: true, checks: [{ state: 'successful', performedBy: 'sup-anna' }] });
  t.match((await order(before.id)).body, { state: 'final', paidAmount: 499 });
  await events.settle();
  t.same(names(before.id), ['checkout.created', 'pos.pending', 'checkout.pricingUpdated', 'checkout.approved', 'checkout.successful', 'pos.successful', 'order.final']);
});

t.test("a supervisor's other moves pass no check", async (t) => {
  const before = await waiting(wine);
  const res = await patch(before.id, supervisor, { paymentState: 'processing' });
  t.equal(res.status, 200);
  t.match(res.body, { paymentState: 'processing', supervisorApproval: null, routingTarget: 'supervisor', checks: [{ state: 'pending' }] });
});

t.test("records the approving supervisor's sub; a later approval or payment keeps it", async (t) => {
  const before = await waiting(wine);
  t.equal((await approve(before.id, await approver('sup-bob'))).status, 201);
  t.same((await fx.getProcess(before.id)).body, { ...before, supervisorApproval: true, routingTarget: 'none', checks: [{ ...before.checks[0], state: 'successful', performedBy: 'sup-bob' }] });
  t.equal((await approve(before.id, await approver('sup-carl'))).status, 201, 'a repeated approval');
  const paid = await patch(before.id, supervisor, { paymentState: 'successful' });
  t.equal(paid.status, 200);
  t.match(paid.body.checks, [{ state: 'successful', performedBy: 'sup-bob' }], 'the first performer stays');
  await events.settle();
  t.same(names(before.id), ['checkout.created', 'pos.pending', 'checkout.approved', 'checkout.successful', 'pos.successful', 'order.final'], 'one approval');

  const nobody = await waiting(wine);
  t.equal((await approve(nobody.id, fx.tokens.supervisor)).status, 201);
  t.match((await fx.getProcess(nobody.id)).body.checks, [{ state: 'successful', performedBy: 'supervisor' }], 'a token without sub: supervisor, as before');
});

t.test('answers performedBy supervisor for a process checked before performers were recorded', async (t) => {
  const before = await waiting(razor);
  t.equal((await approve(before.id, await approver('sup-dora'))).status, 201);
  // What a row from before the migration holds: approved, no performer.
  await svc.sql`update checkout_processes set checks_performed_by = null where id = ${before.id}`;
  t.match((await fx.getProcess(before.id)).body, { supervisorApproval: true, checks: [{ type: 'supervisor_approval', state: 'successful', performedBy: 'supervisor' }] });
});

t.test('records the PoS that takes a process over: its processedBy, else its credential or token', async (t) => {
  const taken = await waiting(wine);
  t.equal((await patchPos(svc, fx.tokens.pricing, taken.id, { state: 'processing', processedBy: 'kasse-3' })).status, 200);
  t.match((await fx.getProcess(taken.id)).body, { supervisorApproval: true, checks: [{ state: 'successful', performedBy: 'kasse-3' }] }, 'its processedBy');

  const posSupervisor = await svc.token(['updatePricingCheckoutProcess', 'supervisor'], { sub: 'sup-emil' });
  const atOnce = await waiting(wine);
  const put = await svc.request('PUT', `${p}/pos/checkout/id/${atOnce.id}`, { token: posSupervisor, body: { state: 'successful' } });
  t.equal(put.status, 200, put.text);
  t.match((await fx.getProcess(atOnce.id)).body, { paymentState: 'successful', supervisorApproval: true, checks: [{ state: 'successful', performedBy: 'sup-emil' }] }, 'a supervisor at a PoS with no processedBy: its sub');
  await events.settle();
  t.same(names(atOnce.id), ['checkout.created', 'pos.pending', 'checkout.approved', 'checkout.successful', 'pos.successful', 'order.final'], 'the events of a PoS takeover, as before');

  const admin = await svc.token(['projectsWrite']);
  const credential = (await svc.request('POST', `${p}/pos/credentials`, { token: admin, body: { name: 'Kasse 4', permissions: ['checkoutRead', 'updatePricingCheckoutProcess'] } })).body;
  const basic = `Basic ${Buffer.from(`${credential.user}:${credential.password}`).toString('base64')}`;
  const viaBasic = await waiting(wine);
  const paid = await svc.request('PATCH', `${p}/pos/checkout/id/${viaBasic.id}`, {
    body: { state: 'successful' },
    headers: { authorization: basic, 'content-type': 'application/merge-patch+json' },
  });
  t.equal(paid.status, 200, paid.text);
  t.match((await fx.getProcess(viaBasic.id)).body.checks, [{ state: 'successful', performedBy: `pos:${credential.user}` }], 'a PoS credential: its user');
});
