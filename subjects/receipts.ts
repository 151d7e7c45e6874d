import { z } from 'zod';
import { Href, Pagination, ProjectId, subjectToken } from './common.js';
import { endpoint } from './contract.js';
import { jobFilter, jobSubject } from './jobs.js';

/**
 * Receipts of final orders (PDF) and an app user's purchase history. A receipt is made by a
 * receipts worker on its first request, or with RECEIPTS_AHEAD when its order becomes final (a
 * receipt job) if a request has not come first, and kept (a final order never changes); it travels to the edge base64-encoded
 * in parts, each well under the broker's message limit.
 */

// Text Postgres cannot store (U+0000, a lone surrogate) is refused for every worker message alike
// (findUnstorableText in src/messaging/worker.ts): a 400 naming the field.
export const OrderId = z.string().min(1).max(200);
export const AppUserId = z.string().min(1).max(200).describe('The app user id, as the app SDKs send it in the path');

/**
 * Who asks: a token with ordersRead sees every order (`appUserID` absent); a token without it only
 * the orders of its `appUserID` claim, and learns nothing of the others (not even that they exist).
 */
const Requester = z.object({ appUserID: AppUserId.optional() });

export const ReceiptRequest = Requester.extend({
  project: ProjectId,
  id: OrderId,
  ifNoneMatch: z.string().max(2000).optional().describe('The If-None-Match header: a matching ETag answers notModified without the bytes'),
});

export const ReceiptPart = z.object({
  etag: z.string(),
  /** Bytes of the whole PDF. */
  size: z.int().min(0),
  notModified: z.boolean(),
  /** Base64 of the bytes from the requested offset on ('' when notModified). */
  data: z.string(),
  /** Offset of the next part, or null when this was the last. */
  next: z.int().min(0).nullable(),
});
export type ReceiptPart = z.infer<typeof ReceiptPart>;

export const ReceiptPartRequest = Requester.extend({ project: ProjectId, id: OrderId, etag: z.string().max(200), offset: z.int().min(0) });

export const PurchaseHistoryOrder = z
  .object({
    project: z.string(),
    id: z.string().describe('The order id'),
    date: z.iso.datetime().describe("When it was paid (the order's finalizedAt), RFC 3339 UTC with milliseconds"),
    shopID: z.string().describe('The shop id: a string, as everywhere in this API'),
    shopName: z.string().describe('The shop as it was at the sale'),
    price: z.int().describe('The total, in the currency subunit'),
    currency: z.string(),
    state: z.string().describe('Always final: the history lists purchases'),
    isSuccessful: z.boolean().describe('Always true (the iOS SDK decodes it)'),
    links: z.object({ receipt: Href.describe('The receipt as application/pdf') }),
  })
  .meta({ id: 'PurchaseHistoryOrder' });
export type PurchaseHistoryOrder = z.infer<typeof PurchaseHistoryOrder>;

export const PurchaseHistory = z
  .object({
    orders: z.array(PurchaseHistoryOrder),
    pagination: Pagination,
    links: z.object({ self: Href, nextPage: Href.optional() }),
  })
  .meta({ id: 'PurchaseHistory' });

export const receipts = {
  /**
   * The first part of an order's receipt, made and stored on the first request. Refused with 404
   * for an order that is not final or does not exist, and with 403, for a requester restricted to
   * an app user, for every order that is not theirs (whether it exists or not).
   */
  get: endpoint('svc.receipts.get', ReceiptRequest, ReceiptPart, { repeatable: true }),
  /** A further part of a stored receipt, from `offset`; `etag` names the receipt the first part came from. */
  part: endpoint('svc.receipts.part', ReceiptPartRequest, ReceiptPart, { repeatable: true }),
  /** A page of an app user's final orders, newest first. */
  history: endpoint(
    'svc.receipts.history',
    z.object({ project: ProjectId, appUserID: AppUserId, offset: z.int().min(0), limit: z.int().min(1).max(1000) }),
    z.object({ orders: z.array(PurchaseHistoryOrder), totalItems: z.int().min(0) }),
    { repeatable: true },
  ),
};

/**
 * Durable work (JetStream JOBS, kind `receipt`; only with RECEIPTS_AHEAD): make and keep the receipt
 * of an order that became final, so that its first request finds it made. Written to the outbox in the statement that
 * writes the final order, published as `jobs.receipt.<project>.<orderId>` with Nats-Msg-Id
 * `receipt:<project>:<orderId>` (the same order enqueued twice is made once). A job for an order
 * that is not final, gone, or has its receipt already, does nothing.
 */
export const ReceiptJob = z
  .object({ project: ProjectId, orderID: OrderId.describe('The final order whose receipt to make') })
  .meta({ id: 'ReceiptJob' });
export type ReceiptJob = z.infer<typeof ReceiptJob>;

export const ReceiptJobFilter = jobFilter('receipt');

function receiptJobSubject(project: string, orderId: string): string {
  return jobSubject('receipt', project, subjectToken(orderId));
}

function receiptJobMsgId(project: string, orderId: string): string {
  return `receipt:${project}:${orderId}`;
}

/** The outbox row (subject, payload, Nats-Msg-Id) that enqueues the receipt job of a final order. */
export function receiptJob(project: string, orderId: string): { subject: string; payload: ReceiptJob; msgId: string } {
  return { subject: receiptJobSubject(project, orderId), payload: { project, orderID: orderId }, msgId: receiptJobMsgId(project, orderId) };
}
