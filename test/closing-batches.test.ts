import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import postgres from 'postgres';
import t from 'tap';
import { createBatchTrigger } from '../actors/closing-schedules/batch-trigger.js';
import { createLogger } from '../src/logger.js';
import { closingWorkSubject, type ClosingWork } from '../subjects/closings.js';
import { p, seedCheckout } from './support/checkout.js';
import { checkoutIn, closingTokens, downloadLog, eventually, getClosing, runJob } from './support/closing.js';
import { startMoreWorkers, startTestService, TestProject } from './support/service.js';

/**
 * Batch logs over HTTP, with the schedulers running as in production: the service's workers and a
 * second worker side both tick the batch trigger every second; a schedule appends a batch every
 * 2 s while sales happen across several intervals.
 */
const svc = await startTestService(t);
await startMoreWorkers(t, svc);
const fx = await seedCheckout(svc);
const tokens = await closingTokens(svc);
const admin = await svc.token(['shopsWrite']);
for (const id of ['b1', 'b2']) await svc.request('POST', `${p}/shops`, { token: admin, body: { id, name: `Batch shop ${id}` } });

const Every = '2s';
// A day the schedule's closing cannot fire on while the file runs (three days from now, in UTC).
const day = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'][(new Date().getUTCDay() + 3) % 7];
const base = { shop: 'b1', days: [day], hour: 12, location: 'UTC' };

const batchesOf = (shop: string, query = '') => svc.request('GET', `${p}/closings/shops/${shop}/batches${query}`, { token: tokens.read });

/** The orders of the shop as stored: sequence number, id and state. */
async function storedOrders(shop: string) {
  return svc.sql<Array<{ n: number; id: string; state: string }>>`
    select sequence_number::int as n, id, state from orders where project = ${TestProject} and shop_id = ${shop} order by sequence_number`;
}

/** Waits until the batches of the coming closing reached the shop's last order; answers the batches body. */
async function batchedUpTo(shop: string, lastOrder: number) {
  return eventually(`a batch to take order ${lastOrder}`, async () => {
    const res = await batchesOf(shop);
    const last = res.body.batches?.at(-1)?.lastOrderSequenceNumber ?? 0;
    return res.status === 200 && last >= lastOrder ? res.body : undefined;
  }, 15_000);
}

/** The rows of an aggregated_receipts batch log, as objects by header. */
function csvRows(text: string): Array<Record<string, string>> {
  const [head, ...lines] = text.split('\r\n').filter((l) => l !== '');
  const names = head!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i]!, value])));
}

