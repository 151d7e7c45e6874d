import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import postgres from 'postgres';
import t from 'tap';
import { createBatchTrigger } from '../actors/closing-schedules/batch-trigger.js';
import { createScheduleTrigger } from '../actors/closing-schedules/trigger.js';
import { createLogger } from '../src/logger.js';
import { p, seedCheckout } from './support/checkout.js';
import { checkoutIn, closingTokens, closingWithLogs, eventually, postJob, storedClosings } from './support/closing.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * Work survives the loss of JOBS. A job of the lost stream, settled after the stream was made again,
 * is not acked: nats-server removes a work queue's message by the number an ack names, and would
 * take a job of the new stream with it (the job pool, src/messaging/jobs.ts). Closings survive it (src/infra/healing.ts, docs/operations.md "Healing"): a closing
 * asked for (a report job, a schedule's fire time) whose work was in JOBS when it was deleted is
 * made from Postgres, once: one closing per request, numbered once, its logs written; a batch
 * claimed is appended. The closing pool (two at a time) is held busy by two closings waiting on
 * their shops' sequence rows, which the test locks, so that the others' work waits in JOBS.
 */
const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
const fx = await seedCheckout(svc);
const tokens = await closingTokens(svc);
const admin = await svc.token(['shopsWrite']);
const shops = ['busy1', 'busy2', 'asked', 'scheduled', 'batched'];
for (const id of shops) await svc.request('POST', `${p}/shops`, { token: admin, body: { id, name: `Shop ${id}` } });
const log = createLogger({ level: 'silent' });
const own = postgres(svc.databaseUrl, { max: 3, onnotice: () => {} });
t.teardown(() => own.end());
const jsm = await jetstreamManager(svc.nc);

async function schedule(shop: string, extra: object = {}): Promise<number> {
  // A day the schedule cannot fire on by itself while the file runs; the test ticks its triggers.
  const day = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][(new Date().getUTCDay() + 3) % 7];
  const res = await svc.request('POST', `${p}/closings/schedules`, { token: tokens.write, body: { shop, days: [day], hour: 12, location: 'UTC', mode: 'includeUntilScheduled', ...extra } });
  if (res.status !== 201) throw new Error(`schedule refused: ${res.status} ${res.text}`);
  return res.body.id;
}

t.test('JOBS deleted while closings wait in it: each closing asked for is made once, numbered once, with its logs; a claimed batch is appended', async (t) => {
  for (const shop of ['busy1', 'asked']) await checkoutIn(svc, fx, shop, 'successful');
  const scheduleId = await schedule('scheduled');
  const batchScheduleId = await schedule('batched', { appendBatchEvery: '1h', batchFormats: ['aggregated_receipts'] });

  // The two busy shops' sequence rows are locked: their closings take both places of the pool and wait.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = own.begin(async (tx) => {
    await tx`insert into closing_sequences (project, shop_id) values (${TestProject}, 'busy1'), (${TestProject}, 'busy2') on conflict do nothing`;
    await tx`select from closing_sequences where project = ${TestProject} and shop_id in ('busy1', 'busy2') for update`;
    locked();
    await released;
  });
  await isLocked;
  const jobs: Record<string, string> = {};
  for (const shop of ['busy1', 'busy2']) jobs[shop] = (await postJob(svc, tokens.both, { shopID: shop, deviceID: 'd1', skippedCashCount: false })).body.id;
  await eventually('both closing places busy', async () => ((await jsm.consumers.info('JOBS', 'closing')).num_ack_pending >= 2 ? true : undefined));

  // Asked for now: their work waits in JOBS behind the busy ones.
  const asked = await postJob(svc, tokens.both, { shopID: 'asked', deviceID: 'd1', skippedCashCount: false, formats: ['aggregated_receipts'] });
  t.equal(asked.status, 202, asked.text);
  jobs.asked = asked.body.id;
  const inAWeek = new Date(Date.now() + 7 * 86_400_000);
  const fired = await createScheduleTrigger({ sql: own, log }).tick(inAWeek);
  t.equal(fired.filter((w) => w.type === 'trigger' && w.scheduleID === scheduleId).length, 1, 'the schedule\'s fire time is claimed');
  const batched = await createBatchTrigger({ sql: own, log }).tick(new Date(Date.now() + 2 * 3_600_000));
  t.equal(batched.filter((w) => w.type === 'batch' && w.scheduleID === batchScheduleId).length, 1, 'a batch time is claimed');
  await eventually('the work waiting in JOBS', async () => ((await jsm.consumers.info('JOBS', 'closing')).num_pending >= 3 ? true : undefined));

  await jsm.streams.delete('JOBS');
  await eventually('the closing work sent again from Postgres', async () => {
    const [row] = await own<{ jobs: number }[]>`select jobs from job_resends where kind = 'closing'`;
    return row;
  }, 30_000);
  release();
  await holding;

  for (const shop of ['busy1', 'busy2', 'asked']) {
    const job = await eventually(`the report job of ${shop} done`, async () => {
      const res = await svc.request('GET', `${p}/closings/jobs/${jobs[shop]}`, { token: tokens.read });
      return res.body.state === 'pending' ? undefined : res.body;
    }, 60_000);
    t.match(job, { state: 'done', sequenceNumber: 1 }, `${shop}: the report job made closing 1`);
  }
  await eventually('the scheduled closing', async () => ((await storedClosings(own, 'scheduled')).length ? true : undefined), 60_000);
  const appended = await eventually('the batch appended', async () => {
    const [row] = await own<{ appended_at: Date | null }[]>`select appended_at from closing_batches where schedule_id = ${batchScheduleId}`;
    return row?.appended_at ?? undefined;
  }, 60_000);
  t.ok(appended, 'the claimed batch is appended');
  for (const shop of ['busy1', 'busy2', 'asked', 'scheduled']) await closingWithLogs(svc, tokens.read, shop, 1, 60_000);
  // Whatever was sent twice has had time to run again.
  await sleep(2000);
  for (const shop of ['busy1', 'busy2', 'asked', 'scheduled']) {
    const closings = await storedClosings(own, shop);
    t.equal(closings.length, 1, `${shop}: one closing, none twice`);
  }
  t.equal((await storedClosings(own, 'asked'))[0]!.last_order_sequence_number, '1', 'the asked closing covers the shop\'s sale');
  const [trigger] = await storedClosings(own, 'scheduled');
  t.match(trigger!.trigger_key, new RegExp(`^${scheduleId}:`), 'the scheduled closing is the fire time\'s');
  const [report] = await own<{ n: number }[]>`select count(*)::int as n from closing_jobs where project = ${TestProject} and state = 'done'`;
  t.equal(report!.n, 3, 'one report per job');
});
