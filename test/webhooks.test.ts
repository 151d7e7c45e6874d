import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { freePort } from '../src/infra/processes.js';
import { projectRoot } from '../src/infra/project-root.js';
import { EventPayloads, type EventDomain } from '../subjects/events.js';
import { runBuilt } from './support/process.js';
import { p, patchPos, seedCheckout } from './support/checkout.js';
import { insertOutbox } from '../actors/outbox/sql.js';
import { startTestService, TestProject } from './support/service.js';
import { startWebhookReceiver, type ReceivedWebhook } from './support/webhook-receiver.js';
import { startRawHttp } from './support/raw-http.js';

/**
 * Webhooks over the wire (docs/integrators.md, "Webhooks"), against a real local receiver: every
 * event a webhook asks for is POSTed in Standard Webhooks' form and verifies with the
 * `standardwebhooks` package; a receiver that fails gets its events once it recovers; a rotation
 * keeps the old secret signing; a webhook that fails too long is disabled and can be enabled again;
 * an event can be sent again by hand; a URL that points where it must not is refused.
 */
const receiver = await startWebhookReceiver(t);
const svc = await startTestService(t, {
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE_MS: '300,600,900',
    WEBHOOK_MAX_ATTEMPTS: '4',
    // Long enough for 40 KB deliveries on a busy machine: a timeout sends the event again (at least once).
    WEBHOOK_TIMEOUT_MS: '2000',
  },
});
const fx = await seedCheckout(svc);
const owner = await svc.token(['projectsWrite']);

async function makeWebhook(path: string, extra: object = {}): Promise<any> {
  const res = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: `hook ${path}`, kind: 'webhook', url: `${receiver.url}${path}`, ...extra } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

async function until<T>(read: () => T | Promise<T>, holds: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await sleep(50);
  }
}

/** A sale at a PoS: created, taken over, paid. Answers the process id. */
async function sale(): Promise<string> {
  const created = await fx.createProcess();
  if (created.status !== 201) throw new Error(created.text);
  await patchPos(svc, fx.tokens.pricing, created.body.id, { state: 'processing', processedBy: 'kasse-1' });
  await patchPos(svc, fx.tokens.pricing, created.body.id, { state: 'successful' });
  return created.body.id;
}

const verified = (secret: string, r: ReceivedWebhook) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: any };
const deliveries = async (id: string) => (await svc.request('GET', `${p}/integrations/${id}/deliveries?perPage=1000`, { token: owner })).body;

t.test('every event of a sale is POSTed signed in Standard Webhooks\' form, each once, and verifies', async (t) => {
  const hook = await makeWebhook('/all');
  t.match(hook, { kind: 'webhook', state: 'active', url: `${receiver.url}/all`, events: null });
  t.match(hook.secret, /^whsec_[A-Za-z0-9+/]{40,}={0,2}$/, 'a whsec_ secret of 32 random bytes');
  const id = await sale();
  // The sale's last event is order.fiscalized, from its TSE job after the others.
  const got = await until(() => receiver.received('/all'), (r) => ['order.final', 'order.fiscalized'].every((type) => r.some((x) => verified(hook.secret, x).type === type)));
  const messages = got.map((r) => ({ r, body: verified(hook.secret, r) }));
  const types = messages.map((m) => m.body.type);
  for (const type of ['checkout.created', 'pos.pending', 'pos.processing', 'pos.successful', 'checkout.successful', 'order.final']) t.ok(types.includes(type), `${type} arrived`, { types });
  for (const { r, body } of messages) {
    const domain = body.type.split('.')[0] as EventDomain;
    t.ok(EventPayloads[domain].safeParse(body.data).success, `${body.type}: data is the event as /asyncapi.json documents it`);
    t.equal(r.headers['content-type'], 'application/json');
    t.match(r.headers['webhook-timestamp'], /^\d{10}$/);
    t.ok(Math.abs(Date.parse(body.timestamp) - Date.parse(body.data.at)) < 1000, 'timestamp: when the change wrote the event');
  }
  const ids = got.map((r) => r.headers['webhook-id']);
  t.equal(new Set(ids).size, ids.length, 'each event once, with its own webhook-id');
  t.ok(messages.filter((m) => m.body.data.id === id).length >= 6, 'the sale\'s events');
  await sleep(300);
  const all = receiver.received('/all');
  const listed = await until(() => deliveries(hook.id), (l) => l.pagination.totalItems >= all.length);
  t.equal(listed.pagination.totalItems, all.length, 'each attempt is listed');
  t.match(listed.deliveries[0], { eventId: String, eventType: String, attempt: 1, status: '200', durationMs: Number, response: 'ok' });
});

