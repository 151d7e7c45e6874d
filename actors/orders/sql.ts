import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { OrderFilter } from '../../subjects/orders.js';

/**
 * An order signed by a TSE after it was written (`fiscal_pending`) gets its fiscalReference from
 * its TSE transaction when it is read: recording a signature never rewrites the order
 * (migrations/0021). Every reader of the order document reads it through these: the join of the
 * orders row `o` with its transaction `t`, and the document with the reference added as its last
 * member, its text otherwise as stored.
 */
export function withFiscalTransaction(sql: Sql | TransactionSql) {
  return sql`left join fiscal_transactions t on o.fiscal_pending and t.project = o.project and t.process_id = o.id`;
}

/**
 * The reference (json) the transaction `t` records, in the spec's shape, once its finish is
 * recorded (null before): its device, the cash register, the transaction number, and its start
 * (when the TSE signed one) and finish logs. The `fiscalized` event carries the same
 * (actors/fiscal/sql.ts recordFinishes).
 */
export function recordedReference(sql: Sql | TransactionSql) {
  return sql`case when t.finish_log is not null then json_build_object(
    'securityDeviceModule', t.device, 'clientSerialNumber', t.client_serial, 'transactionNumber', t.transaction_number,
    'logs', case when t.start_log is null then json_build_array(t.finish_log) else json_build_array(t.start_log, t.finish_log) end) end`;
}

/** The document of the orders row `o` as clients read it (text), given withFiscalTransaction's `t`. */
export function orderDocument(sql: Sql | TransactionSql) {
  return sql`case when t.finish_log is null then o.doc::text else left(o.doc::text, -1) || ',"fiscalReference":' || ${recordedReference(sql)}::text || '}' end`;
}

/** Whether the sale still waits for its TSE finish (its receipt must not be made yet), given withFiscalTransaction's `t`. */
export function awaitsFiscalReference(sql: Sql | TransactionSql) {
  return sql`(o.fiscal_pending and t.finish_log is null)`;
}

/** The order's fiscalReference (json), wherever it is kept, given withFiscalTransaction's `t` and the document's members `x`. */
export function fiscalReferenceOf(sql: Sql | TransactionSql) {
  return sql`coalesce(${recordedReference(sql)}, x."fiscalReference")`;
}

export interface ListScope extends OrderFilter {
  project: string;
}

function matching(sql: Sql, scope: ListScope) {
  const conditions = [sql`o.project = ${scope.project}`];
  if (!scope.includeAllStates) conditions.push(sql`o.state = 'final'`);
  if (scope.from) conditions.push(sql`o.finalized_at >= ${scope.from}::timestamptz`);
  if (scope.to) conditions.push(sql`o.finalized_at < ${scope.to}::timestamptz`);
  if (scope.shopID) conditions.push(sql`o.shop_id = ${scope.shopID}`);
  if (scope.shopExternalID) conditions.push(sql`o.shop_external_id = ${scope.shopExternalID}`);
  return conditions.reduce((all, condition) => sql`${all} and ${condition}`);
}

export async function findOrder(sql: Sql, project: string, id: string): Promise<string | undefined> {
  const [row] = await sql<{ doc: string }[]>`
    select ${orderDocument(sql)} as doc from orders o ${withFiscalTransaction(sql)} where o.project = ${project} and o.id = ${id}`;
  return row?.doc;
}

/** How many orders match, counting no further than `ceiling + 1`. */
export async function countOrders(sql: Sql, scope: ListScope, ceiling: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from (select from orders o where ${matching(sql, scope)} limit ${ceiling + 1}) m`;
  return row!.n;
}

export interface OrderTextRow {
  at: string;
  id: string;
  doc: string;
}

/** Orders by finalizedAt (then id): from an offset, or after a position a previous part ended at. */
export function listOrders(sql: Sql, scope: ListScope, position: { offset: number } | { at: string; id: string }, limit: number) {
  const where = matching(sql, scope);
  return 'offset' in position
    ? sql<OrderTextRow[]>`
        select o.finalized_at::text as at, o.id, ${orderDocument(sql)} as doc from orders o ${withFiscalTransaction(sql)} where ${where}
        order by o.finalized_at, o.id offset ${position.offset} limit ${limit}`
    : sql<OrderTextRow[]>`
        select o.finalized_at::text as at, o.id, ${orderDocument(sql)} as doc from orders o ${withFiscalTransaction(sql)}
        where ${where} and (o.finalized_at, o.id) > (${position.at}::timestamptz, ${position.id})
        order by o.finalized_at, o.id limit ${limit}`;
}
