import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import postgres from 'postgres';
import t from 'tap';
import { startCluster } from '../scripts/cluster.js';
import { startService } from '../service/start.js';
import { signToken } from '../src/auth/tokens.js';
import type { Permission } from '../src/auth/permissions.js';
import { loadConfig } from '../src/config.js';
import { ensureStream } from '../src/infra/jetstream.js';
import { startNatsServer } from '../src/infra/nats.js';
import { freePort } from '../src/infra/processes.js';
import { createLogger } from '../src/logger.js';
import { JobStream } from '../subjects/jobs.js';
import { createTestDatabase } from './support/database.js';
import { cutOff } from './support/nats.js';
import { startFulfillmentService } from './support/fulfillment-service.js';
import { createHttpClient } from './support/http.js';
import { TestCheckoutSecret, TestProject, TestSecret } from './support/service.js';

/**
 * The platform on a three-node NATS cluster (scripts/cluster.ts, its own ports and temp stores)
 * with JETSTREAM_REPLICAS=3: streams, the bucket and the job consumers get three copies (a stream
 * made with one is updated, not made anew), and checkouts with a vending machine item keep working,
 * fulfillment included, while the node leading the JOBS stream is killed: 50 of them, every paid
 * process one final order and one delivery.
 */
const quiet = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const database = await createTestDatabase();
const sql = postgres(database.url, { max: 1, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await database.drop();
});
const cluster = await startCluster({ databaseUrl: database.url, edges: 0, workers: 0 });
t.teardown(() => cluster.stop());
const fulfillmentService = await startFulfillmentService(t);

const nc = await cluster.connectAs('admin', { maxReconnectAttempts: -1, reconnectTimeWait: 250 });
t.teardown(() => nc.close());
// JOBS as an earlier release with one replica left it, with a job nobody takes.
await ensureStream(nc, { ...JobStream, retention: 'workqueue', maxAgeMs: 3_600_000, duplicateWindowMs: 120_000, replicas: 1 }, quiet);
const marker = await jetstream(nc).publish('jobs.none.marker', 'left by an earlier release');
const jsm = await jetstreamManager(nc);
const before = await jsm.streams.info(JobStream.name);

const config = loadConfig({
  NODE_ENV: 'test',
  DATABASE_URL: database.url,
  DATABASE_POOL_MAX: '4',
  ...cluster.natsEnv('service'),
  JETSTREAM_REPLICAS: '3',
  JWT_SECRET: TestSecret,
  CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: cluster.dataDir,
  LOG_LEVEL: 'silent',
  FULFILLMENT_URL: fulfillmentService.url,
  FULFILLMENT_RETRY_SCHEDULE_MS: '200,500,1000',
});
const service = await startService(config, quiet);
t.teardown(() => service.stop());
const http = createHttpClient(service.url ?? '');
const token = (permissions: Permission[]) => signToken({ project: TestProject, permissions }, { secret: TestSecret, issuer: config.auth.issuer, audience: config.auth.audience });
const p = `/${TestProject}`;
const admin = await token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite']);
const app = await token(['productsRead', 'checkoutRead', 'fulfillmentsRead', 'ordersRead']);
const pos = await token(['updatePricingCheckoutProcess']);

const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
await http.request('PUT', `${p}/settings`, {
  token: admin,
  body: { currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'], fiscalization: { provider: 'none', reason: 'test' } },
});
await http.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Bahnhof' } });
const products = [
  { sku: 'WATER', name: 'Wasser', taxCategory: 'normal' },
  { sku: 'COLA', name: 'Cola', taxCategory: 'normal', fulfillmentType: 'vending-machine' },
];
await http.request('POST', `${p}/products/_batch`, { token: admin, ...ndjson(products) });
await http.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson(products.map((x) => ({ sku: x.sku, category: 'default', prices: [{ price: '1.50', currency: 'EUR', tier: 'list' }] }))),
});

async function until<T>(read: () => Promise<T>, holds: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(100);
  }
}

