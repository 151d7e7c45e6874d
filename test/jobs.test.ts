import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { pino } from 'pino';
import t from 'tap';
import { z } from 'zod';
import { startOutboxRelay } from '../actors/outbox/relay.js';
import { insertOutbox, type OutboxEvent } from '../actors/outbox/sql.js';
import { ensureStream } from '../src/infra/jetstream.js';
import { connectPostgres } from '../src/infra/postgres.js';
import { createLogger } from '../src/logger.js';
import { readJob, startBatchJobConsumer, startJobConsumer, type Job, type JobOutcome } from '../src/messaging/jobs.js';
import { EventStream } from '../subjects/events.js';
import { JobBundleHeader, JobStream } from '../subjects/jobs.js';
import { provisionInfrastructure } from './support/service.js';

const infra = await provisionInfrastructure(t);
const nc = await infra.connectAs('workers');
t.teardown(() => nc.close());
await ensureStream(nc, { ...JobStream, retention: 'workqueue', maxAgeMs: 3_600_000, duplicateWindowMs: 120_000 });
const js = jetstream(nc);
const log = createLogger({ level: 'silent' });

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(20);
  }
}

t.test('a job asked to be tried again comes back after its schedule, and is done once', async (t) => {
  const seen: Array<{ attempt: number; at: number; last: boolean }> = [];
  const consumer = await startJobConsumer({ nc, log }, { durable: 'retry', filter: 'jobs.fulfillment.retry.>', retryScheduleMs: [200, 400], maxAttempts: 5 }, async (job) => {
    seen.push({ attempt: job.attempt, at: Date.now(), last: job.lastAttempt });
    return job.attempt < 3 ? { kind: 'retry', reason: 'not yet' } : { kind: 'done' };
  });
  t.teardown(() => consumer.stop());
  const start = Date.now();
  await js.publish('jobs.fulfillment.retry.a', 'x', { msgID: 'retry-a' });
  await until(() => seen.length >= 3);
  await sleep(800);
  t.same(seen.map((s) => s.attempt), [1, 2, 3], 'three attempts, the third done');
  t.ok(seen[1]!.at - seen[0]!.at >= 180, 'the second attempt waited for the first delay');
  t.ok(seen[2]!.at - seen[1]!.at >= 380, 'the third waited for the second delay');
  t.ok(seen[2]!.at - start < 3000, 'within the schedule');
  const info = await (await js.streams.get(JobStream.name)).info();
  t.equal(info.state.messages, 0, 'the acked job left the work queue');
});

t.test('the last attempt is marked, and a retry asked for then ends the job', async (t) => {
  const seen: Job[] = [];
  const consumer = await startJobConsumer({ nc, log }, { durable: 'last', filter: 'jobs.fulfillment.last.>', retryScheduleMs: [100], maxAttempts: 3 }, async (job) => {
    seen.push(job);
    return { kind: 'retry', reason: 'always' };
  });
  t.teardown(() => consumer.stop());
  await js.publish('jobs.fulfillment.last.a', 'x', { msgID: 'last-a' });
  await until(() => seen.length >= 3);
  await sleep(600);
  t.same(seen.map((j) => [j.attempt, j.lastAttempt]), [[1, false], [2, false], [3, true]], 'three attempts, the last one marked');
  t.equal(seen[0]!.msgId, 'last-a', 'the job carries its Nats-Msg-Id');
});

t.test('a slow job is kept in progress and never given to a second worker', async (t) => {
  const runs: string[] = [];
  const handler = (name: string) => async (job: Job): Promise<JobOutcome> => {
    runs.push(`${name}:${job.attempt}`);
    await sleep(5000);
    return { kind: 'done' };
  };
  // An ack wait of 1 s: the worker says "in progress" every third of it, so a stall of this process
  // or nats-server shorter than two thirds of a second (a loaded machine) gives the job to no one else.
  const spec = { durable: 'slow', filter: 'jobs.fulfillment.slow.>', retryScheduleMs: [1000], maxAttempts: 10 };
  const a = await startJobConsumer({ nc, log }, spec, handler('a'));
  const b = await startJobConsumer({ nc, log }, spec, handler('b'));
  t.teardown(async () => {
    await a.stop();
    await b.stop();
  });
  await js.publish('jobs.fulfillment.slow.a', 'x', { msgID: 'slow-a' });
  await sleep(6000);
  t.equal(runs.length, 1, `one run although it took five times the ack wait (${runs.join(', ')})`);
  t.match(runs[0], /^[ab]:1$/);
});

