import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import type { JobConsumer } from '../../src/messaging/jobs.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { receiptPath } from '../../subjects/orders.js';
import { receipts, type PurchaseHistoryOrder, type ReceiptPart } from '../../subjects/receipts.js';
import { startReceiptJobs, type ReceiptJobDeps } from './jobs.js';
import { createReceiptMaker } from './maker.js';
import * as db from './sql.js';

export interface ReceiptsDeps {
  sql: Sql;
  nc: NatsConnection;
  log: Logger;
  /** IANA time zone the sale's date and time are printed in (RECEIPT_TIME_ZONE). */
  timeZone: string;
  /** Bytes of a receipt per message (RECEIPT_PART_BYTES); base64 makes a third more of them. */
  partBytes: number;
  /** Threads that make the PDFs (RECEIPT_RENDER_THREADS); 0: on the event loop. */
  renderThreads: number;
  /** Counts receipt jobs that failed their last attempt. */
  metrics?: ReceiptJobDeps['metrics'];
}

export interface ReceiptsActor {
  routes: Route[];
  /** Starts making the receipts of orders that became final (receipt jobs from JetStream). */
  startConsumer(): Promise<JobConsumer>;
}

/**
 * Receipts of final orders and an app user's purchase history. A receipt is made when its order
 * becomes final (a receipt job) and kept: a final order never changes, so requests read the stored
 * bytes. A request that comes before the job made it makes it then (maker.ts: once).
 */
export function createReceiptsActor(deps: ReceiptsDeps): ReceiptsActor {
  const { sql } = deps;
  // Parts are whole base64 quanta (3 bytes, 4 characters), so each decodes on its own.
  const partBytes = Math.max(3, deps.partBytes - (deps.partBytes % 3));
  const partChars = (partBytes / 3) * 4;
  const maker = createReceiptMaker({ sql, timeZone: deps.timeZone, renderThreads: deps.renderThreads, partChars });

  const routes = [
    route(receipts.get, async ({ project, id, appUserID, ifNoneMatch }) => {
      const known = etagsIn(ifNoneMatch);
      let row = await db.findReceipt(sql, { project, id, appUserID }, partChars, known);
      // A receipt prints the sale's TSE signature, which a job records a moment after the payment:
      // a request that comes first waits a little for it, then asks the client to come back.
      for (let waited = 0; row?.etag === null && row.fiscal_pending && row.state === 'final' && waited < SignatureWaitMs; waited += SignaturePollMs) {
        await sleep(SignaturePollMs);
        row = await db.findReceipt(sql, { project, id, appUserID }, partChars, known);
      }
      // A requester restricted to an app user hears the same for an order of someone else as for
      // one that does not exist: nothing tells them which ids are taken.
      if (appUserID !== undefined && !row?.allowed) throw notYours();
      if (!row) throw AppError.notFound(`no order with id ${id}`);
      if (row.state !== 'final') throw AppError.notFound(`order ${id} is ${row.state}: only final orders have a receipt`);
      if (row.etag === null && row.fiscal_pending) throw AppError.unavailable(`the receipt of order ${id} waits for the TSE signature of the sale; try again in a moment`);
      // The stored receipt (its first part null when the requester has it: findReceipt compared the
      // ETags), or the one made now.
      const receipt: { etag: string; size: number; part: string | null } =
        row.etag !== null && row.size !== null ? { etag: row.etag, size: row.size, part: row.part } : await maker.make(project, id, row.doc!);
      if (receipt.part === null || known.includes(receipt.etag) || known.includes('*')) return notModified(receipt.etag, receipt.size);
      return part(receipt.etag, receipt.size, 0, receipt.part, partBytes);
    }),

    route(receipts.part, async ({ project, id, etag, offset, appUserID }) => {
      if (offset % 3 !== 0) throw AppError.badRequest('a part starts at a multiple of 3 bytes');
      const row = await db.readReceiptPart(sql, { project, id, etag, appUserID }, (offset / 3) * 4, partChars);
      if (!row || offset >= row.size) throw AppError.notFound(`no receipt part of order ${id} at ${offset} (ask for the receipt again)`);
      return part(etag, row.size, offset, row.part, partBytes);
    }),

    route(receipts.history, async ({ project, appUserID, offset, limit }) => {
      const [rows, totalItems] = await Promise.all([db.listPurchases(sql, project, appUserID, offset, limit), db.countPurchases(sql, project, appUserID)]);
      return { orders: rows.map((r) => historyItem(project, r)), totalItems };
    }),
  ];

  return {
    routes,
    // Two receipts per render thread: one rendered while the other's order is read or stored. More
    // would only queue for the threads, ahead of the requests that make a receipt themselves.
    startConsumer: () => startReceiptJobs({ nc: deps.nc, sql, log: deps.log, maker, concurrency: 2 * Math.max(1, deps.renderThreads), metrics: deps.metrics }),
  };
}

const SignatureWaitMs = 3000;
const SignaturePollMs = 50;

function notYours(): AppError {
  return AppError.forbidden("the token may read the receipts of its own app user's orders only");
}

/** A part as stored: base64 of the bytes from `offset`, at most `partBytes` of them. */
function part(etag: string, size: number, offset: number, base64: string, partBytes: number): ReceiptPart {
  const end = offset + partBytes;
  return { etag, size, notModified: false, data: base64, next: end < size ? end : null };
}

function notModified(etag: string, size: number): ReceiptPart {
  return { etag, size, notModified: true, data: '', next: null };
}

/** The entity tags of an If-None-Match header (`*`, or a list; weak tags compare by their value). */
function etagsIn(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .filter(Boolean);
}

function historyItem(project: string, r: db.HistoryRow): PurchaseHistoryOrder {
  const price = Number(r.price);
  return {
    project,
    id: r.id,
    date: r.finalized_at.toISOString(),
    shopID: r.shop_id,
    shopName: r.shop_name ?? '',
    price: Number.isSafeInteger(price) ? price : 0,
    currency: r.currency ?? '',
    state: 'final',
    isSuccessful: true,
    links: { receipt: { href: receiptPath(project, r.id) } },
  };
}