/** A checkout with a vending machine item: each step's status, and the fulfillment once delivered. */
async function checkout(): Promise<{ id: string; statuses: number[]; fulfillment: string; order: number }> {
  const id = `cl-${randomUUID()}`;
  const info = await http.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', items: [{ sku: 'WATER', amount: 1 }, { sku: 'COLA', amount: 1 }] } });
  const created = await http.request('PUT', `${p}/checkout/process/${id}`, { token: app, body: { signedCheckoutInfo: info.body, paymentMethod: 'cash' } });
  const patch = { token: pos, headers: { 'content-type': 'application/merge-patch+json' } };
  const processing = await http.request('PATCH', `${p}/pos/checkout/id/${id}`, { ...patch, body: { state: 'processing', processedBy: 'kasse-1' } });
  const successful = await http.request('PATCH', `${p}/pos/checkout/id/${id}`, { ...patch, body: { state: 'successful' } });
  const fulfillmentId = created.body.fulfillments?.[0]?.id;
  const delivered = await until(
    () => http.request('GET', `${p}/fulfillments/${fulfillmentId}`, { token: app }),
    (res) => res.body?.state === 'processed' || res.body?.state === 'failed',
  );
  const order = await http.request('GET', `${p}/orders/${id}`, { token: app });
  return { id, statuses: [info.status, created.status, processing.status, successful.status], fulfillment: delivered.body.state, order: order.status };
}

const Completed = { statuses: [200, 201, 200, 200], fulfillment: 'processed', order: 200 };
/**
 * A checkout's outcome without its id. The PUT that creates the process may answer 200: when the
 * node carrying its reply is killed, the edge sends the PUT again, and it answers the process the
 * first one made (one process either way; the order and delivery counts below check that).
 */
const outcome = ({ id: _id, statuses, ...rest }: Awaited<ReturnType<typeof checkout>>) => ({
  statuses: statuses.map((status, step) => (step === 1 && status === 200 ? 201 : status)),
  ...rest,
});

t.test('streams, the auth-failure bucket and the job consumers have three replicas; a stream made with one is updated, not made anew', async (t) => {
  const jobs = await jsm.streams.info(JobStream.name);
  t.equal(jobs.config.num_replicas, 3, 'JOBS has three replicas');
  t.equal(jobs.created, before.created, 'JOBS is the stream that was there');
  // The service's own pools may have jobs in flight beside it: the marker is what must be kept.
  const held = await jsm.streams.getMessage(JobStream.name, { last_by_subj: 'jobs.none.marker' });
  t.equal(held?.seq, marker.seq, 'with the job it held');
  t.equal((await jsm.streams.info('EVENTS')).config.num_replicas, 3, 'EVENTS has three replicas');
  t.equal((await jsm.streams.info('KV_edge-auth-failures')).config.num_replicas, 3, 'the auth-failure bucket has three replicas');
  const consumers = [];
  for await (const c of jsm.consumers.list(JobStream.name)) consumers.push(`${c.name} ${c.config.num_replicas}`);
  t.ok(consumers.length >= 3, `the job pools have their consumers (${consumers.join(', ')})`);
  t.same(
    consumers.filter((c) => !c.endsWith(' 3')),
    [],
    'every job consumer has three replicas',
  );
});

t.test("the routes refuse a node without the route credentials: it never joins the cluster", async (t) => {
  const [first] = cluster.nats;
  const intruderRoute = await freePort();
  const intruderMonitor = await freePort();
  const intruder = await startNatsServer({
    storeDir: path.join(cluster.dir, 'intruder'),
    log: quiet,
    monitorPort: intruderMonitor,
    configFile: await writeIntruderConfig(intruderRoute, first!.clusterPort),
  });
  t.teardown(() => intruder.stop());
  const routez = async (port: number) => (await (await fetch(`http://127.0.0.1:${port}/routez`)).json()) as { num_routes: number; routes?: Array<{ remote_id: string }> };
  // Routes are tried at once and again every second: three seconds are a few attempts.
  await sleep(3000);
  t.equal((await routez(intruderMonitor)).num_routes, 0, 'the intruder has no route');
  for (const node of cluster.nats) t.equal((await routez(node.monitorPort)).num_routes, cluster.nats.length - 1, `${node.name} routes only to its peers`);
});

async function writeIntruderConfig(routePort: number, targetPort: number): Promise<string> {
  const file = path.join(cluster.dir, 'intruder.conf');
  await writeFile(file, `server_name: intruder\ncluster {\n  name: checkout-cluster\n  listen: 127.0.0.1:${routePort}\n  routes: [nats-route://127.0.0.1:${targetPort}]\n}\n`);
  return file;
}