t.test('a webhook receives the event types it asks for, and only those', async (t) => {
  const hook = await makeWebhook('/finals', { events: ['order.final', 'pos.*'] });
  await sale();
  // Deliveries run side by side: wait for every type asked for, then a moment for any that should not come.
  await until(() => receiver.received('/finals'), (r) => new Set(r.map((x) => verified(hook.secret, x).type)).size >= 4);
  await sleep(300);
  const types = receiver.received('/finals').map((r) => verified(hook.secret, r).type);
  t.same([...new Set(types)].sort(), ['order.final', 'pos.pending', 'pos.processing', 'pos.successful']);
});

t.test('events too large for one message together are delivered in several jobs, each event once', async (t) => {
  await makeWebhook('/large', { events: ['promotion.*'] });
  // 40 events of about 40 KB in one outbox batch: 1.6 MB, more than a NATS message may carry.
  const filler = 'x'.repeat(40_000);
  const events = Array.from({ length: 40 }, (_, i) => ({
    subject: `events.${TestProject}.promotion.large-${i}.updated`,
    payload: { project: TestProject, id: `large-${i}`, version: 1, at: new Date().toISOString(), event: 'updated', note: filler },
  }));
  await insertOutbox(svc.sql, events);
  const got = await until(() => receiver.received('/large'), (r) => r.length >= events.length);
  t.same(new Set(got.map((r) => JSON.parse(r.body).data.id)), new Set(events.map((e) => e.payload.id)), 'every event arrived');
  await sleep(300);
  t.equal(receiver.received('/large').length, events.length, 'each once');
});

t.test('a receiver that answers 500, hangs, or closes the connection gets every event once it recovers', async (t) => {
  for (const [path, how] of [['/flaky', 500], ['/hanging', 'hang'], ['/closing', 'close']] as const) {
    const hook = await makeWebhook(path, { events: ['order.final'] });
    receiver.failNext(path, 2, how);
    const id = await sale();
    const got = await until(() => receiver.received(path), (r) => r.some((x) => x.answer === 200));
    const finals = got.filter((r) => verified(hook.secret, r).data.id === id);
    t.same(finals.map((r) => r.answer), [how, how, 200], `${path}: two failures, then delivered`);
    t.equal(new Set(finals.map((r) => r.headers['webhook-id'])).size, 1, `${path}: every attempt carries the same webhook-id`);
    // Each attempt is recorded within moments of its answer.
    const attempts = (await until(() => deliveries(hook.id), (l) => l.deliveries.some((a: any) => a.status === '200'))).deliveries;
    const expected = how === 'hang' ? 'timeout' : how === 'close' ? 'connection_failed' : '500';
    // A kept connection closed before a byte of an answer is tried once more at once, on a new one
    // (actors/webhooks/sender.ts): both closes may then be one attempt.
    const failed = how === 'close' && attempts.length === 2 ? 1 : 2;
    const want = [[failed + 1, '200'], ...Array.from({ length: failed }, (_, i) => [failed - i, expected])];
    t.same(attempts.map((a: any) => [a.attempt, a.status]), want, `${path}: the attempts, newest first`);
  }
});

