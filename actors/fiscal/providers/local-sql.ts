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

/**
 * Keeps a new key pair of a project unless another worker kept one first; answers the one kept.
 * Another worker's row, kept while this insert ran, is committed once the insert meets it, but the
 * statement's snapshot is older and cannot read it: a second statement does.
 */
export async function insertTss(db: Db, project: string, tss: TssRow): Promise<TssRow> {
  const [row] = await db<TssRow[]>`
    insert into fiscal_local_tss (project, private_key, public_key, serial_number, certificate)
    values (${project}, ${tss.private_key}, ${tss.public_key}, ${tss.serial_number}, ${tss.certificate})
    on conflict (project) do nothing
    returning private_key, public_key, serial_number, certificate`;
  const kept = row ?? (await findTss(db, project));
  if (!kept) throw new Error(`the local TSS of project ${project} was neither kept nor found`);
  return kept;
}

export interface LogRow {
  transaction_number: number;
  counter: number;
  unix_time: number;
  process_type: string;
  process_data: string;
  signature: string;
}

/** A kept log of one revision of a transaction. */
export interface KeptLog extends LogRow {
  transaction_id: string;
  revision: number;
}

/** The TSS's counters: the last signature counter and the last transaction number it gave. */
export interface TssCounters {
  signatureCounter: number;
  transactionNumber: number;
}

/**
 * The TSS's counters, with the logs kept already of these transactions (both revisions): what a
 * batch must not sign again, and the starts its finishes close. Undefined when the project has no
 * local TSS. Nothing is locked: keepLogs writes only if the counters are still these.
 *
 * The logs are looked up one transaction at a time by the primary key (`offset 0` keeps the planner
 * from merging the lookups into one scan): a table that grew since it was last analyzed (a busy
 * day, autovacuum not yet round) looks to the planner like a project of a few logs, and it
 * scanned all of the project's logs for the batch's ones instead (0.75 ms a batch at 5000 logs in
 * a bench run, and growing with every sale).
 */
export async function readTss(db: Db, project: string, transactionIds: readonly string[]): Promise<(TssCounters & { kept: KeptLog[] }) | undefined> {
  const [row] = await db<Array<TssCounters & { kept: KeptLog[] }>>`
    select t.signature_counter::int as "signatureCounter", t.transaction_number::int as "transactionNumber",
      coalesce((
        select json_agg(json_build_object(
          'transaction_id', l.transaction_id, 'revision', l.revision, 'transaction_number', l.transaction_number, 'counter', l.counter,
          'unix_time', l.unix_time, 'process_type', l.process_type, 'process_data', l.process_data, 'signature', l.signature))
        from unnest(${transactionIds as string[]}::text[]) as i(id)
        cross join lateral (select * from fiscal_local_logs l where l.project = t.project and l.transaction_id = i.id collate "C" offset 0) l
      ), '[]'::json) as kept
    from fiscal_local_tss t where t.project = ${project}`;
  return row;
}

/**
 * Keeps newly signed logs and moves the TSS's counters to `after`, in one statement, if they are
 * still at `before` (what readTss read); false when another signer moved them in between (then
 * nothing is written). Every signature moves the signature counter, so an unchanged counter means
 * nothing was signed since the read; two signers that read the same counters cannot both write:
 * the second waits for the first's row and finds the counter moved.
 */
export async function keepLogs(db: Db, project: string, logs: readonly KeptLog[], before: TssCounters, after: TssCounters): Promise<boolean> {
  const column = <K extends keyof KeptLog>(key: K) => logs.map((l) => l[key]);
  const [row] = await db<{ advanced: boolean }[]>`
    with advanced as (
      update fiscal_local_tss set signature_counter = ${after.signatureCounter}, transaction_number = ${after.transactionNumber}
      where project = ${project} and signature_counter = ${before.signatureCounter}
      returning 1
    ), kept as (
      insert into fiscal_local_logs (project, transaction_id, revision, transaction_number, counter, unix_time, process_type, process_data, signature)
      select ${project}, l.* from unnest(
        ${column('transaction_id') as string[]}::text[], ${column('revision') as number[]}::smallint[], ${column('transaction_number') as number[]}::bigint[],
        ${column('counter') as number[]}::bigint[], ${column('unix_time') as number[]}::bigint[], ${column('process_type') as string[]}::text[],
        ${column('process_data') as string[]}::text[], ${column('signature') as string[]}::text[]
      ) as l
      where exists (select from advanced)
    )
    select exists (select from advanced) as advanced`;
  return row!.advanced;
}
