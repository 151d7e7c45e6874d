import { inTransaction, jsonParam, type Sql } from '../../src/infra/postgres.js';
import type { AvailabilityBatchItem } from '../../subjects/availabilities.js';
import { lastPerKey } from './write-order.js';

/** Puts and deletes availabilities; a delete leaves a tombstone (value null) that reads skip. */
export async function writeAvailabilities(sql: Sql, project: string, writes: ReadonlyArray<{ line: number; item: AvailabilityBatchItem }>, writtenAt: Date): Promise<void> {
  const items = lastPerKey(writes, (w) => `${w.item.availability.sku}\u0000${w.item.availability.shopID}`);
  const rows = items.map(({ line, item: { op, availability } }) => ({
    shop_id: availability.shopID,
    sku: availability.sku,
    value: op === 'put' ? availability.value : null,
    line,
  }));
  await inTransaction(sql, (tx) => tx`
    insert into availabilities (project, shop_id, sku, value, written_at, written_line)
    select ${project}, x.shop_id, x.sku, x.value, ${writtenAt}, x.line
    from jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb) as x(shop_id text, sku text, value text, line int)
    order by x.sku, x.shop_id
    on conflict (project, sku, shop_id) do update
      set value = excluded.value, written_at = excluded.written_at, written_line = excluded.written_line
      where (availabilities.written_at, availabilities.written_line) <= (excluded.written_at, excluded.written_line)`);
}

export function availabilitiesOfSku(sql: Sql, project: string, sku: string) {
  return sql<{ shopID: string; sku: string; value: string }[]>`
    select shop_id as "shopID", sku, value from availabilities
    where project = ${project} and sku = ${sku} and value is not null
    order by shop_id`;
}
