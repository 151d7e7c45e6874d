import type { Sql, TransactionSql } from '../../src/infra/postgres.js';

/**
 * The statements of batches: their claims (closing_batches, inserted by the batch trigger), the
 * batch logs of the coming closing (closing_logs of kind batch, written in place: one generation
 * that grows by chunks) and the shop's batch watermark.
 */

type Db = Sql | TransactionSql;

export interface BatchRow {
  schedule_id: string;
  batch_at: Date;
  closing_sequence_number: string | null;
  first_order_sequence_number: string | null;
  last_order_sequence_number: string | null;
  order_count: number | null;
  appended_at: Date | null;
}

/** The claim of a batch time, locked: whether it was appended before (a redelivery appends nothing). */
export async function lockBatch(tx: TransactionSql, scheduleId: number, batchAt: Date): Promise<BatchRow | undefined> {
  const [row] = await tx<BatchRow[]>`select * from closing_batches where schedule_id = ${scheduleId} and batch_at = ${batchAt} for update`;
  return row;
}

export interface BatchLogRow {
  id: string;
  generation: string;
  size: string;
  /** Chunks of the file so far: the next one's number. */
  chunks: number;
  created: boolean;
}

/**
 * The batch log of a format of the coming closing, made on the first batch that appends to it
 * (present at once: it is only ever written whole, batch by batch, in the batch's transaction).
 */
export async function openBatchLog(
  tx: TransactionSql,
  log: { project: string; shopId: string; closingNumber: number; format: string; generation: string; contentType: string; fileName: string },
): Promise<BatchLogRow> {
  const [row] = await tx<BatchLogRow[]>`
    with log as (
      insert into closing_logs (project, shop_id, closing_sequence_number, format, kind, state, generation, content_type, file_name, size, written_at)
      values (${log.project}, ${log.shopId}, ${log.closingNumber}, ${log.format}, 'batch', 'present', ${log.generation}, ${log.contentType}, ${log.fileName}, 0, now())
      on conflict (project, shop_id, closing_sequence_number, kind, format) do update set kind = excluded.kind
      returning id, generation, size, xmax = 0 as created
    )
    select log.id, log.generation, log.size, log.created,
      (select count(*)::int from closing_log_chunks c where c.log_id = log.id and c.generation = log.generation and c.part = 0) as chunks
    from log`;
  return row!;
}

export async function grewBatchLog(tx: TransactionSql, logId: string, added: number, at: Date): Promise<void> {
  await tx`update closing_logs set size = size + ${added}, written_at = ${at} where id = ${logId}`;
}

export async function finishBatch(
  tx: TransactionSql,
  scheduleId: number,
  batchAt: Date,
  done: { closingNumber: number; firstOrder: number; lastOrder: number; orderCount: number; at: Date },
): Promise<void> {
  await tx`
    update closing_batches set closing_sequence_number = ${done.closingNumber}, first_order_sequence_number = ${done.firstOrder},
      last_order_sequence_number = ${done.lastOrder}, order_count = ${done.orderCount}, appended_at = ${done.at}
    where schedule_id = ${scheduleId} and batch_at = ${batchAt}`;
}

export async function moveBatched(tx: TransactionSql, project: string, shopId: string, lastOrder: number): Promise<void> {
  await tx`update closing_sequences set batched_order_sequence_number = ${lastOrder} where project = ${project} and shop_id = ${shopId}`;
}

/** The number of the shop's coming closing (the last one's + 1). */
export async function openClosingNumber(db: Db, project: string, shopId: string): Promise<number> {
  const [row] = await db<{ n: string }[]>`
    select coalesce((select last_number from closing_sequences where project = ${project} and shop_id = ${shopId}), 0) + 1 as n`;
  return Number(row!.n);
}

export function batchLogsOf(db: Db, project: string, shopId: string, closingNumber: number) {
  return db<Array<{ id: string; format: string; state: 'not_present' | 'present'; kind: 'batch' }>>`
    select id, format, state, kind from closing_logs
    where project = ${project} and shop_id = ${shopId} and closing_sequence_number = ${closingNumber} and kind = 'batch'
    order by id`;
}

/** The batches that appended orders to a closing's batch logs, oldest first (empty ones are not listed). */
export function batchesOf(db: Db, project: string, shopId: string, closingNumber: number) {
  return db<Array<Required<{ [K in keyof BatchRow]: NonNullable<BatchRow[K]> }>>>`
    select schedule_id, batch_at, closing_sequence_number, first_order_sequence_number, last_order_sequence_number, order_count, appended_at
    from closing_batches
    where project = ${project} and shop_id = ${shopId} and closing_sequence_number = ${closingNumber} and order_count > 0
    order by batch_at, schedule_id`;
}
