import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { encodeUser, fmtCreds } from '@nats-io/jwt';
import { createAccount, createUser } from '@nats-io/nkeys';
import { connect, credsAuthenticator, errors, type NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import t from 'tap';
import { connectNats } from '../src/infra/nats.js';
import { seedCheckout } from './support/checkout.js';
import { cutOff, refusal } from './support/nats.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * The message plane is a door too: the file's nats-server runs with the platform's NATS trust (as
 * `npm start` makes it), the service connects as its user, and every connection needs credentials,
 * each with the least its holder needs.
 */
const svc = await startTestService(t);
const { infra } = svc;
const url = infra.natsUrl;
const owner = await svc.token(['projectsWrite']);
const OtherProject = 'acme-other01';

async function connectWith(creds: string | Uint8Array, options: { inboxPrefix?: string } = {}): Promise<NatsConnection> {
  return connect({ servers: url, authenticator: credsAuthenticator(typeof creds === 'string' ? new TextEncoder().encode(creds) : creds), maxReconnectAttempts: 0, ...options });
}

/** Whether the server refused an operation for its permissions (a subscription's error, or a request's). */
function isPermissionError(err: unknown): boolean {
  return err instanceof errors.PermissionViolationError || (err instanceof Error && /Permissions Violation/.test(err.message));
}

/** Subscribes and waits for the server's verdict: the subscription's error (a permission violation), or undefined when it stands. */
async function subscribeVerdict(nc: NatsConnection, subject: string, queue?: string): Promise<unknown> {
  return new Promise((resolve) => {
    const sub = nc.subscribe(subject, { ...(queue ? { queue } : {}), callback: (err) => {
        if (err) resolve(err);
      },
    });
    void nc.flush().then(() => sleep(200)).then(() => {
      sub.unsubscribe();
      resolve(undefined);
    });
  });
}

