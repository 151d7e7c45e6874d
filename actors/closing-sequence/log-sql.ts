import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { LogFormat } from '../../subjects/closings.js';
import { insertOutbox, type OutboxEvent } from '../outbox/sql.js';

/**
 * The logs' bytes: chunks of a writing run (generation). Part 0 is the file; parts above 0 hold a
 * zip's member streams until the zip is assembled from them.
 */

export interface LogToWrite {
  project: string;
  shop_id: string;
  closing_sequence_number: string;
  format: LogFormat;
}

/** Starts a writing run of a log that is not written yet; a run started later overtakes it. */
export async function claimLogRun(sql: Sql, logId: string, generation: string): Promise<LogToWrite | undefined> {
  const [row] = await sql<LogToWrite[]>`
    update closing_logs set generation = ${generation} where id = ${logId} and state = 'not_present' and kind = 'closing'
    returning project, shop_id, closing_sequence_number, format`;
  return row;
}

export async function insertChunk(sql: Sql | TransactionSql, logId: string, generation: string, part: number, n: number, data: Uint8Array): Promise<void> {
  await sql`
    insert into closing_log_chunks (log_id, generation, part, n, data)
    values (${logId}, ${generation}, ${part}, ${n}, ${Buffer.from(data.buffer, data.byteOffset, data.byteLength)})`;
}

export function stagedChunks(sql: Sql, logId: string, generation: string, part: number, after: number, limit: number) {
  return sql<Array<{ n: number; data: Buffer }>>`
    select n, data from closing_log_chunks
    where log_id = ${logId} and generation = ${generation} and part = ${part} and n > ${after}
    order by n limit ${limit}`;
}

export async function dropStaged(sql: Sql, logId: string, generation: string): Promise<void> {
  await sql`delete from closing_log_chunks where log_id = ${logId} and generation = ${generation} and part > 0`;
}

/** Removes every chunk of a writing run that failed (it never becomes the file). */
export async function dropRun(sql: Sql, logId: string, generation: string): Promise<void> {
  await sql`delete from closing_log_chunks where log_id = ${logId} and generation = ${generation}`;
}

/**
 * Makes a run's file the log (present), if no later run overtook it, with its event; removes the
 * chunks of every other run. False when it was overtaken.
 */
export async function finishLogRun(
  sql: Sql,
  logId: string,
  generation: string,
  file: { contentType: string; fileName: string; size: number },
  event: (writtenAt: Date) => OutboxEvent,
): Promise<boolean> {
  return sql.begin(async (tx) => {
    const writtenAt = new Date();
    const [row] = await tx`
      update closing_logs set state = 'present', content_type = ${file.contentType}, file_name = ${file.fileName}, size = ${file.size},
        written_at = ${writtenAt}
      where id = ${logId} and generation = ${generation} and state = 'not_present'
      returning id`;
    if (!row) return false;
    await tx`delete from closing_log_chunks where log_id = ${logId} and generation <> ${generation}`;
    await insertOutbox(tx, [event(writtenAt)]);
    return true;
  });
}

export interface LogInfoRow {
  id: string;
  format: string;
  state: 'not_present' | 'present';
  content_type: string | null;
  file_name: string | null;
  size: string | null;
  chunks: number;
}

export async function findLog(sql: Sql, project: string, id: number): Promise<LogInfoRow | undefined> {
  const [row] = await sql<LogInfoRow[]>`
    select l.id, l.format, l.state, l.content_type, l.file_name, l.size,
      (select count(*)::int from closing_log_chunks c where c.log_id = l.id and c.generation = l.generation and c.part = 0) as chunks
    from closing_logs l where l.project = ${project} and l.id = ${id}`;
  return row;
}

export async function logChunk(sql: Sql, project: string, id: number, n: number): Promise<Buffer | undefined> {
  const [row] = await sql<{ data: Buffer }[]>`
    select c.data from closing_logs l
    join closing_log_chunks c on c.log_id = l.id and c.generation = l.generation and c.part = 0 and c.n = ${n}
    where l.project = ${project} and l.id = ${id} and l.state = 'present'`;
  return row?.data;
}
