import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { watchEvents } from './support/checkout.js';
import { startFulfillmentService } from './support/fulfillment-service.js';
import { startMoreWorkers, startTestService, TestProject } from './support/service.js';

/**
 * Fulfillment over HTTP, with a real stand-in of the fulfillment service: allocation of a process's
 * fulfillment items only, delivery only after payment, retries of 503s and timeouts with one
 * delivery in effect, final refusals, out of stock failing the process, release on abort, the
 * service's later reports, events, and many processes and worker sides at once.
 */
const service = await startFulfillmentService(t);
const svc = await startTestService(t, {
  env: { FULFILLMENT_URL: service.url, FULFILLMENT_TOKEN: 'service-token-1', FULFILLMENT_TIMEOUT_MS: '4000' },
});
const p = `/${TestProject}`;
const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite']);
const app = await svc.token(['productsRead', 'checkoutRead']);
const payment = await svc.token(['setPaymentState']);
const pos = await svc.token(['updatePricingCheckoutProcess', 'checkoutRead']);
const reader = await svc.token(['fulfillmentsRead']);
const serviceToken = await svc.token(['fulfillmentsWrite', 'fulfillmentsRead']);
const events = await watchEvents(t, svc);

const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'] } });
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Bahnhof' } });
const products = [
  { sku: 'WATER', name: 'Wasser', taxCategory: 'normal' },
  { sku: 'COLA', name: 'Cola', taxCategory: 'normal', fulfillmentType: 'vending-machine', codes: [{ code: '4000001' }] },
  { sku: 'CHIPS', name: 'Chips', taxCategory: 'normal', fulfillmentType: 'vending-machine' },
  { sku: 'BOX', name: 'Paket', taxCategory: 'normal', fulfillmentType: 'locker' },
  { sku: 'OOS', name: 'Ausverkauft', taxCategory: 'normal', fulfillmentType: 'vending-machine' },
];
await svc.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson(products) });
await svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson(products.map((x) => ({ sku: x.sku, category: 'default', prices: [{ price: '1.50', currency: 'EUR', tier: 'list' }] }))),
});

async function startProcess(items: object[]): Promise<any> {
  const info = await svc.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', items } });
  if (info.status !== 200) throw new Error(`checkout info: ${info.status} ${info.text}`);
  const created = await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: info.body, paymentMethod: 'cash' } });
  if (created.status !== 201) throw new Error(`process: ${created.status} ${created.text}`);
  return created.body;
}
const fulfillment = async (id: string) => (await svc.request('GET', `${p}/fulfillments/${id}`, { token: reader })).body;
async function until<T>(read: () => Promise<T>, holds: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}
const inState = (id: string, state: string, timeoutMs?: number) => until(() => fulfillment(id), (f) => f.state === state, timeoutMs);
const pay = (id: string) => svc.request('PATCH', `${p}/checkout/process/${id}`, { token: payment, body: { paymentState: 'successful' } });
const process = async (id: string) => (await svc.request('GET', `${p}/checkout/process/${id}`, { token: app })).body;

t.test('reserves only the fulfillment items of a process, one fulfillment per type, and shows them with the process', async (t) => {
  const created = await startProcess([{ sku: 'WATER', amount: 1 }, { id: 'c', sku: 'COLA', amount: 2 }, { id: 'h', sku: 'CHIPS', amount: 1 }, { id: 'b', sku: 'BOX', amount: 1 }]);
  t.equal(created.fulfillments.length, 2, 'one per fulfillmentType');
  const vending = created.fulfillments.find((f: any) => f.type === 'vending-machine');
  const locker = created.fulfillments.find((f: any) => f.type === 'locker');
  t.match(vending, { state: 'open', refersTo: ['c', 'h'], errors: [], links: { self: { href: `${p}/fulfillments/${vending.id}` } } });
  t.match(vending.id, /^[0-9a-f-]{36}$/, 'an unguessable id');
  t.same(locker.refersTo, ['b']);

  const allocated = await inState(vending.id, 'allocated');
  await inState(locker.id, 'allocated');
  t.match(allocated, { id: vending.id, type: 'vending-machine', shopID: 's1', processID: created.id, serviceID: /^svc-/ });
  const [call, ...more] = service.callsFor(vending.id);
  t.equal(more.length, 0, 'one allocation call');
  t.equal(call!.method, 'POST');
  t.equal(call!.path, '/service');
  t.equal(call!.headers.authorization, 'Bearer service-token-1');
  t.equal(call!.key, `${vending.id}.allocate`, 'the job id is the Idempotency-Key');
  t.same(call!.body.state, 'allocating');
  t.same(call!.body.lineItems, [
    { id: 'c', sku: 'COLA', amount: 2, scannedCode: '' },
    { id: 'h', sku: 'CHIPS', amount: 1, scannedCode: '' },
  ], 'only its own items, never the rest of the cart');
  t.equal(call!.body.links.fulfillment.href, `${p}/fulfillments/${vending.id}`);
  t.same((await process(created.id)).fulfillments.map((f: any) => f.state).sort(), ['allocated', 'allocated']);

  t.equal((await svc.request('GET', `${p}/fulfillments/${vending.id}`, { token: app })).status, 403, 'reading needs fulfillmentsRead');
  t.equal((await svc.request('GET', `${p}/fulfillments/00000000-0000-4000-8000-000000000000`, { token: reader })).status, 404);
  const plain = await startProcess([{ sku: 'WATER', amount: 1 }]);
  t.same(plain.fulfillments, [], 'a process without fulfillment items has none');
});