t.test('two worker processes append each final order to exactly one batch, readable before the closing, and the closing lists the batch log', async (t) => {
  const created = await svc.request('POST', `${p}/closings/schedules`, {
    token: tokens.write,
    body: { ...base, formats: ['aggregated_receipts'], appendBatchEvery: Every, batchFormats: ['aggregated_receipts'] },
  });
  t.equal(created.status, 201, created.text);
  t.match(created.body, { appendBatchEvery: Every, batchFormats: ['aggregated_receipts'] });

  // Sales in three rounds, each waited for until a batch took it, so they span several intervals.
  const final: string[] = [];
  for (let round = 0; round < 3; round++) {
    final.push(await checkoutIn(svc, fx, 'b1', 'successful'));
    final.push(await checkoutIn(svc, fx, 'b1', 'successful', { paymentMethod: 'girocard' }));
    if (round === 1) await checkoutIn(svc, fx, 'b1', 'failed');
    const orders = await storedOrders('b1');
    await batchedUpTo('b1', orders.at(-1)!.n);
  }

  const open = await batchesOf('b1');
  t.equal(open.status, 200, open.text);
  t.match(open.body, { shopID: 'b1', sequenceNumber: 1, closed: false });
  t.equal(open.body.logs.length, 1, 'one batch log: its one batch format');
  const batchLog = open.body.logs[0];
  t.match(batchLog, { format: 'aggregated_receipts', state: 'present', kind: 'batch' });
  t.equal(open.body.links.batch_aggregated_receipts.href, `${p}/closings/logs/${batchLog.id}`);

  const batches: Array<{ batchAt: string; firstOrderSequenceNumber: number; lastOrderSequenceNumber: number; orderCount: number }> = open.body.batches;
  t.ok(batches.length >= 3, `sales were batched over several intervals (${batches.length} batches)`);
  for (const [i, b] of batches.entries()) {
    t.equal(Date.parse(b.batchAt) % 2000, 0, 'a batch time is a multiple of the interval');
    if (i > 0) t.equal(b.firstOrderSequenceNumber, batches[i - 1]!.lastOrderSequenceNumber + 1, 'batches follow each other without a gap or an overlap');
  }
  t.equal(batches[0]!.firstOrderSequenceNumber, 1);
  t.equal(batches.reduce((sum, b) => sum + b.orderCount, 0), final.length, 'the batches listed the final orders');

  // Every worker process ticked; each batch time was claimed and appended once. The triggers keep
  // claiming every 2 s: a claim younger than a few seconds may still be on its way to the actor.
  const claims = await svc.sql<Array<{ appended: number; claims: number }>>`
    select count(*) filter (where appended_at is not null)::int as appended, count(*)::int as claims
    from closing_batches where shop_id = 'b1' and claimed_at < now() - interval '3 seconds'`;
  t.equal(claims[0]!.appended, claims[0]!.claims, 'every claimed batch was appended');

  // The batch log while the day runs: each final order in exactly one row, in the batch that took it.
  const download = await downloadLog(svc, tokens.read, `${p}/closings/logs/${batchLog.id}`);
  t.equal(download.status, 200);
  t.match(download.headers.get('content-type'), /^text\/csv/);
  t.match(download.headers.get('content-disposition'), /aggregated_receipts_batch_b1_1\.csv/);
  const rows = csvRows(new TextDecoder().decode(download.bytes));
  t.same(Object.keys(rows[0]!), ['batchAt', 'sequenceNumber', 'orderID', 'finalizedAt', 'state', 'paymentMethod', 'currency', 'total', 'rate', 'net', 'tax', 'gross']);
  const byOrder = new Map<string, Set<string>>();
  for (const row of rows) byOrder.set(row.orderID!, (byOrder.get(row.orderID!) ?? new Set()).add(row.batchAt!));
  t.same([...byOrder.keys()].sort(), [...final].sort(), 'the final orders, and only they');
  t.ok([...byOrder.values()].every((at) => at.size === 1), 'each order in exactly one batch');
  t.equal(new Set(rows.map((r) => `${r.orderID}|${r.rate}`)).size, rows.length, 'no row twice');
  const orders = await storedOrders('b1');
  for (const row of rows) {
    const n = Number(row.sequenceNumber);
    const batch = batches.find((b) => b.firstOrderSequenceNumber <= n && n <= b.lastOrderSequenceNumber);
    t.equal(row.batchAt, batch?.batchAt, `order ${n} is in the batch whose range holds it`);
  }

  // The closing: a report job takes the day; its logs are its own and the batch log, with their states.
  const job = await runJob(svc, tokens, { shopID: 'b1' });
  t.equal(job.state, 'done', JSON.stringify(job));
  const closing = await eventually('the closing log to be written', async () => {
    const res = await getClosing(svc, tokens.read, 'b1', job.sequenceNumber);
    return res.body.logs?.every((l: { state: string }) => l.state === 'present') ? res.body : undefined;
  });
  t.equal(closing.lastOrderSequenceNumber, orders.at(-1)!.n, 'the closing covers every order the batches took');
  t.same(
    closing.logs.map((l: any) => [l.format, l.kind, l.state]),
    [['aggregated_receipts', 'closing', 'present'], ['aggregated_receipts', 'batch', 'present']],
    "the closing's log, then its day's batch log",
  );
  t.equal(closing.logs[1].id, batchLog.id);
  t.equal(closing.links.batch_aggregated_receipts.href, `${p}/closings/logs/${batchLog.id}`);
  t.not(closing.links.aggregated_receipts.href, closing.links.batch_aggregated_receipts.href, 'both logs are linked');
  t.same(closing.orders.map((o: any) => o.id).sort(), [...final].sort());

  const closed = await batchesOf('b1', '?sequenceNumber=1');
  t.match(closed.body, { sequenceNumber: 1, closed: true, logs: [{ id: batchLog.id, kind: 'batch' }] });
  t.equal(closed.body.batches.length, batches.length);

  // The next day starts a new batch log; an interval with no sales appends nothing.
  const next = await batchesOf('b1');
  t.match(next.body, { sequenceNumber: 2, closed: false, logs: [], batches: [] });
  const later = await checkoutIn(svc, fx, 'b1', 'successful');
  const day2 = await batchedUpTo('b1', (await storedOrders('b1')).at(-1)!.n);
  t.equal(day2.logs.length, 1);
  t.not(day2.logs[0].id, batchLog.id, 'a new batch log for the coming closing');
  t.same(day2.batches.map((b: any) => b.orderCount), [1]);
  const text = new TextDecoder().decode((await downloadLog(svc, tokens.read, day2.links.batch_aggregated_receipts.href)).bytes);
  t.same(csvRows(text).map((r) => r.orderID), [later]);
  await new Promise((resolve) => setTimeout(resolve, 4500));
  const quiet = await batchesOf('b1');
  t.same(quiet.body.batches.length, 1, 'intervals with no sales append nothing');
  const [failed] = await svc.sql<{ n: number }[]>`
    select count(*)::int as n from closing_batches where shop_id = 'b1' and appended_at is null and claimed_at < now() - interval '3 seconds'`;
  t.equal(failed!.n, 0, 'and do not fail: every claimed batch was done');
});