async function makeIntegration(filter?: string): Promise<any> {
  const res = await svc.request('POST', `/${TestProject}/integrations`, { token: owner, body: { name: 'Kasse 3', kind: 'nats', ...(filter ? { filter } : {}) } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

t.test('a connection without credentials, with a forged JWT, or with an expired user is refused', async (t) => {
  const anonymous = await refusal(() => connect({ servers: url, maxReconnectAttempts: 0 }));
  t.ok(anonymous instanceof errors.AuthorizationError, `anonymous: ${String(anonymous)}`);

  // A user of the platform's account, signed by a key the account does not list.
  const stranger = createAccount();
  const user = createUser();
  const forgedJwt = await encodeUser('forged', user, infra.natsAuth.authority.account.publicKey, { pub: { allow: ['>'] }, sub: { allow: ['>'] } }, { signer: stranger });
  const forged = await refusal(() => connectWith(fmtCreds(forgedJwt, user)));
  t.ok(forged instanceof errors.AuthorizationError, `forged: ${String(forged)}`);

  // A user the account's own signing key issued, but expired.
  const { issueUser } = await import('../src/infra/nats-auth/authority.js');
  const expiredUser = createUser();
  const { encodeUser: encode } = await import('@nats-io/jwt');
  const { keyPair } = await import('../src/infra/nats-auth/authority.js');
  const expiredJwt = await encode('expired', expiredUser, infra.natsAuth.authority.account.publicKey, { pub: { allow: ['>'] } }, { signer: keyPair(infra.natsAuth.authority.account.signingSeed), exp: Math.floor(Date.now() / 1000) - 60 });
  const expired = await refusal(() => connectWith(fmtCreds(expiredJwt, expiredUser)));
  t.ok(expired instanceof Error, `expired: ${String(expired)}`);

  // The same account's key issues a good one: the door opens for it.
  const good = await issueUser(infra.natsAuth.authority, 'good', { pub: { allow: ['nothing.>'] }, sub: { allow: ['_INBOX.>'] } });
  const nc = await connectWith(good.creds);
  t.ok(nc.info?.server_id, 'a user the account issued connects');
  await nc.close();
});

t.test('an edge user may request svc.> but not serve it, nor publish events or jobs', async (t) => {
  const edge = await connectWith(await readFile(infra.natsAuth.creds.edge));
  t.teardown(() => edge.close());
  const serving = await subscribeVerdict(edge, 'svc.shops.list', 'shops');
  t.ok(serving instanceof errors.PermissionViolationError && serving.operation === 'subscription', `serving svc.> is refused: ${String(serving)}`);
  const reply = await edge.request('svc.shops.list', JSON.stringify({ project: TestProject }), { timeout: 5000 });
  t.same(reply.json(), [], 'a request to svc.> is answered by a worker');
  const event = await refusal(() => edge.request('events.acme-test01.order.x.final', '{}', { timeout: 2000 }));
  t.ok(isPermissionError(event), `publishing an event is refused: ${String(event)}`);
  const job = await refusal(() => edge.request('$JS.API.CONSUMER.MSG.NEXT.JOBS.fulfillment-caller', '{}', { timeout: 2000 }));
  t.ok(isPermissionError(job), `taking a job is refused: ${String(job)}`);
});

t.test("a worker user serves svc.> but cannot take an integration's consumer", async (t) => {
  const integration = await makeIntegration();
  const workers = await connectWith(await readFile(infra.natsAuth.creds.workers));
  t.teardown(() => workers.close());
  t.equal(await subscribeVerdict(workers, 'svc.shops.list', 'shops'), undefined, 'serving svc.> stands');
  const pull = await refusal(() => workers.request(`$JS.API.CONSUMER.MSG.NEXT.EVENTS.${integration.nats.consumer}`, JSON.stringify({ batch: 1, expires: 1e9 }), { timeout: 2000 }));
  t.ok(isPermissionError(pull) && String(pull).includes(integration.nats.consumer), `pulling from it is refused: ${String(pull)}`);
  const ack = await refusal(() => workers.request(`$JS.ACK.EVENTS.${integration.nats.consumer}.1.1.1.1.1`, '', { timeout: 2000 }));
  t.ok(isPermissionError(ack), `acknowledging for it is refused: ${String(ack)}`);
});

t.test("an integration reads its project's events through its consumer, and nothing else", async (t) => {
  const integration = await makeIntegration();
  t.match(integration, { kind: 'nats', filter: '>', nats: { stream: 'EVENTS', consumer: `integration-${integration.id}`, inboxPrefix: `_INBOX_${integration.id}`, filterSubject: `events.${TestProject}.>` } });
  t.match(integration.creds, /-----BEGIN NATS USER JWT-----[\s\S]+-----BEGIN USER NKEY SEED-----/, 'a standard .creds file');

  // Events of both projects: a sale here, a coupon there.
  const fx = await seedCheckout(svc);
  const sale = await fx.createProcess();
  t.equal(sale.status, 201);
  const coupons = await svc.token(['couponsWrite'], { project: OtherProject });
  const coupon = await svc.request('POST', `/${OtherProject}/coupons`, { token: coupons, body: { id: 'other-coupon', channels: ['app'], type: 'manual' } });
  t.equal(coupon.status, 201, coupon.text);

  const nc = await connectWith(integration.creds);
  t.teardown(() => nc.close());
  const consumer = await jetstream(nc).consumers.get('EVENTS', integration.nats.consumer);
  const seen: string[] = [];
  for (let round = 0; round < 20 && !seen.some((s) => s.endsWith('.pos.' + sale.body.id + '.pending')); round++) {
    const batch = await consumer.fetch({ max_messages: 50, expires: 1000 });
    for await (const m of batch) {
      seen.push(m.subject);
      m.ack();
    }
  }
  t.ok(seen.includes(`events.${TestProject}.checkout.${sale.body.id}.created`), 'it reads the sale', { seen });
  t.ok(seen.every((s) => s.startsWith(`events.${TestProject}.`)), "only its project's events", { seen });

  const tries: Array<[string, () => Promise<unknown>]> = [
    ['a request to svc.>', () => nc.request('svc.shops.list', JSON.stringify({ project: TestProject }), { timeout: 2000 })],
    ["another project's events", () => nc.request(`$JS.API.CONSUMER.CREATE.EVENTS`, JSON.stringify({ stream_name: 'EVENTS', config: { filter_subject: `events.${OtherProject}.>` } }), { timeout: 2000 })],
    ['the stream list', () => nc.request('$JS.API.STREAM.NAMES', '{}', { timeout: 2000 })],
    ['the jobs', () => nc.request('$JS.API.CONSUMER.MSG.NEXT.JOBS.fulfillment-caller', '{}', { timeout: 2000 })],
  ];
  for (const [what, attempt] of tries) {
    const err = await refusal(attempt);
    t.ok(isPermissionError(err), `${what}: refused (${String(err)})`);
  }
  for (const subject of ['events.>', 'svc.>', '$JS.>', `_INBOX_${'x'.repeat(20)}.>`]) {
    const err = await subscribeVerdict(nc, subject);
    t.ok(isPermissionError(err), `subscribing to ${subject}: refused (${String(err)})`);
  }
  // Alone in its account, it may use the default inbox: no prefix to set up.
  t.equal(await subscribeVerdict(nc, '_INBOX.>'), undefined, 'its inboxes stand');
});

t.test("a revocation ends an integration's access while it is connected, and the rotated credential works", async (t) => {
  const integration = await makeIntegration('pos.>');
  const nc = await connect({ servers: url, authenticator: credsAuthenticator(new TextEncoder().encode(integration.creds)), inboxPrefix: integration.nats.inboxPrefix, maxReconnectAttempts: 0 });
  const closed = cutOff(nc);
  const rotated = await svc.request('POST', `/${TestProject}/integrations/${integration.id}/rotate`, { token: owner });
  t.equal(rotated.status, 200, rotated.text);
  t.not(rotated.body.creds, integration.creds, 'a new credential');
  const revokedAt = Date.now();
  const end = await Promise.race([closed, sleep(5000).then(() => 'still open')]);
  t.not(end, 'still open', 'the server cuts the connection of the revoked credential within 5 s');
  t.ok(Date.now() - revokedAt < 5000);
  const again = await refusal(() => connectWith(integration.creds));
  t.ok(again instanceof Error, `the revoked credential cannot connect again (${String(again)})`);

  const fresh = await connectWith(rotated.body.creds, { inboxPrefix: integration.nats.inboxPrefix });
  const info = await jetstream(fresh).consumers.get('EVENTS', integration.nats.consumer);
  t.equal((await info.info()).name, integration.nats.consumer, 'the new one reads the same consumer');
  const closedToo = cutOff(fresh);
  const deleted = await svc.request('DELETE', `/${TestProject}/integrations/${integration.id}`, { token: owner });
  t.equal(deleted.status, 200);
  const ended = await Promise.race([closedToo.then(() => 'cut'), sleep(5000).then(() => 'still open')]);
  t.equal(ended, 'cut', 'deleting it revokes its credential while it is connected');
  await fresh.close();
  const admin = svc.nc;
  const gone = await refusal(() => admin.request(`$JS.API.CONSUMER.INFO.EVENTS.${integration.nats.consumer}`, '', { timeout: 2000 }).then((m) => m.json<{ error?: { code: number } }>()).then((a) => {
    if (a.error) throw new Error(`consumer: ${a.error.code}`);
  }));
  t.match(String(gone), /404/, 'and its consumer is removed');
});

t.test("a platform process logs what NATS refused it, at error level, with the subject", async (t) => {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  const nc = await connectNats({ url, name: 'test-edge', log, creds: infra.natsAuth.creds.edge });
  t.teardown(() => nc.close());
  nc.publish('jobs.fulfillment.acme.forged', '{}');
  await nc.flush();
  for (let i = 0; i < 50 && !lines.some((l) => l.includes('lacks the permission')); i++) await sleep(20);
  const line = lines.map((l) => JSON.parse(l) as { level: number; msg: string; subject?: string; operation?: string }).find((l) => l.msg.includes('lacks the permission'));
  t.match(line, { level: 50, subject: 'jobs.fulfillment.acme.forged', operation: 'publish' });
});