t.test('delivers nothing before payment, and once after it (app payment and PoS)', async (t) => {
  const viaApp = await startProcess([{ sku: 'COLA', amount: 1 }]);
  const f = viaApp.fulfillments[0];
  await inState(f.id, 'allocated');
  await sleep(1500);
  t.same(service.callsFor(f.id).map((c) => c.body.state), ['allocating'], 'no delivery before payment');
  t.equal((await pay(viaApp.id)).status, 200);
  const delivered = await inState(f.id, 'processed');
  const delivery = service.callsFor(f.id).filter((c) => c.method === 'PUT');
  t.equal(delivery.length, 1, 'one delivery call');
  t.match(delivery[0]!.body, { id: delivered.serviceID, state: 'processing', links: { fulfillment: { href: `${p}/fulfillments/${f.id}` } }, lineItems: [{ sku: 'COLA' }] });
  t.equal(delivery[0]!.key, `${f.id}.deliver`);

  const viaPos = await startProcess([{ sku: 'CHIPS', amount: 1 }]);
  const g = viaPos.fulfillments[0];
  await inState(g.id, 'allocated');
  const view = (await svc.request('PATCH', `${p}/pos/checkout/id/${viaPos.id}`, { token: pos, headers: { 'content-type': 'application/merge-patch+json' }, body: { state: 'processing' } })).body;
  const { lineItems, taxShares, netPrice, totalPrice } = view;
  const paid = await svc.request('PATCH', `${p}/pos/checkout/id/${viaPos.id}`, {
    token: pos,
    headers: { 'content-type': 'application/merge-patch+json' },
    body: { state: 'successful', lineItems, taxShares, netPrice, totalPrice },
  });
  t.equal(paid.status, 200, paid.text);
  await inState(g.id, 'processed');
  t.equal(service.effective(g.id, 'processing'), 1, 'delivered once after the PoS took the payment');
});

t.test('waits with the delivery of a paid process until its goods are reserved', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  service.behave(async (call) => (call.body.lineItems.some((l) => l.id === 'slow') && call.method === 'POST' ? (await held, undefined) : undefined));
  t.teardown(() => service.behave(() => undefined));
  const created = await startProcess([{ id: 'slow', sku: 'COLA', amount: 1 }]);
  const f = created.fulfillments[0];
  await service.waitFor(() => service.callsFor(f.id).length === 1);
  t.equal((await pay(created.id)).status, 200, 'paid while the allocation is still under way');
  await sleep(300);
  t.same(service.callsFor(f.id).map((c) => c.method), ['POST'], 'no delivery before the goods are reserved');
  release();
  await inState(f.id, 'processed');
  t.same(service.callsFor(f.id).map((c) => c.body.state), ['allocating', 'processing'], 'then one delivery');
});

