import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, headers, type NatsConnection } from '@nats-io/transport-node';
import t from 'tap';
import { FailureCountsBucket } from '../src/edge/failure-counts.js';
import { seedCheckout } from './support/checkout.js';
import { refusal } from './support/nats.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * No tenant reaches the platform's machinery (docs/operations.md, "The message plane"): NATS checks
 * a publish permission on the subject and never on the reply subject, and the server itself sends
 * its answer to wherever the reply subject points. An integration's credential (and an edge's)
 * tries every reply-subject trick on the platform's streams, consumers, bucket, services and other
 * projects' events, on a real nats-server with the platform's own configuration, and finds them
 * harmless: the integrations and the edges live in accounts of their own, whose imports rewrite
 * reply subjects.
 */
const svc = await startTestService(t, { env: { ROLE: 'all' } });
const { infra } = svc;
const owner = await svc.token(['projectsWrite', 'shopsRead']);
const OtherProject = 'acme-other01';

const connectWith = (creds: string | Uint8Array, options: { inboxPrefix?: string; timeout?: number } = {}): Promise<NatsConnection> =>
  connect({ servers: infra.natsUrl, authenticator: credsAuthenticator(typeof creds === 'string' ? new TextEncoder().encode(creds) : creds), maxReconnectAttempts: 0, ...options });

