import { randomUUID } from 'node:crypto';
import { createAggregatedReceiptsBatchWriter, type ReceiptOrder } from '../../src/domain/dsfinvk/aggregated-receipts.js';
import { inTransaction, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import type { BatchLogFormat, ClosingWork } from '../../subjects/closings.js';
import { readSettings } from '../settings/sql.js';
import * as batches from './batch-sql.js';
import { createChunkStore } from './chunk-store.js';
import { LogFiles } from './logs.js';
import { projectedOrdersPage } from './read-sql.js';
import * as db from './sql.js';

/**
 * One batch of a shop: the orders that came since the last batch (or closing) go into the batch
 * logs of the coming closing, in one transaction that holds the shop's closing sequence row
 * locked, as a closing does: a batch and a closing of one shop never interleave, and a batch
 * delivered twice appends once (its claim records that it was appended). The range is taken as a
 * closing takes one (the longest prefix of committed orders finalized at or before the batch
 * time), starting after the later of the last closing's and the last batch's last order.
 */
export type BatchWork = Extract<ClosingWork, { type: 'batch' }>;

const OrdersPerPage = 2000;
const utf8 = new TextEncoder();

export interface AppendedBatch {
  closingNumber: number;
  firstOrder: number;
  lastOrder: number;
  orderCount: number;
}

/** Appends a batch; undefined when it was appended before, or never claimed. */
export async function appendBatch(sql: Sql, work: BatchWork, now: () => Date = () => new Date()): Promise<AppendedBatch | undefined> {
  const { project, shopID: shopId } = work;
  const { currency } = await readSettings(sql, project);
  const batchAt = new Date(work.batchAt);

  return inTransaction(sql, async (tx) => {
    const sequence = await db.lockSequence(tx, project, shopId);
    const claim = await batches.lockBatch(tx, work.scheduleID, batchAt);
    if (!claim || claim.appended_at) return undefined;
    const closingNumber = Number(sequence.last_number) + 1;
    const after = Math.max(Number(sequence.last_order_sequence_number), Number(sequence.batched_order_sequence_number));
    const last = await db.rangeEnd(tx, project, shopId, after, batchAt);
    let orderCount = 0;
    if (last > after) {
      for (const format of work.formats) orderCount = await appendToLog(tx, { project, shopId, closingNumber, format, after, last, includeAllStates: work.includeAllStates, currency, batchAt });
      await batches.moveBatched(tx, project, shopId, last);
    }
    const appended = { closingNumber, firstOrder: after + 1, lastOrder: last, orderCount };
    await batches.finishBatch(tx, work.scheduleID, batchAt, { ...appended, at: now() });
    return appended;
  });
}

interface Append {
  project: string;
  shopId: string;
  closingNumber: number;
  format: BatchLogFormat;
  after: number;
  last: number;
  includeAllStates: boolean;
  currency: string;
  batchAt: Date;
}

/**
 * Appends the range's orders to a batch log (made with its header when the first listed order
 * comes): their rows go into new chunks of the log's one generation, in the transaction, so a
 * reader sees the file before or after the batch, never half of it. Answers the orders listed.
 */
async function appendToLog(tx: TransactionSql, a: Append): Promise<number> {
  const writer = createAggregatedReceiptsBatchWriter(a.currency);
  const batchAt = a.batchAt.toISOString();
  let log: batches.BatchLogRow | undefined;
  let store: ReturnType<typeof createChunkStore> | undefined;
  let listed = 0;
  for (let after = a.after; ; ) {
    const rows = await projectedOrdersPage(tx, { project: a.project, shopId: a.shopId, after, last: a.last, includeAllStates: a.includeAllStates }, OrdersPerPage);
    if (rows.length && !store) {
      const file = LogFiles[a.format];
      log = await batches.openBatchLog(tx, {
        project: a.project, shopId: a.shopId, closingNumber: a.closingNumber, format: a.format, generation: randomUUID(), contentType: file.contentType,
        fileName: `${a.format}_batch_${a.shopId.replace(/[^A-Za-z0-9._-]/g, '_')}_${a.closingNumber}.${file.extension}`,
      });
      store = createChunkStore(tx, log.id, log.generation, log.chunks);
      if (log.created) store.write(0, utf8.encode(writer.header));
    }
    const text = rows
      .map((r) => writer.rows({
        id: r.id, sequenceNumber: Number(r.sequence_number), finalizedAt: r.finalized_at, state: r.state, paymentMethod: r.payment_method,
        paidAmount: Number(r.paid_amount), price: r.price, lineItems: (r.line_items ?? undefined) as ReceiptOrder['lineItems'],
      }, batchAt))
      .join('');
    if (store) store.write(0, utf8.encode(text));
    await store?.drain();
    listed += rows.length;
    if (rows.length < OrdersPerPage) break;
    after = Number(rows.at(-1)!.sequence_number);
  }
  if (store && log) {
    await store.end(0);
    await batches.grewBatchLog(tx, log.id, store.size(0), new Date());
  }
  return listed;
}