t.test('a receiver whose 2xx has a folded header line has its event delivered once, not tried again', async (t) => {
  // RFC 9112 5.2: a folded line is read as spaces (src/infra/obs-fold.ts); it failed every attempt before.
  const raw = await startRawHttp(t, () => 'HTTP/1.1 200 OK\r\nX-Note: taken\r\n  with thanks\r\nContent-Length: 2\r\n\r\nok');
  const res = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'hook folded', kind: 'webhook', url: `${raw.url}/folded`, events: ['order.final'] } });
  t.equal(res.status, 201, res.text);
  const id = await sale();
  const attempts = (await until(() => deliveries(res.body.id), (l) => l.deliveries.length > 0)).deliveries;
  t.match(attempts, [{ attempt: 1, status: '200' }], 'the first attempt delivered');
  t.equal(attempts.length, 1, 'and the only one');
  t.equal(raw.requests.length, 1, 'one POST');
  t.equal(JSON.parse(raw.requests[0]!.body).data.id, id);
});

t.test('a rotated secret keeps the old one signing too, for a day', async (t) => {
  const hook = await makeWebhook('/rotating', { events: ['order.final'] });
  const rotated = await svc.request('POST', `${p}/integrations/${hook.id}/rotate`, { token: owner });
  t.equal(rotated.status, 200, rotated.text);
  t.not(rotated.body.secret, hook.secret, 'a new secret');
  t.match(rotated.body.secret, /^whsec_/);
  await sale();
  const [delivery] = await until(() => receiver.received('/rotating'), (r) => r.length > 0);
  t.ok(verified(rotated.body.secret, delivery!), 'the new secret verifies');
  t.ok(verified(hook.secret, delivery!), 'the old one too');
  t.equal(String(delivery!.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
  t.notOk((await svc.request('GET', `${p}/integrations/${hook.id}`, { token: owner })).text.includes('whsec_'), 'no secret in a read');
});

t.test('a webhook that fails too long is disabled with its reason, sends nothing more, and can be enabled again; an event can be sent again', async (t) => {
  const hook = await makeWebhook('/down', { events: ['order.final'] });
  receiver.failAlways('/down', 503);
  const first = await sale();
  const disabled = await until(() => svc.request('GET', `${p}/integrations/${hook.id}`, { token: owner }), (r) => r.body.state === 'disabled', 20_000);
  t.match(disabled.body.disabledReason, /4 deliveries in a row failed, since .*; the last: 503/);
  const tried = receiver.received('/down').length;
  t.equal(tried, 4, 'four attempts, then no more');
  await sale();
  await sleep(1500);
  t.equal(receiver.received('/down').length, tried, 'a disabled webhook is sent nothing');
  const refused = await svc.request('POST', `${p}/integrations/${hook.id}/deliveries/x/redeliver`, { token: owner });
  t.equal(refused.status, 409, 'a disabled webhook takes no redelivery');

  receiver.recover('/down');
  const enabled = await svc.request('PATCH', `${p}/integrations/${hook.id}`, { token: owner, body: { state: 'active' } });
  t.match(enabled.body, { state: 'active' });
  t.notOk('disabledReason' in enabled.body);
  const third = await sale();
  const delivered = await until(() => receiver.received('/down'), (r) => r.some((x) => x.answer === 200));
  t.equal(verified(hook.secret, delivered.find((x) => x.answer === 200)!).data.id, third, 'after it was enabled, new events are delivered');

  const firstEvent = (await deliveries(hook.id)).deliveries.find((d: any) => d.status === '503')!.eventId;
  const again = await svc.request('POST', `${p}/integrations/${hook.id}/deliveries/${firstEvent}/redeliver`, { token: owner });
  t.equal(again.status, 202, again.text);
  const resent = await until(() => receiver.received('/down'), (r) => r.some((x) => x.answer === 200 && x.headers['webhook-id'] === firstEvent));
  const body = verified(hook.secret, resent.find((x) => x.headers['webhook-id'] === firstEvent && x.answer === 200)!);
  t.equal(body.data.id, first, 'the event given up is sent again by hand, with its webhook-id');
  t.equal((await svc.request('POST', `${p}/integrations/${hook.id}/deliveries/nope/redeliver`, { token: owner })).status, 404);

  const deleted = await svc.request('DELETE', `${p}/integrations/${hook.id}`, { token: owner });
  t.equal(deleted.status, 200);
  const before = receiver.received('/down').length;
  await sale();
  await sleep(1000);
  t.equal(receiver.received('/down').length, before, 'a deleted webhook is sent nothing more');
});

t.test('docs/integrators.md shows the receiver example as scripts/receive-webhooks.ts has it, and it receives a sale\'s events', async (t) => {
  const script = await readFile(path.join(projectRoot(), 'scripts', 'receive-webhooks.ts'), 'utf8');
  const example = /\/\/ --- the example[^\n]*\n([\s\S]*?)\/\/ --- end of the example/.exec(script)?.[1];
  t.ok(example, 'the script marks its example');
  const page = await readFile(path.join(projectRoot(), 'docs', 'integrators.md'), 'utf8');
  t.ok(page.slice(page.indexOf('### Receiving webhooks')).includes(`\`\`\`ts\n${example}\`\`\``), 'the page shows the example unchanged');

  const port = await freePort();
  const made = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'example', kind: 'webhook', url: `http://127.0.0.1:${port}/`, events: ['order.final'] } });
  const run = runBuilt(t, 'scripts/receive-webhooks.js', { WEBHOOK_SECRET: made.body.secret, PORT: String(port) });
  await until(() => run.output(), (out) => out.includes('receiving webhooks'));
  const id = await sale();
  const printed = await until(() => run.output().split('\n').filter((l) => l.startsWith('{')), (lines) => lines.length > 0);
  t.match(JSON.parse(printed[0]!), { type: 'order.final', data: { id, event: 'final' } }, 'the example verified and printed the event');
  const attempts = await until(() => deliveries(made.body.id), (l) => l.deliveries.length > 0);
  t.equal(attempts.deliveries[0].status, '204', 'its 204 took the delivery');
  run.child.kill('SIGTERM');
});