async function makeIntegration(project = TestProject): Promise<any> {
  const token = project === TestProject ? owner : await svc.token(['projectsWrite'], { project });
  const res = await svc.request('POST', `/${project}/integrations`, { token, body: { name: 'Kasse 3', kind: 'nats' } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

/** What a trick could take from the platform: its streams, their consumers, the bucket, messages and other projects' subjects. */
async function platformState(jsm: JetStreamManager) {
  // A stream a trick deleted reads as missing (-1, or no consumers), so that the assertions below say what was lost.
  const consumers = async (stream: string) => (await jsm.consumers.list(stream).next().catch(() => [])).map((c) => c.name).sort();
  const messages = async (stream: string) => (await jsm.streams.info(stream).catch(() => undefined))?.state.messages ?? -1;
  const other = await jsm.streams.info('EVENTS', { subjects_filter: `events.${OtherProject}.>` }).catch(() => undefined);
  return {
    streams: (await jsm.streams.names().next()).sort(),
    jobsConsumers: await consumers('JOBS'),
    eventsConsumers: await consumers('EVENTS'),
    eventMessages: await messages('EVENTS'),
    otherProjectEvents: other?.state.subjects ?? {},
    bucketMessages: await messages(`KV_${FailureCountsBucket}`),
    otherShops: (await svc.sql`select count(*)::int as n from shops where project = ${OtherProject}`)[0]!.n as number,
  };
}

/** Publishes `subject` with `reply`, for every reply subject an attacker would aim at; the server's answers (if any) go there. */
async function aimRepliesAt(nc: NatsConnection, subject: string, payload: string, replies: string[]): Promise<void> {
  for (const reply of replies) nc.publish(subject, payload, { reply });
  await nc.flush();
}

const admin = await jetstreamManager(svc.nc);
// A sale in this project (events in EVENTS, and an order's signature job's consumer on JOBS) and a shop to touch in the other.
const fx = await seedCheckout(svc);
const sale = await fx.createProcess();
if (sale.status !== 201) throw new Error(sale.text);

t.test("an integration's reply-subject tricks leave every platform stream, consumer, bucket, service and other project untouched", async (t) => {
  const integration = await makeIntegration();
  const other = await makeIntegration(OtherProject);
  // An event it may read, so that the pull has something to answer with.
  await svc.request('POST', `/${TestProject}/shops`, { token: await svc.token(['shopsWrite']), body: { name: 'Trick shop' } });
  const before = await platformState(admin);
  t.ok(before.jobsConsumers.length > 0 && before.eventsConsumers.includes(integration.nats.consumer) && before.eventMessages > 0, 'the platform has streams, consumers and events', before);

  const nc = await connectWith(integration.creds);
  t.teardown(() => nc.close());
  const c = integration.nats.consumer;
  const targets = [
    '$JS.API.STREAM.DELETE.JOBS',
    '$JS.API.STREAM.PURGE.EVENTS',
    '$JS.API.STREAM.DELETE.EVENTS',
    ...before.jobsConsumers.map((name) => `$JS.API.CONSUMER.DELETE.JOBS.${name}`),
    `$JS.API.CONSUMER.DELETE.EVENTS.${other.nats.consumer}`,
    `$JS.API.STREAM.DELETE.KV_${FailureCountsBucket}`,
    `$JS.API.STREAM.PURGE.KV_${FailureCountsBucket}`,
    `$KV.${FailureCountsBucket}.forged`,
    `events.${OtherProject}.checkout.forged.created`,
    `events.${TestProject}.checkout.forged.created`,
    'svc.shops.create',
    `jobs.fiscal.${TestProject}.forged.start`,
    `$JS.API.CONSUMER.MSG.NEXT.EVENTS.${other.nats.consumer}`,
  ];
  await aimRepliesAt(nc, `$JS.API.CONSUMER.MSG.NEXT.EVENTS.${c}`, JSON.stringify({ batch: 1, no_wait: true }), targets);
  await aimRepliesAt(nc, `$JS.API.CONSUMER.MSG.NEXT.EVENTS.${c}`, JSON.stringify({ batch: 5, expires: 200_000_000 }), targets);
  await aimRepliesAt(nc, `$JS.API.CONSUMER.INFO.EVENTS.${c}`, '', targets);
  await aimRepliesAt(nc, `$JS.ACK.EVENTS.${c}.1.1.1.1.1`, '+ACK', targets);
  // svc.shops.create's request, if a reply ever reached it: a shop in the other project.
  await aimRepliesAt(nc, `$JS.API.CONSUMER.INFO.EVENTS.${c}`, JSON.stringify({ project: OtherProject, shop: { name: 'forged' } }), ['svc.shops.create']);
  await sleep(1000);

  const after = await platformState(admin);
  t.same(after.streams, before.streams, 'no stream deleted');
  t.same(after.jobsConsumers, before.jobsConsumers, "the workers' consumers on JOBS are all there");
  t.same(after.eventsConsumers, before.eventsConsumers, "every integration's consumer on EVENTS is there");
  t.ok(after.eventMessages >= before.eventMessages, `EVENTS not purged (${before.eventMessages} -> ${after.eventMessages})`);
  t.same(after.otherProjectEvents, before.otherProjectEvents, "nothing stored on the other project's subjects");
  t.equal(after.bucketMessages, before.bucketMessages, 'nothing written to the edge bucket');
  t.equal(after.otherShops, before.otherShops, 'no shop made in the other project');
  const forged = await admin.streams.info('EVENTS', { subjects_filter: `events.${TestProject}.checkout.forged.>` }).catch(() => undefined);
  t.same(forged?.state.subjects ?? {}, {}, "nothing stored as its own project's events either");

  // The direct ways stay shut: permissions, and an account whose own JetStream API reaches nobody.
  const direct: Array<[string, () => Promise<unknown>]> = [
    ['the JetStream API', () => nc.request('$JS.API.STREAM.DELETE.JOBS', '', { timeout: 1000 })],
    ['svc.>', () => nc.request('svc.shops.list', JSON.stringify({ project: TestProject }), { timeout: 1000 })],
    ["another integration's consumer", () => nc.request(`$JS.API.CONSUMER.MSG.NEXT.EVENTS.${other.nats.consumer}`, '{"batch":1,"no_wait":true}', { timeout: 1000 })],
    ['the events', () => nc.request(`events.${TestProject}.order.x.final`, '{}', { timeout: 1000 })],
  ];
  for (const [what, attempt] of direct) t.ok((await refusal(attempt)) instanceof Error, `${what}: refused`);
  t.equal((await jetstream(nc).consumers.get('EVENTS', c).then((x) => x.info())).name, c, 'and it still reads its own consumer');
});

t.test("an edge's credential reaches the workers' services and its bucket's keys, and its tricks leave the platform untouched", async (t) => {
  const before = await platformState(admin);
  const edge = await connectWith(await readFile(infra.natsAuth.creds.edge));
  t.teardown(() => edge.close());
  const reply = await edge.request('svc.shops.list', JSON.stringify({ project: TestProject }), { timeout: 5000 });
  t.ok(Array.isArray(reply.json()), 'a request to svc.> is answered by a worker');

  const targets = [
    '$JS.API.STREAM.DELETE.JOBS',
    '$JS.API.STREAM.PURGE.EVENTS',
    ...before.jobsConsumers.map((name) => `$JS.API.CONSUMER.DELETE.JOBS.${name}`),
    `$JS.API.STREAM.DELETE.KV_${FailureCountsBucket}`,
    `$JS.API.STREAM.PURGE.KV_${FailureCountsBucket}`,
    `events.${OtherProject}.checkout.forged.created`,
    `jobs.fiscal.${TestProject}.forged.start`,
  ];
  await aimRepliesAt(edge, 'svc.shops.list', JSON.stringify({ project: TestProject }), targets);
  await aimRepliesAt(edge, `$JS.API.DIRECT.GET.KV_${FailureCountsBucket}.$KV.${FailureCountsBucket}.nothing`, '', targets);
  const put = headers();
  put.set('Nats-Expected-Last-Subject-Sequence', '0');
  for (const reply of targets) edge.publish(`$KV.${FailureCountsBucket}.edge-trick-${targets.indexOf(reply)}`, JSON.stringify({ count: 1, start: Date.now() }), { reply, headers: put });
  await edge.flush();
  await sleep(1000);

  const after = await platformState(admin);
  t.same(after.streams, before.streams, 'no stream deleted');
  t.same(after.jobsConsumers, before.jobsConsumers, "the workers' consumers on JOBS are all there");
  t.same(after.eventsConsumers, before.eventsConsumers, 'the consumers on EVENTS are all there');
  t.ok(after.eventMessages >= before.eventMessages, 'EVENTS not purged');
  t.same(after.otherProjectEvents, before.otherProjectEvents, "nothing stored on another project's subjects");
  t.equal(after.bucketMessages, before.bucketMessages + targets.length, 'its bucket holds what it wrote, and nothing was taken from it');

  const direct: Array<[string, () => Promise<unknown>]> = [
    ['deleting its bucket', () => edge.request(`$JS.API.STREAM.DELETE.KV_${FailureCountsBucket}`, '', { timeout: 1000 })],
    ['purging its bucket', () => edge.request(`$JS.API.STREAM.PURGE.KV_${FailureCountsBucket}`, '', { timeout: 1000 })],
    [
      'a consumer with a deliver subject on its bucket',
      () => edge.request(`$JS.API.CONSUMER.CREATE.KV_${FailureCountsBucket}`, JSON.stringify({ stream_name: `KV_${FailureCountsBucket}`, config: { deliver_subject: '_INBOX.x', ack_policy: 'none' } }), { timeout: 1000 }),
    ],
    ['any other stream', () => edge.request('$JS.API.STREAM.INFO.JOBS', '', { timeout: 1000 })],
    ['the JetStream API of its own account', () => edge.request('$JS.API.INFO', '', { timeout: 1000 })],
    ['taking a job', () => edge.request('$JS.API.CONSUMER.MSG.NEXT.JOBS.fulfillment-caller', '{}', { timeout: 1000 })],
    ['publishing an event', () => edge.request(`events.${TestProject}.order.x.final`, '{}', { timeout: 1000 })],
  ];
  for (const [what, attempt] of direct) t.ok((await refusal(attempt)) instanceof Error, `${what}: refused`);
  t.ok((await admin.streams.info(`KV_${FailureCountsBucket}`)).config.name, 'the bucket is still there');
});

t.test("an integration's account holds a few connections and subscriptions, and small messages; other integrations are not touched", async (t) => {
  const integration = await makeIntegration();
  const neighbour = await makeIntegration();
  const connections: NatsConnection[] = [];
  t.teardown(() => Promise.all(connections.map((c) => c.close().catch(() => {}))));
  for (let i = 0; i < 4; i++) connections.push(await connectWith(integration.creds));
  const fifth = await refusal(() => connectWith(integration.creds, { timeout: 3000 }));
  t.ok(fifth instanceof Error, `a fifth connection of one integration is refused (${String(fifth)})`);
  const neighbourConnection = await connectWith(neighbour.creds);
  connections.push(neighbourConnection);
  t.ok(neighbourConnection.info?.server_id, "another integration of the project still connects: the limit is each integration's");

  const nc = connections[0]!;
  const errors: unknown[] = [];
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'error') errors.push(s.error);
  })();
  for (let i = 0; i < 20; i++) nc.subscribe(`_INBOX.sub${i}`);
  await nc.flush().catch(() => {});
  await sleep(300);
  t.ok(errors.some((e) => /maximum subscriptions/i.test(String(e))) || nc.isClosed(), `subscriptions past 16 are refused (${errors.map(String).join('; ')})`);

  const big = await refusal(() => connections[1]!.request(`$JS.API.CONSUMER.INFO.EVENTS.${integration.nats.consumer}`, 'x'.repeat(9000), { timeout: 1000 }));
  t.ok(big instanceof Error, `a message over 8 KiB is refused (${String(big)})`);
});