t.test('jobs spread over the workers of a pool, each job done once', async (t) => {
  const done = new Map<string, string[]>();
  const handler = (name: string) => async (job: Job): Promise<JobOutcome> => {
    done.set(job.subject, [...(done.get(job.subject) ?? []), name]);
    await sleep(5);
    return { kind: 'done' };
  };
  const spec = { durable: 'pool', filter: 'jobs.fulfillment.pool.>', retryScheduleMs: [1000], maxAttempts: 10, concurrency: 4 };
  const workers = [await startJobConsumer({ nc, log }, spec, handler('a')), await startJobConsumer({ nc, log }, spec, handler('b'))];
  t.teardown(async () => {
    for (const w of workers) await w.stop();
  });
  await Promise.all(Array.from({ length: 100 }, (_, i) => js.publish(`jobs.fulfillment.pool.${i}`, 'x', { msgID: `pool-${i}` })));
  await until(() => done.size === 100);
  await sleep(300);
  t.equal(done.size, 100);
  t.ok([...done.values()].every((names) => names.length === 1), 'no job was done twice');
  const byWorker = [...done.values()].flat().reduce<Record<string, number>>((n, w) => ({ ...n, [w]: (n[w] ?? 0) + 1 }), {});
  t.ok(Object.keys(byWorker).length === 2, `both workers took jobs (${JSON.stringify(byWorker)})`);
});