t.test('tries a call again after 503s (honouring Retry-After) and a timeout, with one delivery in effect', async (t) => {
  const created = await startProcess([{ id: 'retry', sku: 'COLA', amount: 1 }]);
  const f = created.fulfillments[0];
  await inState(f.id, 'allocated');
  service.behave((call) => (call.body.lineItems[0]?.id === 'retry' && call.method === 'PUT' && call.attempt <= 2 ? { status: 503, headers: { 'retry-after': '1' } } : undefined));
  t.teardown(() => service.behave(() => undefined));
  const started = Date.now();
  await pay(created.id);
  await inState(f.id, 'processed', 12_000);
  t.ok(Date.now() - started < 10_000, `delivered within 10 s (${Date.now() - started} ms)`);
  const puts = service.callsFor(f.id).filter((c) => c.method === 'PUT');
  t.equal(puts.length, 3, 'two 503s, then the answer');
  t.ok(puts.every((c) => c.key === `${f.id}.deliver`), 'every attempt with the same Idempotency-Key');
  t.ok(puts[1]!.at - puts[0]!.at >= 950, 'the second attempt honoured Retry-After');
  t.equal(service.effective(f.id, 'processing'), 1, 'one delivery in effect');

  const slow = await startProcess([{ id: 'timeout', sku: 'COLA', amount: 1 }]);
  const g = slow.fulfillments[0];
  await inState(g.id, 'allocated');
  service.behave((call) => (call.body.lineItems[0]?.id === 'timeout' && call.method === 'PUT' && call.attempt === 1 ? { status: 201, body: { state: 'processed' }, delayMs: 5000 } : undefined));
  await pay(slow.id);
  await inState(g.id, 'processed', 20_000);
  t.equal(service.callsFor(g.id).filter((c) => c.method === 'PUT').length, 2, 'the platform gave up waiting and asked again');
  t.equal(service.effective(g.id, 'processing'), 1, 'the service applied it once (Idempotency-Key)');
});

t.test('takes any other 4xx as final: the fulfillment fails with the answer in its errors', async (t) => {
  const created = await startProcess([{ id: 'refused', sku: 'COLA', amount: 1 }]);
  const f = created.fulfillments[0];
  await inState(f.id, 'allocated');
  service.behave((call) => (call.body.lineItems[0]?.id === 'refused' && call.method === 'PUT' ? { status: 422, body: { errors: [{ type: 'machineOffline', message: 'vending machine 7 is offline' }] } } : undefined));
  t.teardown(() => service.behave(() => undefined));
  await pay(created.id);
  const failed = await inState(f.id, 'failed');
  t.same(failed.errors, [{ type: 'machineOffline', message: 'vending machine 7 is offline' }]);
  await sleep(1500);
  t.equal(service.callsFor(f.id).filter((c) => c.method === 'PUT').length, 1, 'not tried again');
  await events.settle();
  t.ok(events.of(f.id).some((e) => e.event === 'undeliverable'), 'a paid process that cannot be delivered is announced (a refund case)');
});

t.test('fails the process when the goods are out of stock, keeping the service\'s errors, and delivers nothing', async (t) => {
  service.behave((call) =>
    call.method === 'POST' && call.body.lineItems.some((l) => l.sku === 'OOS')
      ? { status: 400, body: { state: 'allocationFailed', errors: [{ refersTo: 'oos', type: 'outOfStock', itemsAvailable: 0, message: 'sold out' }] } }
      : undefined,
  );
  t.teardown(() => service.behave(() => undefined));
  const created = await startProcess([{ id: 'oos', sku: 'OOS', amount: 1 }, { id: 'box', sku: 'BOX', amount: 1 }]);
  const oos = created.fulfillments.find((f: any) => f.type === 'vending-machine');
  const box = created.fulfillments.find((f: any) => f.type === 'locker');
  const failed = await inState(oos.id, 'allocationFailed');
  t.same(failed.errors, [{ refersTo: 'oos', type: 'outOfStock', itemsAvailable: 0, message: 'sold out' }]);
  const after = await until(() => process(created.id), (x) => x.paymentState === 'failed');
  t.match(after, { paymentState: 'failed', paymentApproval: false, paymentResult: { failureCause: 'fulfillmentFailed', message: /vending-machine: the goods cannot be reserved \(sold out\)/ } });
  t.match((await svc.request('GET', `${p}/pos/checkout/id/${created.id}`, { token: pos })).body, { state: 'failed', failedReason: /cannot be reserved/ });
  await inState(box.id, 'aborted');
  t.same(service.callsFor(box.id).map((c) => c.body.state), ['allocating', 'aborted'], 'the other reservation is released');
  t.equal((await pay(created.id)).status, 409, 'its payment can no longer succeed');
  await sleep(500);
  t.notOk(service.callsFor(oos.id).some((c) => c.method === 'PUT'), 'no delivery for a failed allocation');
  const order = await svc.request('GET', `${p}/orders/${created.id}`, { token: await svc.token(['ordersRead']) });
  t.equal(order.body.state, 'paymentFailed');
});