t.test("revoking an integration ends its access within 5 s on every node, also while connected", async (t) => {
  const owner = await token(['projectsWrite']);
  const made = await http.request('POST', `${p}/integrations`, { token: owner, body: { name: 'Kasse 7', kind: 'nats' } });
  t.equal(made.status, 201, made.text);
  const connections = await Promise.all(
    cluster.nats.map((node) => connect({ servers: node.url, authenticator: credsAuthenticator(new TextEncoder().encode(made.body.creds)), inboxPrefix: made.body.nats.inboxPrefix, maxReconnectAttempts: 0 })),
  );
  let revokedAt = Date.now();
  const closed = connections.map((nc, i) => cutOff(nc).then(() => ({ node: cluster.nats[i]!.name, after: Date.now() - revokedAt })));
  revokedAt = Date.now();
  t.equal((await http.request('DELETE', `${p}/integrations/${made.body.id}`, { token: owner })).status, 200);
  const ends = await Promise.race([Promise.all(closed), sleep(5000).then(() => 'still open' as const)]);
  t.not(ends, 'still open', 'every node cut its connection within 5 s');
  if (ends !== 'still open') t.ok(ends.every((e) => e.after < 5000), JSON.stringify(ends));
  for (const node of cluster.nats) {
    const again = await connect({ servers: node.url, authenticator: credsAuthenticator(new TextEncoder().encode(made.body.creds)), maxReconnectAttempts: 0 }).then(
      async (nc) => {
        await nc.close();
        return 'connected';
      },
      (err: unknown) => String(err),
    );
    t.match(again, /Authorization|Authentication|revoked/i, `${node.name} refuses it now`);
  }
});

t.test('50 checkouts with a vending machine item, the node leading JOBS killed mid-way: every paid process is one order and one delivery', async (t) => {
  t.same(outcome(await checkout()), Completed, 'a checkout before');

  const leader = (await jsm.streams.info(JobStream.name)).cluster?.leader;
  const node = cluster.nats.find((n) => n.name === leader);
  if (!node) throw new Error(`no node leads JOBS (${leader})`);

  // Ten customers at a time; the node is killed when the twentieth checkout is done.
  const Flows = 50;
  const results: Array<Awaited<ReturnType<typeof checkout>>> = [];
  let started = 0;
  let killed: Promise<void> | undefined;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (started < Flows) {
        started++;
        results.push(await checkout());
        if (results.length === 20) killed = node.kill('SIGKILL');
      }
    }),
  );
  await killed;
  t.pass(`killed ${leader}, the leader of JOBS, after 20 of ${Flows} checkouts`);
  t.same(
    results.map(outcome).filter((r) => JSON.stringify(r) !== JSON.stringify(Completed)),
    [],
    `all ${Flows} checkouts answered every step and got their goods`,
  );

  const ids = results.map((r) => r.id);
  const orders = await sql<{ id: string; state: string }[]>`select id, state from orders where project = ${TestProject} and id = any(${ids})`;
  t.equal(orders.length, Flows, 'one order per paid process');
  t.same(orders.filter((o) => o.state !== 'final'), [], 'each final');
  // A delivery is one Idempotency-Key of a fulfillment (a retried call carries the same key).
  const keysByFulfillment = new Map<string, Set<string>>();
  for (const call of fulfillmentService.calls.filter((c) => c.method === 'PUT' && c.body.state === 'processing')) {
    const keys = keysByFulfillment.get(call.body.links.fulfillment.href) ?? new Set();
    keysByFulfillment.set(call.body.links.fulfillment.href, keys.add(call.key));
  }
  t.equal(keysByFulfillment.size, Flows + 1, 'a delivery asked for per checkout (and the one before)');
  t.same([...keysByFulfillment.values()].filter((keys) => keys.size !== 1), [], 'each delivered once');

  const newLeader = await until(
    async () => (await jsm.streams.info(JobStream.name)).cluster?.leader,
    (l) => l !== undefined && l !== leader,
  );
  t.not(newLeader, leader, `another node leads JOBS (${newLeader})`);

  await node.start();
  t.same(outcome(await checkout()), Completed, 'a checkout once the node is back');
});
