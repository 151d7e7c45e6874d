import { createTotals } from '../../src/domain/closings/totals.js';
import { inTransaction, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import { readSettings } from '../settings/sql.js';
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

export async function closeShop(sql: Sql, work: ClosingWork, now: () => Date = () => new Date()): Promise<ClosedShop | null> {
  const { project, shopID: shopId } = work;
  // Read before the lock: the company data and the shop as they are when the closing is made.
  const settings = await readSettings(sql, project);
  const shopRow = await db.findShopRow(sql, project, shopId);
  const scheduled = work.type === 'report' ? await db.scheduleFormatsOfShop(sql, project, shopId) : undefined;

  return inTransaction(sql, async (tx) => {
    const sequence = await db.lockSequence(tx, project, shopId);
    const done = (sequenceNumber: number | string | null) => (sequenceNumber === null ? null : { project, shopId, sequenceNumber: Number(sequenceNumber) });

    let origin: ClosingOrigin;
    let formats: readonly LogFormat[];
    let includeAllStates = false;
    let key: string | null = null;
    let jobId: string | null = null;
    let zone: string;
    const createdAt = now();
    let cutOffAt = createdAt;
    if (work.type === 'trigger') {
      const fireAt = new Date(work.fireAt);
      key = triggerKey(work.scheduleID, fireAt);
      const existing = await db.closingOfTrigger(tx, key);
      if (existing) return done(existing.sequence_number);
      origin = { type: 'schedule', scheduleID: work.scheduleID, scheduledAt: work.fireAt };
      formats = work.formats;
      includeAllStates = work.includeAllStates;
      zone = work.location;
      if (work.mode === 'includeUntilScheduled') cutOffAt = fireAt;
    } else {
      const job = await jobs.findJob(tx, project, work.jobID, true);
      if (!job) throw new Error(`report job ${work.jobID} does not exist`);
      if (job.state === 'done') return done(job.closing_sequence_number);
      if (job.state === 'failed') return null;
      jobId = job.id;
      origin = { type: 'job', jobID: job.id, deviceID: job.device_id, skippedCashCount: job.skipped_cash_count };
      formats = job.formats;
      zone = scheduled?.location ?? 'UTC';
    }

    const after = Number(sequence.last_order_sequence_number);
    const last = await db.rangeEnd(tx, project, shopId, after, cutOffAt);
    const totals = createTotals();
    const sums = await db.completeSums(tx, project, shopId, after, last);
    totals.addSums(sums);
    const finalOrders = sums.count;
    // Rare: pricings without (consistent) tax figures; worked out per order, as the export does.
    for (let from = after; sums.incomplete > 0; ) {
      const rows = await db.incompleteOrders(tx, project, shopId, from, last, IncompletePage);
      for (const r of rows) {
        totals.add({ state: 'final', paidAmount: Number(r.paid), paymentMethod: r.method, price: r.price, lineItems: r.line_items ?? undefined });
      }
      if (rows.length < IncompletePage) break;
      from = Number(rows.at(-1)!.sequence_number);
    }
    const otherOrders = includeAllStates ? await db.countNonFinal(tx, project, shopId, after, last) : 0;
    const sum = totals.result();
    const shop = shopRow ? shopOf(shopRow) : ((last > after ? await db.shopOfOrder(tx, project, shopId, last) : undefined) ?? blankShop);

    const closing: db.NewClosing = {
      project,
      shopId,
      sequenceNumber: Number(sequence.last_number) + 1,
      firstOrder: after + 1,
      lastOrder: last,
      orderCount: finalOrders + otherOrders,
      includeAllStates,
      createdAt,
      cutOffAt,
      zone,
      currency: settings.currency,
      shop,
      taxShares: sum.taxShares,
      taxRates: sum.taxRates,
      shareByPaymentMethod: sum.shareByPaymentMethod,
      total: sum.total,
      company: { companyName: settings.companyName, taxNumber: settings.taxNumber, vatID: settings.vatID, companyAdress: settings.companyAdress },
      origin,
      triggerKey: key,
      jobId,
      formats,
    };
    const logs = await db.insertClosing(tx, closing);
    const summary = toSummary({
      project,
      shop_id: shopId,
      sequence_number: String(closing.sequenceNumber),
      first_order_sequence_number: String(closing.firstOrder),
      last_order_sequence_number: String(closing.lastOrder),
      order_count: closing.orderCount,
      include_all_states: includeAllStates,
      created_at: createdAt,
      cut_off_at: cutOffAt,
      zone,
      currency: closing.currency,
      shop,
      tax_shares: closing.taxShares,
      tax_rates: closing.taxRates,
      share_by_payment_method: closing.shareByPaymentMethod,
      total: String(closing.total),
      company: closing.company,
      origin,
      logs,
    });
    const at = createdAt.toISOString();
    const events: OutboxEvent[] = [event(project, shopId, { project, shopID: shopId, at, event: 'created', closing: summary })];
    if (jobId) {
      const job = await jobs.finishJob(tx, jobId, { state: 'done', sequenceNumber: closing.sequenceNumber }, createdAt);
      events.push(event(project, shopId, { project, shopID: shopId, at, event: 'jobDone', job: toJob(job) }));
    }
    await db.insertOutbox(tx, events);
    return done(closing.sequenceNumber);
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

function shopOf(row: NonNullable<Awaited<ReturnType<typeof db.findShopRow>>>): ClosingShop {
  return {
    name: row.name ?? '',
    externalID: row.external_id ?? '',
    street: row.street ?? '',
    zip: row.zip ?? '',
    city: row.city ?? '',
    state: row.state ?? '',
    country: row.country ?? '',
    phone: row.phone ?? '',
    email: row.email ?? '',
  };
}
