import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { assertGaplessOrderNumbers, p, seedCheckout, watchEvents } from './support/checkout.js';
import type { HttpResponse } from './support/http.js';
import { runBuilt, type ServiceProcess } from './support/process.js';
import { startTestService, TestCheckoutSecret, TestSecret } from './support/service.js';

/**
 * The worker pool dies (SIGKILL) while checkouts are under way and a new one takes over: clients
 * that retry on 503 with the same requests (PUT with their own process id, the same PoS moves)
 * finish every checkout exactly once: one process, one order, gapless order numbers, every event
 * published once. The edge runs in this file; the workers are the built service in a child process
 * (run `npm run build` first).
 */
const svc = await startTestService(t, { env: { ROLE: 'edge', REQUEST_TIMEOUT_MS: '1500' } });

const startWorkers = async (): Promise<ServiceProcess> => {
  const workers = runBuilt(t, 'service/main.js', {
    ROLE: 'workers',
    ...svc.infra.natsEnv('workers'),
    DATABASE_URL: svc.databaseUrl,
    DATABASE_POOL_MAX: '4',
    JWT_SECRET: TestSecret,
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    DATA_DIR: svc.config.dataDir,
    LOG_LEVEL: 'warn',
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const health = await svc.request('GET', '/health');
    if (health.status === 200) return workers;
    if (workers.child.exitCode !== null || Date.now() > deadline) throw new Error(`the workers did not start: ${workers.output()}`);
    await sleep(50);
  }
};

let workers = await startWorkers();
const fx = await seedCheckout(svc);

const Flows = 30;
const DeadlineMs = 30_000;

interface FlowLog {
  id: string;
  /** Answers of 503 (the workers were gone or did not answer in time). */
  unavailable: number;
  /** Retried steps the dead workers had applied before they could answer. */
  appliedBeforeAnswer: string[];
  /** Answers that no rule explains. */
  problems: string[];
}

/** Sends until the answer is not 503; answers it, whether it was sent more than once, and when it was sent last. */
async function untilAnswered(log: FlowLog, send: () => Promise<HttpResponse>): Promise<{ res: HttpResponse; retried: boolean; lastSentAt: number }> {
  const deadline = Date.now() + DeadlineMs;
  for (let attempt = 0; ; attempt++) {
    const lastSentAt = Date.now();
    const res = await send();
    if (res.status !== 503) return { res, retried: attempt > 0, lastSentAt };
    log.unavailable++;
    if (Date.now() > deadline) throw new Error(`${log.id}: still 503 after ${DeadlineMs} ms: ${res.text}`);
    await sleep(80 + Math.random() * 120);
  }
}

const pos = (id: string, patch: object) =>
  svc.request('PATCH', `${p}/pos/checkout/id/${id}`, { token: fx.tokens.pricing, body: patch, headers: { 'content-type': 'application/merge-patch+json' } });
const getProcess = (id: string) => svc.request('GET', `${p}/checkout/process/${id}`, { token: fx.tokens.reader });

/** checkout info → PUT process → PoS processing → PoS successful, each step retried on 503. */
async function flow(index: number): Promise<FlowLog> {
  const id = `wr-${randomUUID()}`;
  const log: FlowLog = { id, unavailable: 0, appliedBeforeAnswer: [], problems: [] };
  const pause = () => sleep(60 + Math.random() * 200);
  const shopID = index % 2 ? 's2' : 's1';
  await sleep(index * 50);

  const info = await untilAnswered(log, () =>
    svc.request('POST', `${p}/checkout/info`, { token: fx.tokens.customer, body: { shopID, session: `sess-${index}`, clientID: 'phone', appUserID: 'user', items: [{ sku: 'WATER', amount: 1 + (index % 3) }] } }),
  );
  if (info.res.status !== 200) log.problems.push(`checkout info: ${info.res.status} ${info.res.text}`);
  await pause();

  const put = await untilAnswered(log, () =>
    svc.request('PUT', `${p}/checkout/process/${id}`, { token: fx.tokens.customer, body: { signedCheckoutInfo: info.res.body, paymentMethod: 'cash' } }),
  );
  if (put.res.status === 200 && put.retried) log.appliedBeforeAnswer.push('create');
  else if (put.res.status !== 201) log.problems.push(`PUT: ${put.res.status} ${put.res.text} (retried: ${put.retried})`);
  await pause();

  // Repeating the move with the same processedBy answers 200 as it stands.
  const processedBy = `pos-${index}`;
  const processing = await untilAnswered(log, () => pos(id, { state: 'processing', processedBy }));
  if (processing.res.status !== 200) log.problems.push(`PoS processing: ${processing.res.status} ${processing.res.text} (retried: ${processing.retried})`);
  await pause();

  const successful = await untilAnswered(log, () => pos(id, { state: 'successful' }));
  if (successful.res.status === 200 && successful.retried) {
    // A PoS repeating the state the process is in is answered as it stands: the process tells
    // whether an earlier attempt had made it successful.
    const { finalizedAt } = (await getProcess(id)).body;
    if (Date.parse(finalizedAt) < successful.lastSentAt) log.appliedBeforeAnswer.push('successful');
  } else if (successful.res.status === 409 && successful.retried) {
    // Already applied by a worker that died before answering: only if the process shows it.
    const now = await getProcess(id);
    if (now.body.paymentState === 'successful') log.appliedBeforeAnswer.push('successful');
    else log.problems.push(`PoS successful: 409 after a retry, but the process is ${now.body.paymentState}`);
  } else if (successful.res.status !== 200) {
    log.problems.push(`PoS successful: ${successful.res.status} ${successful.res.text} (retried: ${successful.retried})`);
  }
  return log;
}

t.test('checkouts under way when the workers are killed finish exactly once with a new worker pool', async (t) => {
  const count = async () =>
    (
      await svc.sql<{ processes: number; successful: number; orders: number }[]>`
        select (select count(*)::int from checkout_processes) as processes,
               (select count(*)::int from checkout_processes where payment_state = 'successful') as successful,
               (select count(*)::int from orders) as orders`
    )[0]!;
  const waitFor = async (enough: (c: Awaited<ReturnType<typeof count>>) => boolean) => {
    const deadline = Date.now() + 15_000;
    while (!enough(await count()) && Date.now() < deadline) await sleep(20);
  };
  const flows = Promise.all(Array.from({ length: Flows }, (_, i) => flow(i)));

  // First the orders cannot be numbered for a while (this test holds the counter table): moves to
  // successful wait inside their transactions, the edge answers 503 after 1.5 s and the clients
  // send them again; once released, the waiting moves commit with nobody to answer to.
  await waitFor((c) => c.processes >= 5);
  await svc.sql.begin(async (tx) => {
    await tx`lock table order_sequences in exclusive mode`;
    await sleep(2000);
  });
  // Then the workers die in the middle of what the release set going.
  await sleep(30);
  const before = await count();
  workers.child.kill('SIGKILL');
  t.equal(await workers.exited, 'SIGKILL', 'the workers died');
  t.ok(before.successful < Flows, `killed with ${before.processes} of ${Flows} processes, ${before.successful} of them successful, ${before.orders} orders`);

  await sleep(700);
  workers = await startWorkers();
  const logs = await flows;

  t.same(
    logs.flatMap((l) => l.problems.map((problem) => `${l.id}: ${problem}`)),
    [],
    'every step was answered as the rules say',
  );
  const unavailable = logs.reduce((n, l) => n + l.unavailable, 0);
  t.ok(unavailable > 0, `the clients saw the outage (${unavailable} answers 503)`);
  const applied = logs.flatMap((l) => l.appliedBeforeAnswer);
  t.ok(applied.length > 0, `some steps were applied by workers that could not answer, and sent again (${applied.join(', ')})`);

  const ids = logs.map((l) => l.id);
  const processes = await svc.sql<{ id: string; payment_state: string }[]>`select id, payment_state from checkout_processes order by id`;
  t.same(
    processes.map((r) => r.id),
    [...ids].sort(),
    'each checkout made one process, and no other',
  );
  t.same(
    processes.filter((r) => r.payment_state !== 'successful').map((r) => `${r.id} ${r.payment_state}`),
    [],
    'every process is successful',
  );
  const shown = await Promise.all(ids.map(async (id) => (await getProcess(id)).body));
  t.same(
    shown.filter((b) => b.paymentState !== 'successful' || b.paymentApproval !== true).map((b) => `${b.id ?? b.type} ${b.paymentState}`),
    [],
    'the API shows every process successful',
  );

  const orders = await svc.sql<{ id: string; n: number }[]>`select id, count(*)::int as n from orders group by id order by id`;
  t.same(
    orders.map((o) => `${o.id} ${o.n}`),
    [...ids].sort().map((id) => `${id} 1`),
    'one order per process',
  );
  t.same(await assertGaplessOrderNumbers(t, svc), ['s1 15', 's2 15']);

  // The new relay publishes what the dead one left, and the stream keeps each event once.
  const stream = await watchEvents(t, svc, 'stream');
  await stream.settle({ quietMs: 500 });
  const [outbox] = await svc.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
  t.equal(outbox!.n, 0, 'the outbox is empty');
  t.same(
    ids.filter((id) => stream.of(id).filter((e) => e.subject.endsWith('.order.' + id + '.final')).length !== 1),
    [],
    'the stream holds each order.final once',
  );
  const expected = ['checkout.created', 'pos.pending', 'checkout.processing', 'pos.processing', 'checkout.successful', 'pos.successful', 'order.final'];
  t.same(
    // The order's fiscalized event follows from its TSE job, after a job redelivered from the dead worker perhaps.
    ids.filter((id) => stream.of(id).filter((e) => e.event !== 'fiscalized').map((e) => `${e.domain}.${e.event}`).join() !== expected.join()),
    [],
    'each process published its events once, in order',
  );
  const msgIds = stream.events.map((e) => e.msgId);
  t.equal(new Set(msgIds).size, msgIds.length, 'no Nats-Msg-Id twice');

  workers.child.kill('SIGTERM');
  t.equal(await workers.exited, 0, 'the new workers stop cleanly');
});
