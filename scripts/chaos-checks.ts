import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type postgres from 'postgres';
import type { FlowRecord } from './chaos-load.js';

/**
 * What scripts/chaos.ts checks once the load stopped, from Postgres and JetStream (and the
 * fulfillment stand-in, which applies each Idempotency-Key once): nothing lost, nothing done twice.
 */
export interface Verdict {
  /** Flows whose payment the client saw succeed without one final order and one delivery, or that never finished. */
  lost: string[];
  /** Anything done twice: an order in two closings, a delivery asked twice, an event published twice. */
  doubled: string[];
  /** Facts worth a line that are neither (processes no flow kept, what the events held). */
  notes: string[];
}

interface ProcessRow {
  id: string;
  payment_state: string;
  fulfillments: Array<{ id: string; state: string }>;
}

/** Paid processes whose TSE finish is not recorded yet (the fiscal job still tries), counted. */
function unsignedSales(sql: postgres.Sql, project: string) {
  return sql`select count(*)::int from checkout_processes p
    left join fiscal_transactions f on f.project = p.project and f.process_id = p.id
    where p.project = ${project} and p.payment_state = 'successful' and f.finish_log is null`;
}

/** Waits (up to 2 min) until the outbox is empty, every paid process's goods are handed out and its sale signed, and every closing asked for is made. */
export async function settle(sql: postgres.Sql, project: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    const [row] = await sql<{ outbox: number; waiting: number; unsigned: number; closing: number }[]>`
      select (select count(*)::int from outbox) as outbox,
             (select count(*)::int from checkout_processes p, jsonb_array_elements(p.fulfillments) f
               where p.project = ${project} and p.payment_state = 'successful' and f->>'state' not in ('processed', 'failed')) as waiting,
             (${unsignedSales(sql, project)}) as unsigned,
             (select count(*)::int from closing_jobs where project = ${project} and state = 'pending') as closing`;
    if (row!.outbox === 0 && row!.waiting === 0 && row!.unsigned === 0 && row!.closing === 0) return Date.now() - started;
    if (Date.now() - started > 120_000) return Date.now() - started;
    await sleep(250);
  }
}

