import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { pino } from 'pino';
import t from 'tap';
import { insertOutbox } from '../actors/outbox/sql.js';
import { ensureStream } from '../src/infra/jetstream.js';
import { encodeAccountJwt } from '../src/infra/nats-auth/authority.js';
import { readIssuer } from '../src/infra/nats-auth/authority-file.js';
import { createKeyRing, parseKey } from '../src/secrets/key-ring.js';
import { fiscalizedOrder } from './support/fiscal.js';
import { startFulfillmentService } from './support/fulfillment-service.js';
import { startTestService, TestProject, TestSecretsKey } from './support/service.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

/**
 * The platform heals what is taken from it (src/infra/healing.ts, docs/operations.md "Healing"),
 * on a real nats-server: the stream JOBS deleted under a load of sales is made again with its
 * consumers within seconds, with one error line, and what Postgres says is not done is sent again:
 * every sale signed once, every fulfillment call made once, every webhook delivery made at least
 * once. EVENTS deleted is made again with the integrations' consumers, and new events flow. A
 * project whose webhook receiver fails parks its deliveries in Postgres instead of holding places
 * in JetStream that every project shares. A stream made again on what nats-server left of the
 * deleted one (its files still being removed) is noticed, deleted and made again clean. An account
 * JWT recorded and not yet on the servers when JOBS went is pushed again: what it revokes is refused.
 *
 * Few workers (one signer, one caller, one sender) so that jobs wait in JOBS when it goes.
 */
const fulfillmentService = await startFulfillmentService(t);
const receiver = await startWebhookReceiver(t);
const logLines: string[] = [];
const svc = await startTestService(t, {
  env: {
    FULFILLMENT_URL: fulfillmentService.url,
    FULFILLMENT_CALLERS: '1',
    FULFILLMENT_TIMEOUT_MS: '2000',
    FISCAL_SIGNERS: '1',
    WEBHOOK_SENDERS: '1',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE_MS: '60000',
    WEBHOOK_MAX_ATTEMPTS: '50',
  },
  logLines: (line) => logLines.push(line),
});
const p = `/${TestProject}`;
const admin = await svc.token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite']);
const app = await svc.token(['productsRead', 'checkoutRead']);
const payment = await svc.token(['setPaymentState']);
const reader = await svc.token(['fulfillmentsRead', 'ordersRead']);
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Bahnhof' } });
await svc.request('POST', `${p}/products`, { token: admin, body: { sku: 'COLA', name: 'Cola', taxCategory: 'normal', fulfillmentType: 'vending-machine' } });
await svc.request('POST', `${p}/pricing/v2/category/batch`, { token: admin, body: [{ sku: 'COLA', category: 'default', prices: [{ price: '1.00', currency: 'EUR', tier: 'list' }] }] });
const hook = await svc.request('POST', `${p}/integrations`, { token: admin, body: { name: 'orders', kind: 'webhook', url: `${receiver.url}/orders`, events: ['order.final'] } });
if (hook.status !== 201) throw new Error(hook.text);

const jsm = await jetstreamManager(svc.nc);

async function until<T>(read: () => T | Promise<T>, holds: (value: T) => boolean, timeoutMs = 60_000, what = 'the condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 1000)}`);
    await sleep(100);
  }
}

/** A sale of one cola: its process (a fulfillment allocated), paid; answers the process id and its fulfillment's. */
async function sale(): Promise<{ id: string; fulfillment: string }> {
  const info = await svc.request('POST', `${p}/checkout/info`, { token: app, body: { shopID: 's1', items: [{ sku: 'COLA', amount: 1 }] } });
  if (info.status !== 200) throw new Error(`checkout info: ${info.status} ${info.text}`);
  const created = await svc.request('POST', `${p}/checkout/process`, { token: app, body: { signedCheckoutInfo: info.body, paymentMethod: 'cash' } });
  if (created.status !== 201) throw new Error(`process: ${created.status} ${created.text}`);
  const paid = await svc.request('PATCH', `${p}/checkout/process/${created.body.id}`, { token: payment, body: { paymentState: 'successful' } });
  if (paid.status !== 200) throw new Error(`payment: ${paid.status} ${paid.text}`);
  return { id: created.body.id, fulfillment: created.body.fulfillments[0].id };
}

const healedLines = (stream: string) => logLines.filter((line) => line.includes('JetStream lost what the platform keeps there') && line.includes(`"stream":"${stream}"`));