/** Keeps this process's event loop busy (50 ms of work, then a turn for I/O) for `ms`. */
async function busyFor(ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const chunk = Date.now() + 50;
    while (Date.now() < chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

t.test('background jobs wait while the process is busy, and run once it is not', async (t) => {
  const ran: number[] = [];
  const spec = { durable: 'background', filter: 'jobs.receipt.background.>', retryScheduleMs: [1000], maxAttempts: 3, concurrency: 1, yieldAboveBusyShare: 0.5 };
  const consumer = await startJobConsumer({ nc, log }, spec, async () => {
    ran.push(Date.now());
    return { kind: 'done' };
  });
  t.teardown(() => consumer.stop());
  await busyFor(700);
  // Published while the loop stays busy (awaiting the stream's ack would leave it idle meanwhile).
  const published = js.publish('jobs.receipt.background.a', 'x', { msgID: 'background-a' });
  await busyFor(1500);
  const quietSince = Date.now();
  await published;
  t.equal(ran.length, 0, 'not run while the event loop was busy');
  await until(() => ran.length === 1, 5000);
  t.ok(ran[0]! >= quietSince, 'run after the busy time');
});

t.test('jobs that arrive together come to a batch handler together; each is settled by its own outcome', async (t) => {
  // Published before the consumer starts, so its first pull brings several at once.
  for (let i = 0; i < 6; i++) await js.publish(`jobs.fulfillment.batch.${i}`, String(i), { msgID: `batch-${i}` });
  const batches: string[][] = [];
  const attempts = new Map<string, number>();
  const consumer = await startBatchJobConsumer(
    { nc, log },
    { durable: 'batch', filter: 'jobs.fulfillment.batch.>', retryScheduleMs: [200], maxAttempts: 5 },
    (jobs) => {
      batches.push(jobs.map((job) => job.subject.split('.').at(-1)!));
      return jobs.map(async (job): Promise<JobOutcome> => {
        const id = job.subject.split('.').at(-1)!;
        attempts.set(id, job.attempt);
        // Job 2 asks to be tried again once; job 4 throws once; the others are done.
        if (id === '2' && job.attempt === 1) return { kind: 'retry', reason: 'not yet' };
        if (id === '4' && job.attempt === 1) throw new Error('a failure of this job only');
        return { kind: 'done' };
      });
    },
  );
  t.teardown(() => consumer.stop());
  await until(() => attempts.get('2') === 2 && attempts.get('4') === 2);
  await sleep(500);
  t.ok(Math.max(...batches.map((b) => b.length)) > 1, `jobs came in batches (${batches.map((b) => b.join('+')).join(', ')})`);
  t.same([...attempts].sort(), [['0', 1], ['1', 1], ['2', 2], ['3', 1], ['4', 2], ['5', 1]], 'only the job that asked for it and the one that threw came again');
  const info = await (await jetstreamManager(nc)).consumers.info(JobStream.name, 'batch');
  t.same([info.num_pending, info.num_ack_pending], [0, 0], 'every job was acked');
});

t.test('with gatherMs, jobs published one after another within it make one batch; stopping starts a batch still gathering', async (t) => {
  const batches: string[][] = [];
  const consumer = await startBatchJobConsumer(
    { nc, log },
    { durable: 'gather', filter: 'jobs.fulfillment.gather.>', retryScheduleMs: [200], maxAttempts: 5, gatherMs: 2000 },
    (jobs) => {
      batches.push(jobs.map((job) => job.subject.split('.').at(-1)!));
      return jobs.map(async (): Promise<JobOutcome> => ({ kind: 'done' }));
    },
  );
  // Each publish waits for the stream's ack: the jobs reach the consumer in separate reads.
  for (let i = 0; i < 4; i++) {
    await js.publish(`jobs.fulfillment.gather.${i}`, String(i), { msgID: `gather-${i}` });
    await sleep(30);
  }
  await until(() => batches.length > 0);
  t.same(batches, [['0', '1', '2', '3']], 'the four jobs came as one batch');

  await js.publish('jobs.fulfillment.gather.last', 'last', { msgID: 'gather-last' });
  await sleep(100); // delivered, and waiting for its batch to start
  t.equal(batches.length, 1, 'the last job is still gathering');
  await consumer.stop();
  t.same(batches[1], ['last'], 'stop started it');
  // An ack is a publish the server takes apart from API requests: the count may follow a moment later.
  const jsm = await jetstreamManager(nc);
  let info = await jsm.consumers.info(JobStream.name, 'gather');
  for (const deadline = Date.now() + 5000; (info.num_pending > 0 || info.num_ack_pending > 0) && Date.now() < deadline; ) {
    await sleep(50);
    info = await jsm.consumers.info(JobStream.name, 'gather');
  }
  t.same([info.num_pending, info.num_ack_pending], [0, 0], 'every job was acked');
});

t.test('a bundle comes apart into its jobs; it is acked when all are done, and comes back whole when one is to be tried again', async (t) => {
  const seen: Array<{ subject: string; msgId: string; attempt: number; payload: unknown }> = [];
  const consumer = await startBatchJobConsumer({ nc, log }, { durable: 'bundle', filter: 'jobs.fiscal.bundletest.>', retryScheduleMs: [200], maxAttempts: 5 }, (jobs) =>
    jobs.map(async (job): Promise<JobOutcome> => {
      const payload = readJob(z.object({ n: z.number() }), job, log, 'test job');
      seen.push({ subject: job.subject, msgId: job.msgId, attempt: job.attempt, payload });
      // The second job asks to be tried again once.
      return payload?.n === 2 && job.attempt === 1 ? { kind: 'retry', reason: 'not yet' } : { kind: 'done' };
    }),
  );
  t.teardown(() => consumer.stop());
  const jobs = [1, 2, 3].map((n) => ({ subject: `jobs.fiscal.bundletest.p${n}.finish`, msgId: `bundled-${n}`, payload: { n } }));
  const h = headers();
  h.set('Nats-Msg-Id', 'bundle-test');
  h.set(JobBundleHeader, '3');
  // Published on a subject the test's consumer takes; the relay publishes bundles on jobBundleSubject(kind).
  await js.publish('jobs.fiscal.bundletest._bundle', JSON.stringify({ jobs }), { headers: h });
  await until(() => seen.length >= 6);
  await sleep(400);
  t.same(
    seen.map((s) => [s.subject, s.msgId, s.attempt, s.payload]),
    [...jobs.map((j) => [j.subject, j.msgId, 1, j.payload]), ...jobs.map((j) => [j.subject, j.msgId, 2, j.payload])],
    'each job handed over with its own subject, id and payload; all three again when one asked for it',
  );
  const info = await (await jetstreamManager(nc)).consumers.info(JobStream.name, 'bundle');
  t.same([info.num_pending, info.num_ack_pending, info.delivered.stream_seq > 0], [0, 0, true], 'the bundle acked once all were done');
});

t.test('the relay sends the jobs of a kind that one outbox batch carries as one bundle, events and other kinds alone', async (t) => {
  const sql = connectPostgres({ url: infra.databaseUrl, poolMax: 2 });
  t.teardown(() => sql.end());
  const events: OutboxEvent[] = [
    ...[1, 2, 3].map((n) => ({ subject: `jobs.receipt.relaytest.order${n}`, payload: { n, text: 'ä "quoted"' } })),
    { subject: 'jobs.closing.relaytest.shop1.day', payload: { alone: true } },
    { subject: 'jobs.fulfillment.relaytest.f1.call', payload: { single: true } },
  ];
  const stream = await js.streams.get(JobStream.name);
  const before = (await stream.info()).state.last_seq;
  await insertOutbox(sql, events);
  const relay = startOutboxRelay({ sql, nc, log, pollMs: 50 });
  t.teardown(() => relay.stop());
  const published: Array<{ subject: string; bundle: string | undefined; data: unknown }> = [];
  for (let seq = before + 1, deadline = Date.now() + 10_000; published.length < 3 && Date.now() < deadline; ) {
    const message = await stream.getMessage({ seq }).catch(() => undefined);
    if (!message) {
      await sleep(50);
      continue;
    }
    seq++;
    if (message.subject.includes('relaytest') || message.header.get(JobBundleHeader)) published.push({ subject: message.subject, bundle: message.header.get(JobBundleHeader) || undefined, data: message.json() });
  }
  t.same(
    published.map((p) => [p.subject, p.bundle]).sort(),
    [
      ['jobs.closing.relaytest.shop1.day', undefined],
      ['jobs.fulfillment.relaytest.f1.call', undefined],
      ['jobs.receipt._bundle', '3'],
    ],
    'three receipts in one bundle; the closing (not bundled) and the lone fulfillment alone',
  );
  const bundle = published.find((p) => p.bundle)!.data as { jobs: Array<{ subject: string; payload: unknown }> };
  t.same(bundle.jobs.map((j) => [j.subject, j.payload]), events.slice(0, 3).map((e) => [e.subject, e.payload]), 'the bundle carries each job, in order, its payload as written');
});

t.test('a bundle with more jobs than the pool runs at once is handed over that many at a time', async (t) => {
  let running = 0;
  let most = 0;
  const done: string[] = [];
  const consumer = await startJobConsumer({ nc, log }, { durable: 'bundle-limit', filter: 'jobs.fiscal.limittest.>', retryScheduleMs: [1000], maxAttempts: 5, concurrency: 2 }, async (job) => {
    most = Math.max(most, ++running);
    await sleep(100);
    running--;
    done.push(job.msgId);
    return { kind: 'done' };
  });
  t.teardown(() => consumer.stop());
  const jobs = [1, 2, 3, 4, 5].map((n) => ({ subject: `jobs.fiscal.limittest.p${n}.finish`, msgId: `limit-${n}`, payload: { n } }));
  const h = headers();
  h.set('Nats-Msg-Id', 'bundle-limit-test');
  h.set(JobBundleHeader, '5');
  await js.publish('jobs.fiscal.limittest._bundle', JSON.stringify({ jobs }), { headers: h });
  await until(() => done.length >= 5);
  t.same(done, jobs.map((j) => j.msgId), 'each job once, in order of its part');
  t.equal(most, 2, 'never more than two at once');
});

t.test('a row no NATS message can carry is set aside, and the rows after it are published', async (t) => {
  const sql = connectPostgres({ url: infra.databaseUrl, poolMax: 2 });
  t.teardown(() => sql.end());
  const stream = await js.streams.get(JobStream.name);
  const before = (await stream.info()).state.last_seq;
  const big = { subject: 'jobs.closing.bigtest.shop1.day', payload: { note: 'x'.repeat(1_100_000) } };
  const after = { subject: 'jobs.closing.bigtest.shop2.day', payload: { small: true } };
  await insertOutbox(sql, [big, after]);
  const relay = startOutboxRelay({ sql, nc, log, pollMs: 50 });
  t.teardown(() => relay.stop());
  const published: string[] = [];
  for (let seq = before + 1, deadline = Date.now() + 10_000; !published.includes(after.subject) && Date.now() < deadline; ) {
    const message = await stream.getMessage({ seq }).catch(() => undefined);
    if (!message) {
      await sleep(50);
      continue;
    }
    seq++;
    published.push(message.subject);
  }
  t.ok(published.includes(after.subject), 'the row after it was published');
  t.notOk(published.includes(big.subject), 'the large one was not');
  const [aside] = await sql<Array<{ subject: string; bytes: number; note: string }>>`select subject, bytes, payload ->> 'note' as note from outbox_unpublishable where subject = ${big.subject}`;
  t.match(aside, { subject: big.subject, note: big.payload.note }, 'it is kept whole in outbox_unpublishable');
  t.ok(aside!.bytes > 1_100_000);
  const [left] = await sql<Array<{ n: number }>>`select count(*)::int as n from outbox where subject like 'jobs.closing.bigtest.%'`;
  t.equal(left!.n, 0, 'the outbox holds neither');
});

t.test('while no stream takes its events, the relay says so once, keeps them, and says when they leave', async (t) => {
  const sql = connectPostgres({ url: infra.databaseUrl, poolMax: 2 });
  t.teardown(() => sql.end());
  const lines: Array<{ level: number; msg: string; seconds?: number }> = [];
  const relayLog = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  // This file's NATS has no EVENTS stream yet: nothing takes an event's subject (503, no responders).
  const event = { subject: 'events.acme-test01.order.outage-1.final', payload: { project: 'acme-test01', id: 'outage-1' } };
  await insertOutbox(sql, [event]);
  const relay = startOutboxRelay({ sql, nc, log: relayLog, pollMs: 50 });
  t.teardown(() => relay.stop());
  await sleep(2500);
  t.same(lines.filter((l) => l.level >= 40).map((l) => [l.level, l.msg]), [[40, 'the stream does not take events now; they wait in the outbox, tried again every second']], 'one warning for two seconds of refusals, no error');
  const [waiting] = await sql<Array<{ n: number }>>`select count(*)::int as n from outbox where subject = ${event.subject}`;
  t.equal(waiting!.n, 1, 'the event waits in the outbox');

  await ensureStream(nc, { ...EventStream, maxAgeMs: 3_600_000, duplicateWindowMs: 120_000 });
  t.teardown(() => jetstreamManager(nc).then((jsm) => jsm.streams.delete(EventStream.name)));
  await until(() => lines.some((l) => l.msg === 'the stream takes events again'));
  t.ok(lines.find((l) => l.msg === 'the stream takes events again')!.seconds! >= 2, 'with how long it lasted');
  const message = await (await js.streams.get(EventStream.name)).getMessage({ last_by_subj: event.subject });
  t.same(message?.json(), event.payload, 'the event reached the stream');
});
