import type { Sql, TransactionSql } from '../../../src/infra/postgres.js';

/** The statements of the local software signer (local.ts). */

type Db = Sql | TransactionSql;

export interface TssRow {
  private_key: string;
  public_key: string;
  serial_number: string;
  certificate: string;
}

export async function findTss(db: Db, project: string): Promise<TssRow | undefined> {
  const [row] = await db<TssRow[]>`select private_key, public_key, serial_number, certificate from fiscal_local_tss where project = ${project}`;
  return row;
}

/** Keeps a new key pair of a project unless another worker kept one first; answers the one kept. */
export async function insertTss(db: Db, project: string, tss: TssRow): Promise<TssRow> {
  const [row] = await db<TssRow[]>`
    with inserted as (
      insert into fiscal_local_tss (project, private_key, public_key, serial_number, certificate)
      values (${project}, ${tss.private_key}, ${tss.public_key}, ${tss.serial_number}, ${tss.certificate})
      on conflict (project) do nothing
      returning private_key, public_key, serial_number, certificate
    )
    select * from inserted
    union all
    select private_key, public_key, serial_number, certificate from fiscal_local_tss where project = ${project} and not exists (select from inserted)`;
  return row!;
}

export interface Counters {
  counter: number;
  transaction_number: number | null;
}

/**
 * Takes the TSS's next signature counter (and, for a start, its next transaction number) and
 * holds its row locked until the transaction ends, so signatures are numbered one after another.
 * A finish answers the transaction number of its start (null when it was not started).
 */
export async function takeCounters(tx: TransactionSql, project: string, transactionId: string, starting: boolean): Promise<Counters | undefined> {
  const [row] = await tx<Counters[]>`
    update fiscal_local_tss set
      signature_counter = signature_counter + 1,
      transaction_number = transaction_number + ${starting ? 1 : 0}::int
    where project = ${project}
    returning signature_counter::int as counter,
      case when ${starting} then transaction_number::int
           else (select l.transaction_number::int from fiscal_local_logs l where l.project = ${project} and l.transaction_id = ${transactionId} and l.revision = 1)
      end as transaction_number`;
  return row;
}

export interface LogRow {
  transaction_number: number;
  counter: number;
  unix_time: number;
  process_type: string;
  process_data: string;
  signature: string;
}

/** Keeps a signed log; false when the (transaction, revision) was signed already (the caller rolls back). */
export async function insertLog(tx: TransactionSql, project: string, transactionId: string, revision: number, log: LogRow): Promise<boolean> {
  const rows = await tx`
    insert into fiscal_local_logs (project, transaction_id, revision, transaction_number, counter, unix_time, process_type, process_data, signature)
    values (${project}, ${transactionId}, ${revision}, ${log.transaction_number}, ${log.counter}, ${log.unix_time}, ${log.process_type}, ${log.process_data}, ${log.signature})
    on conflict (project, transaction_id, revision) do nothing
    returning 1`;
  return rows.length === 1;
}

export async function findLog(db: Db, project: string, transactionId: string, revision: number): Promise<LogRow | undefined> {
  const [row] = await db<LogRow[]>`
    select transaction_number::int, counter::int, unix_time::float8 as unix_time, process_type, process_data, signature
    from fiscal_local_logs where project = ${project} and transaction_id = ${transactionId} and revision = ${revision}`;
  return row;
}
