import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { startFulfillmentService } from './support/fulfillment-service.js';
import { runBuilt } from './support/process.js';
import { startMoreWorkers, startTestService, TestCheckoutSecret, TestProject, TestSecret } from './support/service.js';

/**
 * The worker that made a delivery call is killed (SIGKILL) once the service made the delivery, before
 * it could record the answer and ack the job: another worker takes the job over, and the delivery is
 * in effect once (the service saw the same Idempotency-Key, or nothing more at all). The killed
 * worker is the built service in a child process (run `npm run build` first).
 */
const service = await startFulfillmentService(t);
// This process answers the API and owns the processes, but makes no fulfillment calls: the child does.
const svc = await startTestService(t, { env: { FULFILLMENT_URL: service.url, FULFILLMENT_CALLERS: '0' } });
const p = `/${TestProject}`;
const caller = runBuilt(t, 'service/main.js', {
  ROLE: 'workers',
  ...svc.infra.natsEnv('workers'),
  DATABASE_URL: svc.databaseUrl,
  DATABASE_POOL_MAX: '3',
  JWT_SECRET: TestSecret,
  CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
  DATA_DIR: svc.config.dataDir,
  LOG_LEVEL: 'warn',
  FULFILLMENT_URL: service.url,
  CLOSING_SCHEDULER_ENABLED: 'false',
});

const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite']);
const app = await svc.token(['productsRead', 'checkoutRead', 'setPaymentState']);
const reader = await svc.token(['fulfillmentsRead']);
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Bahnhof' } });
await svc.request('POST', `${p}/products`, { token: admin, body: { sku: 'COLA', name: 'Cola', taxCategory: 'normal', fulfillmentType: 'vending-machine' } });
await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, body: [{ sku: 'COLA', category: 'default', prices: [{ price: '1.00', currency: 'EUR', tier: 'list' }] }] });

async function stateOf(id: string, wanted: string, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const f = (await svc.request('GET', `${p}/fulfillments/${id}`, { token: reader })).body;
    if (f.state === wanted) return f;
    if (Date.now() > deadline) throw new Error(`fulfillment ${id} is ${f.state}, not ${wanted}: ${caller.output()}`);
    await sleep(50);
  }
}

t.test('delivers once when the calling worker dies between the service\'s answer and the ack', async (t) => {
  const info = await svc.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', items: [{ sku: 'COLA', amount: 1 }] } });
  const created = (await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: info.body, paymentMethod: 'cash' } })).body;
  const id = created.fulfillments[0].id;
  await stateOf(id, 'allocated');
  t.equal(service.callsFor(id)[0]?.method, 'POST', 'the child worker reserved the goods');

  let killed = false;
  service.behave((call) =>
    call.method === 'PUT' && call.attempt === 1
      ? {
          status: 201,
          body: { state: 'processed' },
          beforeAnswer: async () => {
            killed = caller.child.kill('SIGKILL');
            await caller.exited;
          },
        }
      : undefined,
  );
  t.equal((await svc.request('PATCH', `${p}/checkout/process/${created.id}`, { token: app, body: { paymentState: 'successful' } })).status, 200);
  await service.waitFor(() => killed);
  await caller.exited;
  t.ok(killed, 'the worker was killed once the service had made the delivery, before it could record the answer');
  // A request sent before nats-server noticed the dead worker may go to it and time out (503), as a
  // client's would: asked again, as a client would.
  let seen = await svc.request('GET', `${p}/fulfillments/${id}`, { token: reader });
  for (let tries = 1; seen.status === 503 && tries < 3; tries++) seen = await svc.request('GET', `${p}/fulfillments/${id}`, { token: reader });
  t.equal(seen.body.state, 'allocated', 'the answer was not recorded by the dead worker');

  // A new worker side with callers takes the job over once its ack wait has passed.
  await startMoreWorkers(t, svc, { FULFILLMENT_URL: service.url });
  await stateOf(id, 'processed');
  const puts = service.callsFor(id).filter((c) => c.method === 'PUT');
  t.ok(puts.length >= 1 && puts.length <= 2, `the delivery was asked for ${puts.length} time(s)`);
  t.ok(puts.every((c) => c.key === `${id}.deliver`), 'always with the same Idempotency-Key');
  t.equal(service.effective(id, 'processing'), 1, 'exactly one delivery in effect');
  await sleep(1500);
  t.equal(service.callsFor(id).filter((c) => c.method === 'PUT').length, puts.length, 'and nothing more afterwards');
});