t.test('releases the reserved goods of an aborted process, with one aborted call', async (t) => {
  const created = await startProcess([{ sku: 'COLA', amount: 1 }]);
  const f = created.fulfillments[0];
  await inState(f.id, 'allocated');
  const aborted = await svc.request('PATCH', `${p}/checkout/process/${created.id}`, { token: app, body: { aborted: true } });
  t.equal(aborted.status, 200);
  await inState(f.id, 'aborted');
  t.same(service.callsFor(f.id).map((c) => `${c.method} ${c.body.state}`), ['POST allocating', 'PUT aborted']);
  t.equal(service.effective(f.id, 'aborted'), 1);
});

t.test("takes the service's later reports, only along the state table", async (t) => {
  const created = await startProcess([{ id: 'later', sku: 'COLA', amount: 1 }]);
  const f = created.fulfillments[0];
  await inState(f.id, 'allocated');
  const patch = (body: object, token = serviceToken) => svc.request('PATCH', `${p}/fulfillments/${f.id}`, { token, body });
  const early = await patch({ state: 'processed' });
  t.equal(early.status, 409, 'no goods handed out for an unpaid process');
  t.equal(early.body.type, 'invalid_state_transition');
  service.behave((call) => (call.body.lineItems[0]?.id === 'later' && call.method === 'PUT' ? { status: 201, body: { state: 'processing' } } : undefined));
  t.teardown(() => service.behave(() => undefined));
  await pay(created.id);
  await inState(f.id, 'processing');
  t.equal((await patch({ state: 'processed' }, reader)).status, 403, 'reports need fulfillmentsWrite');
  t.equal((await patch({ state: 'allocated' })).status, 409, 'processing → allocated is not a move of the table');
  t.equal((await patch({ state: 'vanished' })).status, 400, 'an unknown state');
  t.equal((await fulfillment(f.id)).state, 'processing', 'nothing changed');
  const done = await patch({ state: 'processed' });
  t.equal(done.status, 200, done.text);
  t.match(done.body, { id: f.id, state: 'processed' });
  t.equal((await patch({ state: 'processed' })).status, 200, 'a repeat changes nothing');
  t.equal((await patch({ state: 'failed' })).status, 409, 'a finished fulfillment stays');
});

t.test('publishes every state change as events.<project>.fulfillment.<id>.<state>', async (t) => {
  const created = await startProcess([{ sku: 'CHIPS', amount: 1 }]);
  const f = created.fulfillments[0];
  await inState(f.id, 'allocated');
  await pay(created.id);
  await inState(f.id, 'processed');
  await events.settle();
  const mine = events.of(f.id);
  t.same(mine.map((e) => e.event), ['open', 'allocating', 'allocated', 'processed']);
  t.ok(mine.every((e) => e.subject === `events.${TestProject}.fulfillment.${f.id}.${e.event}` && e.payload.fulfillment.id === f.id && e.payload.processID === created.id));
});

t.test('allocates and delivers 20 processes at once, each once, also with three worker sides on one stream', async (t) => {
  await startMoreWorkers(t, svc, { FULFILLMENT_URL: service.url, FULFILLMENT_TOKEN: 'service-token-1' });
  await startMoreWorkers(t, svc, { FULFILLMENT_URL: service.url, FULFILLMENT_TOKEN: 'service-token-1' });
  const created = await Promise.all(Array.from({ length: 20 }, () => startProcess([{ sku: 'COLA', amount: 1 }])));
  const ids = created.map((c) => c.fulfillments[0].id as string);
  await Promise.all(ids.map((id) => inState(id, 'allocated', 20_000)));
  await Promise.all(created.map((c) => pay(c.id)));
  await Promise.all(ids.map((id) => inState(id, 'processed', 20_000)));
  await sleep(1000);
  for (const id of ids) {
    const calls = service.callsFor(id);
    if (calls.length !== 2) t.fail(`${id}: ${calls.map((c) => `${c.method} ${c.body.state}`).join(', ')}`);
  }
  t.ok(ids.every((id) => service.effective(id, 'allocating') === 1 && service.effective(id, 'processing') === 1), 'one allocation and one delivery per process');
  t.equal(ids.reduce((n, id) => n + service.callsFor(id).length, 0), 40, 'one call per job, whichever worker side took it');
});
