import t from 'tap';
import { watchEvents } from './support/checkout.js';
import { startFulfillmentService } from './support/fulfillment-service.js';
import { startTestService, TestProject, type TestService } from './support/service.js';

/**
 * Fulfillment when things go wrong for good: no fulfillment service configured (the item is refused
 * at checkout info, nothing is reserved), and a service that never answers (after the last attempt
 * the fulfillment fails, with an event and a log line at error level).
 */
const p = `/${TestProject}`;

async function seed(svc: TestService): Promise<{ app: string }> {
  const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite']);
  const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
  await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Bahnhof' } });
  await svc.request('POST', `${p}/products/_batch`, {
    token: admin,
    ...ndjson([
      { sku: 'WATER', name: 'Wasser', taxCategory: 'normal' },
      { sku: 'COLA', name: 'Cola', taxCategory: 'normal', fulfillmentType: 'vending-machine' },
    ]),
  });
  await svc.request('POST', `${p}/pricing/v2/category/batch`, {
    token: admin,
    ...ndjson(['WATER', 'COLA'].map((sku) => ({ sku, category: 'default', prices: [{ price: '1.00', currency: 'EUR', tier: 'list' }] }))),
  });
  return { app: await svc.token(['productsRead', 'checkoutRead']) };
}

t.test('refuses a fulfillment item clearly when no fulfillment service is configured, and reserves nothing', async (t) => {
  const svc = await startTestService(t);
  const { app } = await seed(svc);
  const res = await svc.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', items: [{ id: 'w', sku: 'WATER', amount: 1 }, { id: 'c', sku: 'COLA', amount: 1 }] } });
  t.equal(res.status, 400);
  t.equal(res.body.type, 'invalid_cart_item');
  t.match(res.body.details, [{ id: 'c', sku: 'COLA', type: 'fulfillment_unavailable', message: /no fulfillment service is configured/ }]);
  t.equal(res.body.details.length, 1, 'the other item is fine');
  t.equal((await svc.sql`select count(*)::int as n from fulfillment_index`)[0]!.n, 0, 'nothing reserved');
  t.equal((await svc.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', items: [{ sku: 'WATER', amount: 1 }] } })).status, 200);
});

t.test('fails the fulfillment after the last attempt, with an event and a log line at error level', async (t) => {
  const service = await startFulfillmentService(t);
  service.behave(() => ({ status: 503 }));
  const logLines: string[] = [];
  const svc = await startTestService(t, {
    env: { FULFILLMENT_URL: service.url, FULFILLMENT_MAX_ATTEMPTS: '3', FULFILLMENT_RETRY_SCHEDULE_MS: '200' },
    logLines: (line) => logLines.push(line),
  });
  const { app } = await seed(svc);
  const events = await watchEvents(t, svc);
  const info = await svc.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', items: [{ sku: 'COLA', amount: 1 }] } });
  const created = (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: info.body, paymentMethod: 'cash' } })).body;
  const id = created.fulfillments[0].id;
  const reader = await svc.token(['fulfillmentsRead']);
  const deadline = Date.now() + 15_000;
  let f: any;
  while (Date.now() < deadline) {
    f = (await svc.request('GET', `${p}/fulfillments/${id}`, { token: reader })).body;
    if (f.state === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.equal(f.state, 'failed');
  t.match(f.errors, [{ type: 'unreachable', message: /no answer after 3 attempts: the service answered 503/ }]);
  t.equal(service.callsFor(id).length, 3, 'three attempts');
  const process = (await svc.request('GET', `${p}/checkout/process/${created.id}`, { token: app })).body;
  t.equal(process.paymentState, 'failed', 'the process can no longer be paid');
  const errorLine = logLines.map((l) => JSON.parse(l) as { level: number; msg: string; fulfillmentID?: string }).find((l) => l.msg === 'fulfillment call failed after its last attempt');
  t.match(errorLine, { level: 50, fulfillmentID: id }, 'logged at error level');
  await events.settle();
  t.same(events.of(id).map((e) => e.event), ['open', 'allocating', 'failed'], 'the failure is an event');
});
