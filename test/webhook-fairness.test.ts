import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { insertOutbox } from '../actors/outbox/sql.js';
import { startTestService, TestProject } from './support/service.js';
import { peakOpen, startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Webhook deliveries are fair between projects (actors/webhooks/slots.ts), on real sockets: a
 * project whose receivers are slow holds at most its share of the deliveries in flight, and one
 * origin at most its own, so another project's events go out meanwhile; a receiver that answers
 * 2xx but slowly is backed off as a failing one is.
 *
 * The service runs 4 delivery jobs at once, at most 3 deliveries per project and 2 per origin;
 * answers after 1 s are slow.
 */
const svc = await startTestService(t, {
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_SENDERS: '4',
    WEBHOOK_PROJECT_CONCURRENCY: '3',
    WEBHOOK_ORIGIN_CONCURRENCY: '2',
    WEBHOOK_SLOW_MS: '1000',
    WEBHOOK_TIMEOUT_MS: '5000',
    WEBHOOK_RETRY_SCHEDULE_MS: '1500,3000',
    WEBHOOK_MAX_ATTEMPTS: '20',
  },
});
const Other = 'fair-other';
// A project of its own for the back-off: nothing of the first test is in flight for it.
const Third = 'fair-third';
const tokens: Record<string, string> = {
  [TestProject]: await svc.token(['projectsWrite']),
  [Other]: await svc.token(['projectsWrite'], { project: Other }),
  [Third]: await svc.token(['projectsWrite'], { project: Third }),
};

async function webhook(project: string, receiver: WebhookReceiver, path: string): Promise<{ id: string }> {
  const res = await svc.request('POST', `/${project}/integrations`, { token: tokens[project]!, body: { name: `hook ${path}`, kind: 'webhook', url: `${receiver.url}${path}`, events: ['promotion.*'] } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body;
}

/** `n` events of a project in one outbox write: one delivery job per webhook that asks for them. */
async function events(project: string, tag: string, n: number): Promise<number> {
  const at = Date.now();
  await insertOutbox(
    svc.sql,
    Array.from({ length: n }, (_, i) => ({ subject: `events.${project}.promotion.${tag}-${i}.updated`, payload: { project, id: `${tag}-${i}`, version: 1, at: new Date().toISOString(), event: 'updated' } })),
  );
  return at;
}

async function until<T>(read: () => T, holds: (value: T) => boolean, timeoutMs = 15_000, show: (value: T) => unknown = (v) => v): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(show(value)).slice(0, 2000)}`);
    await sleep(20);
  }
}

t.test('a project whose receivers are slow holds at most its share: another project\'s event goes out meanwhile, and one origin never has more than its own', async (t) => {
  const slowOne = await startWebhookReceiver(t);
  const slowTwo = await startWebhookReceiver(t);
  const fast = await startWebhookReceiver(t);
  // Five webhooks of one project on two slow origins: five jobs for each write, more than the pool runs at once.
  for (const path of ['/a', '/b', '/c']) slowOne.slowDown(path, 2500);
  for (const path of ['/d', '/e']) slowTwo.slowDown(path, 2500);
  for (const path of ['/a', '/b', '/c']) await webhook(TestProject, slowOne, path);
  for (const path of ['/d', '/e']) await webhook(TestProject, slowTwo, path);
  // The other project shares the first slow origin, and has a receiver of its own.
  slowOne.slowDown('/other', 2500);
  await webhook(Other, slowOne, '/other');
  await webhook(Other, fast, '/fast');

  const slowWritten = await events(TestProject, 'slow', 4);
  await until(() => slowOne.received().length + slowTwo.received().length, (n) => n >= 3);
  const otherWritten = await events(Other, 'fast', 1);
  const [arrived] = await until(() => fast.received('/fast'), (r) => r.length >= 1);
  // Waiting its turn behind the slow project's 20 deliveries would take some 12 s (4 senders, 2.5 s
  // each); the relay alone may take a second to pick up a write made straight into the outbox.
  t.ok(arrived!.at - otherWritten < 5000, `the other project's event arrived ${arrived!.at - otherWritten} ms after its write, while the slow ones were still under way`);
  const openThen = [...slowOne.received(), ...slowTwo.received()].filter((r) => r.path !== '/other' && r.at <= arrived!.at && (!r.answeredAt || r.answeredAt > arrived!.at));
  t.ok(openThen.length >= 1, `the project's slow deliveries were under way when it arrived (${openThen.length})`);

  // The receivers recover; once all is answered, what was open at once is read.
  await until(() => slowOne.received().length + slowTwo.received().length, (n) => n >= 6, 20_000);
  for (const path of ['/a', '/b', '/c', '/other']) slowOne.slowDown(path, 0);
  for (const path of ['/d', '/e']) slowTwo.slowDown(path, 0);
  await until(() => [...slowOne.received(), ...slowTwo.received()].filter((r) => r.path !== '/other'), (r) => r.length >= 20 && r.every((x) => x.answeredAt), 40_000, (r) => r.map((x) => [x.path, String(x.headers['webhook-id']).slice(0, 6), x.at - slowWritten, x.answeredAt && x.answeredAt - slowWritten]));
  const own = [...slowOne.received(), ...slowTwo.received()].filter((r) => r.path !== '/other');
  t.ok(peakOpen(own) <= 3, `at most 3 of the project's deliveries at once (${peakOpen(own)})`);
  t.ok(peakOpen(slowOne.received()) <= 2, `at most 2 at once to one origin, whichever project they are of (${peakOpen(slowOne.received())})`);
  t.ok(peakOpen(slowTwo.received()) <= 2, `and to the other (${peakOpen(slowTwo.received())})`);
  const ids = own.map((r) => `${r.path} ${String(r.headers['webhook-id'])}`);
  t.equal(new Set(ids).size, 20, 'each of the 20 deliveries once (a slow 2xx is delivered, not sent again)');
});

