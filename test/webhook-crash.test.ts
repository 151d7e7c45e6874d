import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { p, patchPos, seedCheckout } from './support/checkout.js';
import { runBuilt, type ServiceProcess } from './support/process.js';
import { startTestService, TestCheckoutSecret } from './support/service.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

/**
 * A worker killed (SIGKILL) in the middle of webhook deliveries: its jobs come back to another
 * worker, and every event still arrives, each delivered (2xx) once. This process answers the API
 * and owns everything but the deliveries, which a worker process of its own makes.
 */
const receiver = await startWebhookReceiver(t);
const svc = await startTestService(t, { env: { WEBHOOK_SENDERS: '0', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
const fx = await seedCheckout(svc);
const owner = await svc.token(['projectsWrite']);

const startDeliverer = (): ServiceProcess =>
  runBuilt(t, 'service/main.js', {
    ...svc.infra.natsEnv('workers'),
    ROLE: 'workers',
    DATABASE_URL: svc.databaseUrl,
    DATABASE_POOL_MAX: '3',
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    DATA_DIR: svc.config.dataDir,
    LOG_LEVEL: 'warn',
    CLOSING_SCHEDULER_ENABLED: 'false',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE_MS: '300',
    WEBHOOK_TIMEOUT_MS: '30000',
    WEBHOOK_SENDERS: '8',
  });

async function until(holds: () => boolean, timeoutMs = 30_000, what = 'the condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
}

t.test('a worker killed mid-delivery: every event still arrives, each delivered once', async (t) => {
  const make = async (path: string) => (await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: path, kind: 'webhook', url: `${receiver.url}${path}` } })).body;
  await make('/stalling');
  await make('/steady');
  let first = startDeliverer();
  // The stalling receiver takes requests and answers none, until the worker has died with them.
  receiver.failAlways('/stalling', 'hang');
  for (let i = 0; i < 3; i++) {
    const created = await fx.createProcess();
    t.equal(created.status, 201);
    await patchPos(svc, fx.tokens.pricing, created.body.id, { state: 'processing', processedBy: 'kasse-1' });
    await patchPos(svc, fx.tokens.pricing, created.body.id, { state: 'successful' });
  }
  await until(() => receiver.received('/stalling').length >= 3, 30_000, 'deliveries under way');
  // What the steady receiver took is recorded before the kill: a 2xx recorded is never sent again. (A
  // worker that dies between a 2xx and its record sends it again, as at least once allows.)
  const recorded = async () => (await svc.sql<{ n: number }[]>`select count(*)::int as n from webhook_attempts a join integrations i on i.id = a.integration_id where i.url like '%/steady' and a.status = '200'`)[0]!.n;
  const took = () => receiver.received('/steady').filter((r) => r.answer === 200).length;
  for (const deadline = Date.now() + 10_000; (await recorded()) < took() && Date.now() < deadline; ) await sleep(20);
  first.child.kill('SIGKILL');
  t.equal(await first.exited, 'SIGKILL', 'the worker died with deliveries in flight');
  receiver.recover('/stalling');

  first = startDeliverer();
  const delivered = (path: string) => new Set(receiver.received(path).filter((r) => r.answer === 200).map((r) => String(r.headers['webhook-id'])));
  // Every event of the three sales reaches both: 8 each (created, processing and successful write 2,
  // 2 and 3; the TSE job's order.fiscalized comes last).
  const written = async () => (await svc.sql<{ n: number }[]>`select count(distinct event_id)::int as n from webhook_messages`)[0]!.n;
  for (const deadline = Date.now() + 60_000; ; await sleep(50)) {
    const n = await written();
    if (n >= 24 && delivered('/steady').size >= n && delivered('/stalling').size >= n) break;
    if (Date.now() > deadline) throw new Error(`not every event delivered within 60 s: ${n} written, ${delivered('/steady').size} and ${delivered('/stalling').size} delivered`);
  }
  await sleep(1000);
  t.same([...delivered('/stalling')].sort(), [...delivered('/steady')].sort(), 'the receiver that stalled got every event the steady one got');
  for (const path of ['/stalling', '/steady']) {
    const twice = receiver
      .received(path)
      .filter((r) => r.answer === 200)
      .map((r) => String(r.headers['webhook-id']))
      .filter((id, i, all) => all.indexOf(id) !== i);
    t.same(twice, [], `${path}: no event delivered twice after its 2xx`);
  }
  const stalled = receiver.received('/stalling').filter((r) => r.answer === 'hang').map((r) => String(r.headers['webhook-id']));
  t.ok(stalled.every((id) => delivered('/stalling').has(id)), 'what was in flight when the worker died arrived after all, with its webhook-id');
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0);
});
