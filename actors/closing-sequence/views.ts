import { closingPath, jobPath, logPath, type ClosingSummary, type ReportJob } from '../../subjects/closings.js';
import type { JobRow } from './job-sql.js';
import type { ClosingRow } from './read-sql.js';

/** The shapes closings and report jobs are seen in. Pure. */

export function toSummary(row: ClosingRow): ClosingSummary {
  const sequenceNumber = Number(row.sequence_number);
  const links: ClosingSummary['links'] = { self: { href: closingPath(row.project, row.shop_id, sequenceNumber) } };
  for (const log of row.logs) links[logLinkName(log)] = { href: logPath(row.project, Number(log.id)) };
  return {
    project: row.project,
    shopID: row.shop_id,
    sequenceNumber,
    firstOrderSequenceNumber: Number(row.first_order_sequence_number),
    lastOrderSequenceNumber: Number(row.last_order_sequence_number),
    orderCount: row.order_count,
    includeAllStates: row.include_all_states,
    createdAt: row.created_at.toISOString(),
    cutOffAt: row.cut_off_at.toISOString(),
    currency: row.currency,
    shop: row.shop,
    taxShares: row.tax_shares,
    shareByPaymentMethod: row.share_by_payment_method,
    total: Number(row.total),
    tseFailures: row.tse_failures,
    taxNumber: row.company.taxNumber,
    vatID: row.company.vatID,
    companyName: row.company.companyName,
    companyAdress: row.company.companyAdress,
    origin: row.origin,
    logs: row.logs.map((log) => ({ id: Number(log.id), format: log.format, state: log.state, kind: log.kind })),
    links,
  };
}

export function toJob(row: JobRow): ReportJob {
  const sequenceNumber = row.closing_sequence_number === null ? null : Number(row.closing_sequence_number);
  return {
    id: row.id,
    state: row.state,
    shopID: row.shop_id,
    deviceID: row.device_id,
    skippedCashCount: row.skipped_cash_count,
    formats: row.formats,
    createdAt: row.created_at.toISOString(),
    finishedAt: row.finished_at?.toISOString() ?? null,
    sequenceNumber,
    ...(row.reason === null ? {} : { reason: row.reason }),
    links: {
      self: { href: jobPath(row.project, row.id) },
      ...(sequenceNumber === null ? {} : { closing: { href: closingPath(row.project, row.shop_id, sequenceNumber) } }),
    },
  };
}

/** A log's link in a closing's links: its format; a batch log's `batch_<format>` (a closing may have both). */
export function logLinkName(log: { format: string; kind: 'closing' | 'batch' }): string {
  return log.kind === 'batch' ? `batch_${log.format}` : log.format;
}