t.test('two triggers ticking the same batch time claim it once, and a batch delivered again appends nothing', async (t) => {
  const created = await svc.request('POST', `${p}/closings/schedules`, {
    token: tokens.write,
    body: { ...base, shop: 'b2', appendBatchEvery: '1h', batchFormats: ['aggregated_receipts'] },
  });
  t.equal(created.status, 201, created.text);
  // The running services tick every second: the schedule's batches are taken up to the next full
  // hour, so that their ticks claim nothing while the test runs, even across that hour. The test's two
  // sides tick at once in the middle of the hour after it.
  const hourMs = 3_600_000;
  const nextHour = Math.floor(Date.now() / hourMs) * hourMs + hourMs;
  await svc.sql`update closing_schedules set batched_until = ${new Date(nextHour)} where id = ${created.body.id}`;
  const sold = [await checkoutIn(svc, fx, 'b2', 'successful'), await checkoutIn(svc, fx, 'b2', 'successful')];
  const triggers = [0, 1].map(() => {
    const sql = postgres(svc.databaseUrl, { max: 2, onnotice: () => {} });
    t.teardown(() => sql.end());
    return createBatchTrigger({ sql, log: createLogger({ level: 'silent' }) });
  });
  const at = new Date(nextHour + 1.5 * hourMs);
  const ofThis = (claims: ClosingWork[][]) => claims.flat().filter((w) => w.type === 'batch' && w.scheduleID === created.body.id);
  const claimed = ofThis(await Promise.all(triggers.map((tr) => tr.tick(at))));
  t.equal(claimed.length, 1, 'one side claimed the batch time');
  t.same(ofThis(await Promise.all(triggers.map((tr) => tr.tick(new Date(at.getTime() + 1000))))), [], 'the next second claims nothing');
  const body = await batchedUpTo('b2', 2);
  t.same(body.batches.map((b: any) => [b.batchAt, b.orderCount]), [[(claimed[0] as Extract<ClosingWork, { type: 'batch' }>).batchAt, 2]], 'one batch took both orders');
  const before = (await downloadLog(svc, tokens.read, body.links.batch_aggregated_receipts.href)).bytes;

  // The same batch delivered again (as after a relay crash outside the duplicate window).
  const published = await jetstream(svc.nc).publish(closingWorkSubject(claimed[0]!), JSON.stringify(claimed[0]), { msgID: 'a-second-batch-delivery' });
  const jsm = await jetstreamManager(svc.nc);
  await eventually('the second delivery to be consumed', async () => {
    const info = await jsm.consumers.info('JOBS', 'closing');
    return info.delivered.stream_seq >= published.seq && info.num_ack_pending === 0 ? true : undefined;
  });
  const after = await batchesOf('b2');
  t.same(after.body.batches, body.batches, 'still the one batch');
  t.same((await downloadLog(svc, tokens.read, body.links.batch_aggregated_receipts.href)).bytes, before, 'the log is as it was');
  t.same(csvRows(new TextDecoder().decode(before)).map((r) => r.orderID), sold, 'the log lists the orders once, by sequence number');
});

t.test('refuses a bad batch interval or a DSFinV-K batch format with 400 naming the field', async (t) => {
  const bad = await svc.request('POST', `${p}/closings/schedules`, { token: tokens.write, body: { ...base, appendBatchEvery: '2x', batchFormats: ['aggregated_receipts'] } });
  t.equal(bad.status, 400, bad.text);
  t.equal(bad.body.type, 'bad_request');
  t.match(bad.body.message, 'appendBatchEvery');
  const dsfinvk = await svc.request('POST', `${p}/closings/schedules`, { token: tokens.write, body: { ...base, appendBatchEvery: '1h', batchFormats: ['dsfinvk_2023_03'] } });
  t.equal(dsfinvk.status, 400, dsfinvk.text);
  t.equal(dsfinvk.body.type, 'bad_request');
  t.match(dsfinvk.body.message, 'batchFormats');
  t.match(dsfinvk.body.message, 'DSFinV-K export belongs to a closing');
  const unknown = await batchesOf('nope');
  t.equal(unknown.status, 404, 'the batches of an unknown shop are 404');
});