t.test('a receiver that answers 2xx but slowly is backed off: its other events wait for its next try, and one probes it', async (t) => {
  const receiver = await startWebhookReceiver(t);
  receiver.slowDown('/slow-ok', 1300);
  const hook = await webhook(Third, receiver, '/slow-ok');
  const written = await events(Third, 'backoff', 6);
  await until(() => receiver.received('/slow-ok'), (r) => r.filter((x) => x.answeredAt).length >= 2);
  // Answered slowly twice: the webhook's next try (1.5 s after) and all after it are answered at once.
  receiver.slowDown('/slow-ok', 0);
  const backedOff = async () => (await svc.sql<{ failed_attempts: number; retry_at: Date | null }[]>`select failed_attempts, retry_at from integrations where id = ${hook.id}`)[0]!;
  let counted = await backedOff();
  for (const deadline = Date.now() + 5000; !(counted.failed_attempts >= 1 && counted.retry_at) && Date.now() < deadline; ) {
    await sleep(20);
    counted = await backedOff();
  }
  t.ok(counted.failed_attempts >= 1 && counted.retry_at, 'the slow answers counted toward its back-off');
  // The first two went out at least 1.3 s + 1.5 s before the next try could: none else before 2.6 s.
  await sleep(Math.max(0, written + 2700 - Date.now()));
  const early = receiver.received('/slow-ok').filter((r) => r.at < written + 2600);
  t.equal(early.length, 2, 'two went out (the origin\'s lanes); after their slow answers, no more of them until the webhook\'s next try', { got: receiver.received('/slow-ok').map((r) => [r.at - written, r.answeredAt && r.answeredAt - written]) });

  const all = await until(() => receiver.received('/slow-ok'), (r) => new Set(r.map((x) => x.headers['webhook-id'])).size >= 6, 20_000);
  t.equal(all.length, 6, 'every event once: the slow ones were delivered, not sent again');
  const list = await svc.request('GET', `/${Third}/integrations/${hook.id}/deliveries?perPage=100`, { token: tokens[Third]! });
  const slow = list.body.deliveries.filter((d: { durationMs: number }) => d.durationMs >= 1300);
  t.equal(slow.length, 2, 'the slow attempts are listed');
  t.ok(slow.every((d: { status: string }) => d.status === '200'), 'as 2xx');
  const [after] = await svc.sql<{ failed_attempts: number }[]>`select failed_attempts from integrations where id = ${hook.id}`;
  t.equal(after!.failed_attempts, 0, 'an answer in time ended the back-off');
  const metrics = await (await fetch(`${svc.url}/metrics`)).text();
  t.match(metrics, /checkout_webhook_deliveries_total\{result="slow"\} [1-9]/, '/metrics counts the slow ones');
});
