import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { LogFormat } from '../../subjects/closings.js';

/** Report jobs: "close this shop now", followed until done or failed. */

type Db = Sql | TransactionSql;

export interface JobRow {
  id: string;
  project: string;
  shop_id: string;
  device_id: string;
  skipped_cash_count: boolean;
  formats: LogFormat[];
  state: 'pending' | 'done' | 'failed';
  closing_sequence_number: string | null;
  reason: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export async function findJob(db: Db, project: string, id: string, forUpdate = false): Promise<JobRow | undefined> {
  const [row] = forUpdate
    ? await db<JobRow[]>`select * from closing_jobs where project = ${project} and id = ${id} for update`
    : await db<JobRow[]>`select * from closing_jobs where project = ${project} and id = ${id}`;
  return row;
}

export async function insertJob(tx: TransactionSql, job: Omit<JobRow, 'state' | 'closing_sequence_number' | 'reason' | 'finished_at'>): Promise<JobRow> {
  const [row] = await tx<JobRow[]>`
    insert into closing_jobs (id, project, shop_id, device_id, skipped_cash_count, formats, created_at)
    values (${job.id}, ${job.project}, ${job.shop_id}, ${job.device_id}, ${job.skipped_cash_count}, ${job.formats}, ${job.created_at})
    returning *`;
  return row!;
}

export async function finishJob(
  tx: TransactionSql,
  id: string,
  outcome: { state: 'done'; sequenceNumber: number } | { state: 'failed'; reason: string },
  at: Date,
): Promise<JobRow> {
  const [row] = await tx<JobRow[]>`
    update closing_jobs set state = ${outcome.state}, finished_at = ${at},
      closing_sequence_number = ${outcome.state === 'done' ? outcome.sequenceNumber : null},
      reason = ${outcome.state === 'failed' ? outcome.reason : null}
    where id = ${id} returning *`;
  return row!;
}
