import { createTotals } from '../../src/domain/closings/totals.js';
import { inTransaction, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import { readSettings } from '../settings/sql.js';
import { findShop, type ShopRow } from '../shops/sql.js';
import { eventSubject } from '../../subjects/events.js';
import { triggerKey, type ClosingEvent, type ClosingOrigin, type ClosingShop, type ClosingWork, type LogFormat } from '../../subjects/closings.js';
import type { OutboxEvent } from '../outbox/sql.js';
import * as jobs from './job-sql.js';
import * as db from './sql.js';
import { toJob, toSummary } from './views.js';

/**
 * One closing of a shop, in one transaction that holds the shop's closing sequence row locked:
 * the range after the previous closing's last order up to the cut-off, its totals, the closing,
 * its logs (not_present), the moved sequence, and its events (and the report job's end). A
 * trigger or job that already made its closing (a redelivery) makes none: its closing answers.
 */
export interface ClosedShop {
  project: string;
  shopId: string;
  sequenceNumber: number;
}

const IncompletePage = 1000;

/** What a trigger or report job asks for: the closing's origin, logs, states, cut-off and zone. */
interface Request {
  origin: ClosingOrigin;
  formats: readonly LogFormat[];
  includeAllStates: boolean;
  triggerKey: string | null;
  jobId: string | null;
  zone: string;
  cutOffAt: Date;
}

/** The work that makes a closing (a batch appends to the coming one's batch logs: batch.ts). */
export type ClosingRequestWork = Exclude<ClosingWork, { type: 'batch' }>;

export async function closeShop(sql: Sql, work: ClosingRequestWork, now: () => Date = () => new Date()): Promise<ClosedShop | null> {
  const { project, shopID: shopId } = work;
  // Read before the lock: the company data and the shop as they are when the closing is made.
  const settings = await readSettings(sql, project);
  const shopRow = await findShop(sql, project, shopId);
  const scheduled = work.type === 'report' ? await db.scheduleFormatsOfShop(sql, project, shopId) : undefined;

  return inTransaction(sql, async (tx) => {
    const sequence = await db.lockSequence(tx, project, shopId);
    const createdAt = now();
    const request = await requestOf(tx, work, createdAt, scheduled?.location ?? 'UTC');
    if ('closed' in request) return request.closed === null ? null : { project, shopId, sequenceNumber: request.closed };

    const after = Number(sequence.last_order_sequence_number);
    // A closing covers at least what its batches appended (they ran under this lock before it, with
    // their own cut-offs), so its batch logs are always a prefix of its orders.
    const last = Math.max(await db.rangeEnd(tx, project, shopId, after, request.cutOffAt), Number(sequence.batched_order_sequence_number));
    const { sum, finalOrders, tseFailures } = await rangeTotals(tx, project, shopId, after, last);
    const other = request.includeAllStates ? await db.countNonFinal(tx, project, shopId, after, last) : { count: 0, tseFailures: 0 };
    const shop = shopRow ? shopOf(shopRow) : ((last > after ? await db.shopOfOrder(tx, project, shopId, last) : undefined) ?? blankShop);

    const closing: db.NewClosing = {
      ...request,
      project,
      shopId,
      sequenceNumber: Number(sequence.last_number) + 1,
      firstOrder: after + 1,
      lastOrder: last,
      orderCount: finalOrders + other.count,
      createdAt,
      currency: settings.currency,
      shop,
      taxShares: sum.taxShares,
      taxRates: sum.taxRates,
      shareByPaymentMethod: sum.shareByPaymentMethod,
      total: sum.total,
      tseFailures: tseFailures + other.tseFailures,
      company: { companyName: settings.companyName, taxNumber: settings.taxNumber, vatID: settings.vatID, companyAdress: settings.companyAdress },
    };
    const logs = await db.insertClosing(tx, closing);
    const at = createdAt.toISOString();
    const events: OutboxEvent[] = [event(project, shopId, { project, shopID: shopId, at, event: 'created', closing: summaryOf(closing, logs) })];
    if (request.jobId) {
      const job = await jobs.finishJob(tx, request.jobId, { state: 'done', sequenceNumber: closing.sequenceNumber }, createdAt);
      events.push(event(project, shopId, { project, shopID: shopId, at, event: 'jobDone', job: toJob(job) }));
    }
    await db.insertOutbox(tx, events);
    return { project, shopId, sequenceNumber: closing.sequenceNumber };
  });
}

/**
 * What the work asks for, or, when it was done before (a trigger or job delivered again), the
 * closing it made (`closed`; null for a report job that failed).
 */
async function requestOf(tx: TransactionSql, work: ClosingRequestWork, createdAt: Date, jobZone: string): Promise<Request | { closed: number | null }> {
  if (work.type === 'trigger') {
    const fireAt = new Date(work.fireAt);
    const key = triggerKey(work.scheduleID, fireAt);
    const existing = await db.closingOfTrigger(tx, key);
    if (existing) return { closed: Number(existing.sequence_number) };
    return {
      origin: { type: 'schedule', scheduleID: work.scheduleID, scheduledAt: work.fireAt },
      formats: work.formats,
      includeAllStates: work.includeAllStates,
      triggerKey: key,
      jobId: null,
      zone: work.location,
      cutOffAt: work.mode === 'includeUntilScheduled' ? fireAt : createdAt,
    };
  }
  const job = await jobs.findJob(tx, work.project, work.jobID, true);
  if (!job) throw new Error(`report job ${work.jobID} does not exist`);
  if (job.state === 'done') return { closed: job.closing_sequence_number === null ? null : Number(job.closing_sequence_number) };
  if (job.state === 'failed') return { closed: null };
  return {
    origin: { type: 'job', jobID: job.id, deviceID: job.device_id, skippedCashCount: job.skipped_cash_count },
    formats: job.formats,
    includeAllStates: false,
    triggerKey: null,
    jobId: job.id,
    zone: jobZone,
    cutOffAt: createdAt,
  };
}

/**
 * The totals of the range's final orders: summed by Postgres where their figures are complete;
 * the rest (pricings without consistent tax figures, rare) worked out order by order, page by
 * page, as the export does.
 */
async function rangeTotals(tx: TransactionSql, project: string, shopId: string, after: number, last: number) {
  const totals = createTotals();
  const sums = await db.completeSums(tx, project, shopId, after, last);
  totals.addSums(sums);
  for (let from = after; sums.incomplete > 0; ) {
    const rows = await db.incompleteOrders(tx, project, shopId, from, last, IncompletePage);
    for (const r of rows) {
      totals.add({ state: 'final', paidAmount: Number(r.paid), paymentMethod: r.method, price: r.price, lineItems: r.line_items ?? undefined });
    }
    if (rows.length < IncompletePage) break;
    from = Number(rows.at(-1)!.sequence_number);
  }
  return { sum: totals.result(), finalOrders: sums.count, tseFailures: sums.tseFailures };
}

/** The closing as its `created` event carries it (without its orders). */
function summaryOf(c: db.NewClosing, logs: Awaited<ReturnType<typeof db.insertClosing>>) {
  return toSummary({
    project: c.project,
    shop_id: c.shopId,
    sequence_number: String(c.sequenceNumber),
    first_order_sequence_number: String(c.firstOrder),
    last_order_sequence_number: String(c.lastOrder),
    order_count: c.orderCount,
    include_all_states: c.includeAllStates,
    created_at: c.createdAt,
    cut_off_at: c.cutOffAt,
    zone: c.zone,
    currency: c.currency,
    shop: c.shop,
    tax_shares: c.taxShares,
    tax_rates: c.taxRates,
    share_by_payment_method: c.shareByPaymentMethod,
    total: String(c.total),
    tse_failures: c.tseFailures,
    company: c.company,
    origin: c.origin,
    logs,
  });
}

/** Records that a report job could not be done (its last attempt failed). */
export async function failJob(sql: Sql, project: string, jobId: string, reason: string): Promise<boolean> {
  return sql.begin(async (tx: TransactionSql) => {
    const job = await jobs.findJob(tx, project, jobId, true);
    if (!job || job.state !== 'pending') return false;
    const at = new Date();
    const failed = await jobs.finishJob(tx, jobId, { state: 'failed', reason }, at);
    await db.insertOutbox(tx, [event(project, job.shop_id, { project, shopID: job.shop_id, at: at.toISOString(), event: 'jobFailed', job: toJob(failed) })]);
    return true;
  });
}

export function event(project: string, shopId: string, payload: ClosingEvent): OutboxEvent {
  return { subject: eventSubject(project, 'closing', shopId, payload.event), payload };
}

const blankShop: ClosingShop = { name: '', externalID: '', street: '', zip: '', city: '', state: '', country: '', phone: '', email: '' };

function shopOf(row: ShopRow): ClosingShop {
  return {
    name: row.name,
    externalID: row.external_id ?? '',
    street: row.street,
    zip: row.zip,
    city: row.city,
    state: row.state,
    country: row.country,
    phone: row.phone,
    email: row.email,
  };
}
