import type { Sql } from '../../src/infra/postgres.js';

export interface ReceiptRow {
  state: string;
  app_user_id: string | null;
  /** Null until the receipt was made. */
  etag: string | null;
  size: number | null;
  /** The first bytes of the stored receipt; null when there is none or the requester has it (ETag). */
  part: Buffer | null;
  /** The order document, only while there is no receipt yet: what the receipt is made from. */
  doc: string | null;
}

/**
 * An order and its stored receipt in one statement: on the common path (the receipt exists) that
 * is the whole work of a request.
 */
export async function findReceipt(sql: Sql, project: string, id: string, partBytes: number, knownEtags: readonly string[]): Promise<ReceiptRow | undefined> {
  const [row] = await sql<ReceiptRow[]>`
    select o.state, o.doc->>'appUserID' as app_user_id, r.etag, length(r.pdf) as size,
           case when r.etag is null or r.etag = any(${knownEtags}::text[]) then null else substring(r.pdf from 1 for ${partBytes}) end as part,
           case when r.etag is null then o.doc::text end as doc
    from orders o left join receipts r on r.project = o.project and r.order_id = o.id
    where o.project = ${project} and o.id = ${id}`;
  return row;
}

export interface StoredReceipt {
  etag: string;
  size: number;
  part: Buffer;
}

/**
 * Keeps a receipt just made. Two workers making the same receipt at once store it once: the
 * later one answers with what the first stored.
 */
export async function storeReceipt(sql: Sql, project: string, id: string, etag: string, pdf: Buffer, partBytes: number): Promise<StoredReceipt> {
  const [row] = await sql<StoredReceipt[]>`
    with inserted as (
      insert into receipts (project, order_id, etag, pdf) values (${project}, ${id}, ${etag}, ${pdf})
      on conflict (project, order_id) do nothing
      returning etag, length(pdf) as size, substring(pdf from 1 for ${partBytes}) as part
    )
    select etag, size, part from inserted
    union all
    select etag, length(pdf), substring(pdf from 1 for ${partBytes}) from receipts
    where project = ${project} and order_id = ${id} and not exists (select from inserted)`;
  if (!row) throw new Error(`receipt of order ${id} neither stored nor found`);
  return row;
}

/** Bytes of a stored receipt from `offset` (0-based), if it is still the one with `etag` and the requester's. */
export async function readReceiptPart(
  sql: Sql,
  scope: { project: string; id: string; etag: string; appUserID: string | undefined },
  offset: number,
  partBytes: number,
): Promise<{ size: number; part: Buffer } | undefined> {
  const [row] = await sql<{ size: number; part: Buffer }[]>`
    select length(r.pdf) as size, substring(r.pdf from ${offset + 1} for ${partBytes}) as part
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
