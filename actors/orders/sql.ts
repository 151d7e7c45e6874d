import type { Sql } from '../../src/infra/postgres.js';
import type { OrderFilter } from '../../subjects/orders.js';

export interface ListScope extends OrderFilter {
  project: string;
}

function matching(sql: Sql, scope: ListScope) {
  const conditions = [sql`project = ${scope.project}`];
  if (!scope.includeAllStates) conditions.push(sql`state = 'final'`);
  if (scope.from) conditions.push(sql`finalized_at >= ${scope.from}::timestamptz`);
  if (scope.to) conditions.push(sql`finalized_at < ${scope.to}::timestamptz`);
  if (scope.shopID) conditions.push(sql`shop_id = ${scope.shopID}`);
  if (scope.shopExternalID) conditions.push(sql`shop_external_id = ${scope.shopExternalID}`);
  return conditions.reduce((all, condition) => sql`${all} and ${condition}`);
}

export async function findOrder(sql: Sql, project: string, id: string): Promise<string | undefined> {
  const [row] = await sql<{ doc: string }[]>`select doc::text as doc from orders where project = ${project} and id = ${id}`;
  return row?.doc;
}

/** How many orders match, counting no further than `ceiling + 1`. */
export async function countOrders(sql: Sql, scope: ListScope, ceiling: number): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from (select from orders where ${matching(sql, scope)} limit ${ceiling + 1}) m`;
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
        select finalized_at::text as at, id, doc::text as doc from orders where ${where}
        order by finalized_at, id offset ${position.offset} limit ${limit}`
    : sql<OrderTextRow[]>`
        select finalized_at::text as at, id, doc::text as doc from orders
        where ${where} and (finalized_at, id) > (${position.at}::timestamptz, ${position.id})
        order by finalized_at, id limit ${limit}`;
}