t.test('refuses, at its field, a URL that is not absolute or not http(s), a link-local or unspecified address, an unknown event type, the 21st webhook', async (t) => {
  const post = (body: object) => svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'bad', kind: 'webhook', ...body } });
  for (const [body, field] of [
    [{ url: 'relative/path' }, 'url'],
    [{ url: 'ftp://example.com/hook' }, 'url'],
    [{ url: 'http://169.254.169.254/latest/meta-data' }, 'url'],
    [{ url: 'http://[::ffff:169.254.169.254]/' }, 'url'],
    [{ url: 'http://0.0.0.0:8080/hook' }, 'url'],
    [{ url: 'http://[fe80::1]/hook' }, 'url'],
    [{ url: `${receiver.url}/x`, events: ['order.nope'] }, 'events.0'],
    [{ url: `${receiver.url}/x`, events: ['shopping.*'] }, 'events.0'],
  ] as const) {
    const res = await post(body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.same(res.body.details.map((d: any) => d.path), [field], `the detail names ${field}`);
  }
  const patched = await svc.request('PATCH', `${p}/integrations/${(await makeWebhook('/patch')).id}`, { token: owner, body: { url: 'http://169.254.169.254/' } });
  t.equal(patched.status, 400, 'a PATCH to a link-local address too');
  const count = (await svc.sql<{ n: number }[]>`select count(*)::int as n from integrations where kind = 'webhook'`)[0]!.n;
  for (let i = count; i < 20; i++) await makeWebhook(`/many-${i}`, { events: ['coupon.deleted'] });
  const tooMany = await post({ url: `${receiver.url}/one-more` });
  t.equal(tooMany.status, 400);
  t.match(tooMany.body, { message: /at most 20 integrations of kind webhook/ });
});

t.test('/metrics counts deliveries by result and shows the oldest undelivered event\'s age', async (t) => {
  const res = await fetch(`${svc.url}/metrics`);
  const text = await res.text();
  t.match(text, /checkout_webhook_deliveries_total\{result="delivered"\} \d+/);
  t.match(text, /checkout_webhook_deliveries_total\{result="timeout"\} \d+/);
  t.match(text, /checkout_webhook_oldest_undelivered_seconds \d/);
});