export async function verify(deps: {
  sql: postgres.Sql;
  nc: NatsConnection;
  project: string;
  flows: FlowRecord[];
  /** Idempotency keys the fulfillment service applied, with the state each asked for. */
  applied: Map<string, string>;
  /** When EVENTS was purged (a fault): only orders finished after it must have their event there. */
  eventsPurgedAt?: number;
}): Promise<Verdict> {
  const { sql, project, flows } = deps;
  const verdict: Verdict = { lost: [], doubled: [], notes: [] };

  const processes = await sql<ProcessRow[]>`select id, payment_state, fulfillments from checkout_processes where project = ${project}`;
  const orders = await sql<{ id: string; state: string }[]>`select id, state from orders where project = ${project}`;
  const byId = new Map(processes.map((p) => [p.id, p]));
  const orderOf = new Map(orders.map((o) => [o.id, o.state]));
  // Deliveries the service applied, per fulfillment (its key is `<fulfillment>.<call>`).
  const deliveries = new Map<string, number>();
  for (const [key, state] of deps.applied) {
    if (state !== 'processing') continue;
    const fulfillment = key.split('.')[0]!;
    deliveries.set(fulfillment, (deliveries.get(fulfillment) ?? 0) + 1);
  }

  for (const flow of flows) {
    if (!flow.finished && flow.problems.length > 0) verdict.lost.push(`${flow.id}: ${flow.problems.join('; ')}`);
    if (!flow.paid) continue;
    const process = byId.get(flow.id);
    if (process?.payment_state !== 'successful') verdict.lost.push(`${flow.id}: paid, but the process is ${process?.payment_state ?? 'missing'}`);
    if (orderOf.get(flow.id) !== 'final') verdict.lost.push(`${flow.id}: paid, but its order is ${orderOf.get(flow.id) ?? 'missing'}`);
    for (const f of process?.fulfillments ?? []) {
      const n = deliveries.get(f.id) ?? 0;
      if (f.state !== 'processed' || n === 0) verdict.lost.push(`${flow.id}: fulfillment ${f.id} is ${f.state}, delivered ${n} times`);
    }
  }
  for (const [fulfillment, n] of deliveries) if (n > 1) verdict.doubled.push(`fulfillment ${fulfillment}: ${n} deliveries`);

  // Every paid sale is signed: its TSE transaction has a finish, and no TSE outage was recorded for it.
  const signed = new Map(
    (await sql<{ process_id: string; error: string | null }[]>`select process_id, finish_log->>'error' as error from fiscal_transactions where project = ${project} and finish_log is not null`).map((r) => [r.process_id, r.error]),
  );
  const paidFlows = flows.filter((f) => f.paid);
  for (const flow of paidFlows) {
    if (!signed.has(flow.id)) verdict.lost.push(`${flow.id}: paid, but its sale is not signed`);
    else if (signed.get(flow.id)) verdict.lost.push(`${flow.id}: paid, signed with a TSE outage (${signed.get(flow.id)})`);
  }
  verdict.notes.push(`${paidFlows.filter((f) => signed.has(f.id) && !signed.get(f.id)).length} paid sales signed`);
  // A process no flow kept: a create whose answer was lost and that the client made again.
  const kept = new Set(flows.map((f) => f.id));
  const orphans = processes.filter((p) => !kept.has(p.id));
  const orphansPaid = orphans.filter((p) => p.payment_state === 'successful');
  for (const p of orphansPaid) verdict.doubled.push(`process ${p.id}: paid, but no client kept it`);
  if (orphans.length > 0) verdict.notes.push(`${orphans.length} processes no client kept (a create made again after its answer was lost): ${orphans.map((p) => `${p.id} ${p.payment_state}`).join(', ')}`);

  // Closings of a shop cover contiguous ranges of its order numbers: an order is never in two.
  const closings = await sql<{ shop_id: string; sequence_number: string; first: string; last: string }[]>`
    select shop_id, sequence_number, first_order_sequence_number as first, last_order_sequence_number as last
      from closings where project = ${project} order by shop_id, sequence_number`;
  for (let i = 1; i < closings.length; i++) {
    const [a, b] = [closings[i - 1]!, closings[i]!];
    if (a.shop_id === b.shop_id && Number(b.first) !== Number(a.last) + 1) {
      verdict.doubled.push(`closings ${a.sequence_number} (${a.first}..${a.last}) and ${b.sequence_number} (${b.first}..${b.last}) of shop ${b.shop_id} do not follow each other`);
    }
  }
  verdict.notes.push(`${closings.length} closings`);
  // Every closing asked for is made, once: its job done with a closing that names it.
  const jobs = await sql<{ id: string; state: string; closings: number }[]>`
    select j.id, j.state, (select count(*)::int from closings c where c.project = j.project and c.job_id = j.id) as closings
      from closing_jobs j where j.project = ${project}`;
  for (const job of jobs) {
    if (job.state !== 'done' || job.closings !== 1) verdict.lost.push(`closing job ${job.id}: ${job.state}, ${job.closings} closings`);
  }

  // Every event the outbox held is in EVENTS once: no Nats-Msg-Id twice, no one-time event twice.
  const events = await readEvents(deps.nc);
  const ids = new Map<string, number>();
  const subjects = new Map<string, number>();
  for (const e of events) {
    ids.set(e.msgId, (ids.get(e.msgId) ?? 0) + 1);
    subjects.set(e.subject, (subjects.get(e.subject) ?? 0) + 1);
  }
  for (const [id, n] of ids) if (n > 1) verdict.doubled.push(`event ${id} in EVENTS ${n} times`);
  // A process, its PoS view, its order and its fulfillments make each event once (a shop's closing events repeat by design).
  const oneTime = new RegExp(`^events\\.${project}\\.(checkout|pos|order|fulfillment)\\.`);
  for (const [subject, n] of subjects) if (n > 1 && oneTime.test(subject)) verdict.doubled.push(`${subject} published ${n} times`);
  // After a purge, the orders finished a second after it (their events published after it).
  const since = deps.eventsPurgedAt === undefined ? undefined : new Date(deps.eventsPurgedAt + 1000);
  const after = since ? new Set((await sql<{ id: string }[]>`select id from orders where project = ${project} and finalized_at > ${since}`).map((r) => r.id)) : undefined;
  for (const flow of flows.filter((f) => f.paid && (!after || after.has(f.id)))) {
    if (!subjects.has(`events.${project}.order.${flow.id}.final`)) verdict.lost.push(`${flow.id}: no order.final event`);
  }
  if (after) verdict.notes.push(`${after.size} orders after the EVENTS purge`);
  verdict.notes.push(`${events.length} events in EVENTS`);
  return verdict;
}

/** Every message of the stream EVENTS (the run's cluster holds only its project's): subject and Nats-Msg-Id. */
async function readEvents(nc: NatsConnection): Promise<Array<{ subject: string; msgId: string }>> {
  const jsm = await jetstreamManager(nc);
  const events: Array<{ subject: string; msgId: string }> = [];
  if ((await jsm.streams.info('EVENTS')).state.messages === 0) return events;
  const consumer = await jsm.jetstream().consumers.get('EVENTS');
  const messages = await consumer.consume();
  for await (const msg of messages) {
    events.push({ subject: msg.subject, msgId: msg.headers?.get('Nats-Msg-Id') ?? '' });
    if (msg.info.pending === 0) break;
  }
  await messages.close();
  return events;
}