t.test('a project has at most 20 NATS integrations by default, with a clear refusal past it', async (t) => {
  const project = 'acme-many01';
  const token = await svc.token(['projectsWrite'], { project });
  for (let i = 0; i < 20; i++) {
    const res = await svc.request('POST', `/${project}/integrations`, { token, body: { name: `n${i}`, kind: 'nats' } });
    t.equal(res.status, 201, `integration ${i + 1}`);
  }
  const refused = await svc.request('POST', `/${project}/integrations`, { token, body: { name: 'one too many', kind: 'nats' } });
  t.equal(refused.status, 400);
  t.match(refused.body, { type: 'bad_request', details: [{ code: 'too_many', path: 'kind' }] });
  t.match(refused.body.message, /at most 20/);
  const list = await svc.request('GET', `/${project}/integrations`, { token });
  t.equal(list.body.integrations.length, 20, 'nothing more was made');
});

t.test('rotations are limited per integration, with the time to wait, and an account revokes its users all at once', async (t) => {
  const integration = await makeIntegration();
  let last = integration.creds as string;
  for (let i = 0; i < 10; i++) {
    const res = await svc.request('POST', `/${TestProject}/integrations/${integration.id}/rotate`, { token: owner });
    t.equal(res.status, 200, `rotation ${i + 1}`);
    last = res.body.creds;
  }
  const refused = await svc.request('POST', `/${TestProject}/integrations/${integration.id}/rotate`, { token: owner });
  t.equal(refused.status, 429);
  t.match(refused.body, { type: 'too_many_rotations' });
  const wait = Number(refused.headers.get('retry-after'));
  t.ok(wait > 0 && wait <= 3600, `Retry-After ${wait}`);

  const [row] = await svc.sql<{ jwt: string }[]>`select jwt from nats_account_jwts where account = ${integration.nats.account}`;
  const claims = JSON.parse(Buffer.from(row!.jwt.split('.')[1]!, 'base64url').toString()) as { nats: { revocations?: Record<string, number> } };
  t.same(Object.keys(claims.nats.revocations ?? {}), ['*'], "ten rotations leave one entry in the account's revocations");
  t.ok((await refusal(() => connectWith(integration.creds))) instanceof Error, 'the first credential is refused');
  const nc = await connectWith(last);
  t.ok(nc.info?.server_id, 'the last one connects');
  await nc.close();
});