t.test('JOBS deleted under a load of sales: made again within seconds, one error line; every sale signed once, every fulfillment call made once, every webhook delivered', async (t) => {
  const sales: Array<Promise<{ id: string; fulfillment: string }>> = [];
  for (let i = 0; i < 30; i++) sales.push(sale());
  // Some sales are in, and their jobs wait in JOBS (one worker of each kind): the stream goes.
  await until(() => jsm.streams.info('JOBS').then((s) => s.state.messages), (n) => n >= 5, 30_000, 'jobs waiting in JOBS');
  await jsm.streams.delete('JOBS');
  const deletedAt = Date.now();
  for (let i = 0; i < 30; i++) sales.push(sale());
  const done = await Promise.all(sales);

  // The stream is made first, its consumers one after another in the same round.
  const listConsumers = async () => (await jsm.consumers.list('JOBS').next().catch(() => [])).map((c) => c.name).sort();
  const consumers = await until(listConsumers, (names) => ['fiscal', 'fulfillment-caller', 'webhooks'].every((name) => names.includes(name)), 15_000, 'JOBS and its consumers made again');
  t.ok(Date.now() - deletedAt < 15_000, 'JOBS is back within seconds');
  t.pass(`the job consumers are back: ${consumers.join(', ')}`);

  const orders = await Promise.all(done.map(({ id }) => fiscalizedOrder(svc, reader, id, 90_000)));
  t.ok(orders.every((o) => o.fiscalReference.logs.length === 2), 'every sale is signed: its start and its finish');
  const [tss] = await svc.sql<{ signature_counter: string }[]>`select signature_counter from fiscal_local_tss where project = ${TestProject}`;
  t.equal(Number(tss!.signature_counter), 2 * done.length, 'each signed once: two signatures a sale, none more');

  for (const { fulfillment } of done) {
    await until(async () => (await svc.request('GET', `${p}/fulfillments/${fulfillment}`, { token: reader })).body.state, (s) => s === 'processed', 60_000, `fulfillment ${fulfillment} processed`);
  }
  await sleep(1000);
  const twice = done.filter(({ fulfillment }) => {
    const calls = fulfillmentService.callsFor(fulfillment);
    return calls.filter((c) => c.method === 'POST').length !== 1 || calls.filter((c) => c.method === 'PUT').length !== 1;
  });
  t.same(twice, [], 'each fulfillment reserved once and delivered once');

  const delivered = await until(
    () => new Set(receiver.received('/orders').map((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id)),
    (ids) => done.every(({ id }) => ids.has(id)),
    60_000,
    'every order.final delivered',
  );
  t.ok(done.every(({ id }) => delivered.has(id)), 'every sale\'s order.final is delivered, at least once');
  t.equal(healedLines('JOBS').length, 1, 'one error line for the loss');
});

t.test('EVENTS deleted: made again with the integrations\' consumers, and new events flow', async (t) => {
  const made = await svc.request('POST', `${p}/integrations`, { token: admin, body: { name: 'Kasse', kind: 'nats' } });
  t.equal(made.status, 201, made.text);
  const consumer = made.body.nats.consumer as string;
  await jsm.streams.delete('EVENTS');
  await until(() => jsm.consumers.info('EVENTS', consumer).then(() => true, () => false), (ok) => ok, 15_000, 'the integration\'s consumer made again');
  const { id } = await sale();
  const pending = await until(() => jsm.consumers.info('EVENTS', consumer).then((c) => c.num_pending), (n) => n > 0, 30_000, 'events for the integration');
  t.ok(pending > 0, `the integration has the new sale's events to pull (${pending})`);
  const stored = await until(() => jsm.streams.getMessage('EVENTS', { last_by_subj: `events.${TestProject}.order.${id}.final` }).catch(() => null), (m) => m !== null, 30_000, 'order.final in EVENTS');
  t.ok(stored, 'the sale\'s order.final is in EVENTS');
  t.equal(healedLines('EVENTS').length, 1, `one error line for the loss: ${healedLines('EVENTS').join('\n')}`);
});

t.test('a project whose webhook fails parks its deliveries in Postgres: they hold no place of the shared consumer, and another project\'s event goes out', async (t) => {
  const Other = 'heal-other';
  const other = await svc.token(['projectsWrite'], { project: Other });
  receiver.failAlways('/down', 500);
  const down = await svc.request('POST', `${p}/integrations`, { token: admin, body: { name: 'down', kind: 'webhook', url: `${receiver.url}/down`, events: ['promotion.*'] } });
  t.equal(down.status, 201, down.text);
  const up = await svc.request('POST', `/${Other}/integrations`, { token: other, body: { name: 'up', kind: 'webhook', url: `${receiver.url}/up`, events: ['promotion.*'] } });
  t.equal(up.status, 201, up.text);
  // Many writes: a delivery job each, all for the failing receiver.
  for (let i = 0; i < 40; i++) {
    await insertOutbox(svc.sql, [{ subject: `events.${TestProject}.promotion.d${i}.updated`, payload: { project: TestProject, id: `d${i}`, version: 1, at: new Date().toISOString(), event: 'updated' } }]);
  }
  await until(() => receiver.received('/down').length, (n) => n >= 1, 15_000, 'the failing receiver tried');
  const parked = await until(
    () => svc.sql<{ n: number }[]>`select count(*)::int as n from webhook_messages where integration_id = ${down.body.id} and queued_at is null and delivered_at is null`.then((r) => r[0]!.n),
    (n) => n === 40,
    30_000,
    'every delivery parked',
  );
  t.equal(parked, 40, 'the failing receiver\'s deliveries wait in Postgres');
  // A delivery is parked, then its job acked: the last ack may be a moment behind the row.
  const pending = await until(() => jsm.consumers.info('JOBS', 'webhooks').then((c) => c.num_ack_pending), (n) => n === 0, 10_000, 'the parked jobs acked');
  t.equal(pending, 0, 'and hold no place in JetStream');
  await insertOutbox(svc.sql, [{ subject: `events.${Other}.promotion.u1.updated`, payload: { project: Other, id: 'u1', version: 1, at: new Date().toISOString(), event: 'updated' } }]);
  await until(() => receiver.received('/up').length, (n) => n >= 1, 15_000, 'the other project\'s delivery');
  t.pass('the other project\'s event is delivered');
});

t.test('a stream made again on the files its deleted namesake left behind (nats-server 2.9) is deleted and made again clean, and takes messages', async (t) => {
  // What the server can leave when a stream is made again while it still removes the old one's
  // files: the old stream's block index (its last sequence and time) in the new stream's folder.
  const spec = { name: 'REMAINS', subjects: ['remains.>'], maxAgeMs: 3_600_000, duplicateWindowMs: 60_000 };
  await ensureStream(svc.nc, spec);
  const js = jetstream(svc.nc);
  for (let i = 0; i < 11; i++) await js.publish('remains.a', 'x');
  await jsm.streams.purge(spec.name);
  const [account] = await readdir(path.join(svc.infra.dataDir, 'nats', 'jetstream'));
  const folder = path.join(svc.infra.dataDir, 'nats', 'jetstream', account!, 'streams', spec.name, 'msgs');
  const files = await readdir(folder);
  const kept = await Promise.all(files.map(async (f) => ({ f, data: f.endsWith('.blk') ? Buffer.alloc(0) : await readFile(path.join(folder, f)) })));
  await jsm.streams.delete(spec.name);
  await mkdir(folder, { recursive: true });
  for (const { f, data } of kept) await writeFile(path.join(folder, f), data);

  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  t.equal(await ensureStream(svc.nc, spec, log), true, 'made');
  const info = await jsm.streams.info(spec.name);
  t.equal(info.state.last_seq, 0, 'a new stream: nothing of the old one\'s sequence');
  t.equal((await js.publish('remains.a', 'y')).seq, 1, 'it takes a message, its first');
  t.match(warnings.join('\n'), /found the files of the one before; deleted and made again/, 'said at warn');
  await jsm.streams.delete(spec.name);
});

t.test('JOBS deleted: an account JWT recorded and not yet on the servers (its push failed, its job lost) is pushed, and the credential it revokes is refused', async (t) => {
  const made = await svc.request('POST', `${p}/integrations`, { token: admin, body: { name: 'Kasse 2', kind: 'nats' } });
  t.equal(made.status, 201, made.status === 201 ? 'an integration of kind nats' : made.text);
  const account = made.body.nats.account as string;
  const connectWith = (creds: string) =>
    connect({ servers: svc.natsUrl, authenticator: credsAuthenticator(new TextEncoder().encode(creds)), maxReconnectAttempts: 0, timeout: 3000 });
  (await connectWith(made.body.creds)).close();
  await sleep(1100); // the revocation below is later than the credential's issue time (seconds)

  // What a rotation records (the account revoking every user issued up to now), as if its push
  // right after the commit had failed and its job had gone with JOBS: the servers do not have it.
  const { issuer } = await readIssuer(svc.infra.natsAuth.issuerFile, createKeyRing(parseKey(TestSecretsKey)));
  const [row] = await svc.sql<{ issued_at: string; jwt: string }[]>`select issued_at::text, jwt from nats_account_jwts where account = ${account}`;
  const recorded = JSON.parse(Buffer.from(row!.jwt.split('.')[1]!, 'base64url').toString()) as { name: string; nats: object };
  const now = Math.floor(Date.now() / 1000);
  const issuedAt = Math.max(now, Number(row!.issued_at) + 1);
  const revoking = encodeAccountJwt(issuer.operator, { name: recorded.name, publicKey: account, claims: { ...recorded.nats, revocations: { '*': now } } }, issuedAt);
  await svc.sql`update nats_account_jwts set issued_at = ${issuedAt}, jwt = ${revoking} where account = ${account}`;
  const stillIn = await connectWith(made.body.creds);
  t.ok(stillIn.info?.server_id, 'the servers do not know of the revocation yet: the credential connects');
  await stillIn.close();

  const deletedAt = new Date();
  await jsm.streams.delete('JOBS');
  const resent = await until(
    () => svc.sql<{ jobs: number }[]>`select jobs from job_resends where kind = 'revocation' and at >= ${deletedAt}`.then((r) => r[0]?.jobs ?? 0),
    (n) => n > 0,
    30_000,
    'the account updates sent again',
  );
  t.ok(resent >= 1, `account updates sent again from Postgres: ${resent}`);
  const refused = await until(
    () => connectWith(made.body.creds).then(async (nc) => (await nc.close(), false), () => true),
    (no) => no,
    30_000,
    'the revoked credential refused',
  );
  t.ok(refused, 'the servers took the recorded JWT: the revoked credential is refused');
});
