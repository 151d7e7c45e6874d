import type { Sql } from '../../src/infra/postgres.js';
import { awaitsFiscalReference, orderDocument, withFiscalTransaction } from '../orders/sql.js';

/**
 * Receipts are stored as base64 (the form they travel in) with their size in bytes. A part is a
 * range of whole base64 quanta: `chars` characters from `from` (0-based), both multiples of 4.
 */
export interface ReceiptRow {
  state: string;
  /** Whether the requester may see the order: always for ordersRead, else when it is their app user's. */
  allowed: boolean;
  /** Null until the receipt was made. */
  etag: string | null;
  size: number | null;
  /** The receipt's first characters (base64); null when there is none or the requester has it (ETag). */
  part: string | null;
  /** The order document, only while there is no receipt yet: what the receipt is made from. */
  doc: string | null;
  /** The order waits for its TSE signature: no receipt is made before it is recorded. */
  fiscal_pending: boolean;
}

/**
 * An order and its stored receipt in one statement: on the common path (the receipt exists) that
 * is the whole work of a request. The order document is read (parsed) only for a requester
 * restricted to an app user, and sent only while there is no receipt.
 */
export async function findReceipt(
  sql: Sql,
  scope: { project: string; id: string; appUserID: string | undefined },
  chars: number,
  knownEtags: readonly string[],
): Promise<ReceiptRow | undefined> {
  const appUserID = scope.appUserID ?? null;
  const [row] = await sql<ReceiptRow[]>`
    select o.state,
           case when ${appUserID}::text is null then true else coalesce(o.doc->>'appUserID' = ${appUserID}::text, false) end as allowed,
           r.etag, r.size,
           case when r.etag is null or r.etag = any(${knownEtags}::text[]) then null else substring(r.pdf_base64 from 1 for ${chars}::int) end as part,
           case when r.etag is null then ${orderDocument(sql)} end as doc, ${awaitsFiscalReference(sql)} as fiscal_pending
    from orders o left join receipts r on r.project = o.project and r.order_id = o.id ${withFiscalTransaction(sql)}
    where o.project = ${scope.project} and o.id = ${scope.id}`;
  return row;
}

/**
 * The document of a final order that has no receipt yet (what a receipt job makes one from), and
 * whether it still waits for its TSE signature (`fiscalPending`: its receipt must not be made yet).
 *
 * The order is found by its key alone and its state checked here: with `state = 'final'` in the
 * statement's condition, a planner whose statistics are older than the day's orders took the
 * partial index of final orders by time (`orders_final_by_time`) and read every final order of the
 * project to find this one (52 buffers at 3000 orders in a bench run, and growing with each sale),
 * where the primary key reads 3.
 */
export async function orderWithoutReceipt(sql: Sql, project: string, id: string): Promise<{ doc: string; fiscalPending: boolean } | undefined> {
  const [row] = await sql<{ state: string; doc: string; fiscalPending: boolean }[]>`
    select o.state, ${orderDocument(sql)} as doc, ${awaitsFiscalReference(sql)} as "fiscalPending" from orders o ${withFiscalTransaction(sql)}
    where o.project = ${project} and o.id = ${id}
      and not exists (select from receipts r where r.project = o.project and r.order_id = o.id)`;
  if (row?.state !== 'final') return undefined;
  return { doc: row.doc, fiscalPending: row.fiscalPending };
}

export interface StoredReceipt {
  etag: string;
  size: number;
  part: string;
}

/**
 * Keeps a receipt just made. Two workers making the same receipt at once store it once: the
 * later one answers with what the first stored (the start of it).
 */
export async function storeReceipt(sql: Sql, project: string, id: string, receipt: { etag: string; size: number; base64: string }, chars: number): Promise<StoredReceipt> {
  const [inserted] = await sql<{ etag: string }[]>`
    insert into receipts (project, order_id, etag, size, pdf_base64) values (${project}, ${id}, ${receipt.etag}, ${receipt.size}, ${receipt.base64})
    on conflict (project, order_id) do nothing
    returning etag`;
  if (inserted) return { etag: receipt.etag, size: receipt.size, part: receipt.base64.slice(0, chars) };
  const [first] = await sql<StoredReceipt[]>`
    select etag, size, substring(pdf_base64 from 1 for ${chars}::int) as part from receipts where project = ${project} and order_id = ${id}`;
  if (!first) throw new Error(`receipt of order ${id} neither stored nor found`);
  return first;
}

/** Characters of a stored receipt from `from`, if it is still the one with `etag` and the requester's. */
export async function readReceiptPart(
  sql: Sql,
  scope: { project: string; id: string; etag: string; appUserID: string | undefined },
  from: number,
  chars: number,
): Promise<{ size: number; part: string } | undefined> {
  const [row] = await sql<{ size: number; part: string }[]>`
    select r.size, substring(r.pdf_base64 from ${from + 1}::int for ${chars}::int) as part
    from receipts r join orders o on o.project = r.project and o.id = r.order_id
    where r.project = ${scope.project} and r.order_id = ${scope.id} and r.etag = ${scope.etag}
      and (${scope.appUserID ?? null}::text is null or o.doc->>'appUserID' = ${scope.appUserID ?? null}::text)`;
  return row;
}

export interface HistoryRow {
  id: string;
  shop_id: string;
  finalized_at: Date;
  shop_name: string | null;
  price: string | null;
  currency: string | null;
}

/** A page of an app user's final orders, newest first (index orders_by_app_user). */
export function listPurchases(sql: Sql, project: string, appUserID: string, offset: number, limit: number) {
  return sql<HistoryRow[]>`
    select id, shop_id, finalized_at, doc->'shop'->>'name' as shop_name, doc->'price'->>'price' as price, doc->>'currency' as currency
    from orders
    where project = ${project} and doc->>'appUserID' = ${appUserID} and state = 'final'
    order by finalized_at desc, id desc
    offset ${offset} limit ${limit}`;
}

export async function countPurchases(sql: Sql, project: string, appUserID: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from orders where project = ${project} and doc->>'appUserID' = ${appUserID} and state = 'final'`;
  return row!.n;
}
