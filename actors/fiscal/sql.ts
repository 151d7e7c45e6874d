import type { Sql } from '../../src/infra/postgres.js';
import type { FiscalizationSettings, FiscalLogEntry, FiscalReference, SecurityDeviceModule } from '../../subjects/fiscal.js';
import { recordedReference } from '../orders/sql.js';
import { insertOutbox, type OutboxEvent } from '../outbox/sql.js';

/** The statements of the fiscal jobs (handler.ts). */

export interface TransactionState {
  /** The provider the process was created under; null: nothing to sign. */
  fiscal_provider: string | null;
  version: number;
  fiscalization: FiscalizationSettings | null;
  device: SecurityDeviceModule | null;
  transaction_number: number | null;
  start_log: FiscalLogEntry | null;
  finish_log: FiscalLogEntry | null;
}

/** A process of a batch of jobs: `<project>/<process id>`. */
export function processKey(project: string, processId: string): string {
  return `${project}/${processId}`;
}

/**
 * For each process of a batch of jobs (by processKey): its provider and version, the project's TSE
 * settings and what is recorded of its transaction, in one read. A process that does not exist has
 * no entry. The batch comes as arrays (unnest), not as a JSON recordset: the planner counts an
 * array's elements, while it guesses any json_to_recordset at 100 rows, which made a hash join over
 * the whole table of processes look cheaper than 100 index probes until the table outgrew about
 * 8000 processes (2.5 ms a batch instead of 0.3, measured with `npm run bench -- fiscal`).
 */
export async function readTransactions(sql: Sql, processes: ReadonlyArray<{ project: string; processId: string }>): Promise<Map<string, TransactionState>> {
  if (!processes.length) return new Map();
  const rows = await sql<Array<TransactionState & { project: string; process_id: string }>>`
    select p.project, p.id as process_id, p.fiscal_provider, p.version, s.fiscalization, t.device, t.transaction_number::int as transaction_number, t.start_log, t.finish_log
    from unnest(${processes.map((p) => p.project)}::text[], ${processes.map((p) => p.processId)}::text[]) as i(project, process_id)
    join checkout_processes p on p.project = i.project and p.id = i.process_id collate "C"
    left join project_settings s on s.project = p.project
    left join fiscal_transactions t on t.project = p.project and t.process_id = p.id`;
  return new Map(rows.map(({ project, process_id, ...state }) => [processKey(project, process_id), state]));
}

export interface StartRecord {
  project: string;
  processId: string;
  shopId: string;
  provider: string;
  device: SecurityDeviceModule;
  clientSerial: string;
  transactionNumber: number;
  log: FiscalLogEntry;
}

/** Records signed starts (one statement for a batch), each unless one is recorded already. At most one per process. */
export async function recordStarts(sql: Sql, records: readonly StartRecord[]): Promise<void> {
  if (!records.length) return;
  const input = records.map((r) => ({
    project: r.project,
    process_id: r.processId,
    shop_id: r.shopId,
    provider: r.provider,
    device: r.device,
    client_serial: r.clientSerial,
    transaction_number: r.transactionNumber,
    start_log: r.log,
  }));
  await sql`
    insert into fiscal_transactions (project, process_id, shop_id, provider, device, client_serial, transaction_number, start_log, started_at)
    select project, process_id, shop_id, provider, device, client_serial, transaction_number, start_log, now()
    from json_to_recordset(${JSON.stringify(input)}::text::json) as i(
      project text, process_id text collate "C", shop_id text collate "C", provider text, device jsonb, client_serial text, transaction_number bigint, start_log jsonb)
    on conflict (project, process_id) do update
      set device = excluded.device, client_serial = excluded.client_serial, transaction_number = excluded.transaction_number,
          start_log = excluded.start_log, started_at = excluded.started_at
      where fiscal_transactions.start_log is null and fiscal_transactions.finish_log is null`;
}

export interface FinishRecord {
  project: string;
  processId: string;
  shopId: string;
  provider: string;
  reference: FiscalReference;
  /** The `fiscalized` event: its subject and everything of its payload but the order's summary and the reference (the statement adds them). */
  event: { subject: string; envelope: Record<string, unknown> };
  /** The receipt job of a final order, queued with the signature (when receipts are made ahead). */
  receiptJob: OutboxEvent | undefined;
}

/**
 * Records finished transactions (one transaction of two statements for a batch, at most one per process), each once:
 * the transaction row (readers make the order's fiscalReference of it and add it to the order
 * document: actors/orders/sql.ts orderDocument; the order itself is not written), and the `fiscalized` event
 * (its fiscalReference made of the recorded row as readers make it) and a final order's receipt
 * job in the outbox, in the order of the records, in the same transaction. Answers the
 * processKeys of those recorded now; a finish recorded before (a repeated job) writes nothing.
 *
 * The event's payload is written here, as every other event's is (JSON.stringify): Postgres prints
 * json_build_object's text as `{"id" : "…"}` and jsonb's as `{"id": "…"}`, and an event must come in
 * one byte form whoever wrote it.
 */
export async function recordFinishes(sql: Sql, records: readonly FinishRecord[]): Promise<Set<string>> {
  if (!records.length) return new Set();
  const input = records.map((r, n) => {
    // The finish is the last log; a transaction the TSE never started has no other.
    const finish = r.reference.logs.at(-1)!;
    const start = r.reference.logs.length > 1 ? r.reference.logs[0] : null;
    return {
      n,
      project: r.project,
      process_id: r.processId,
      shop_id: r.shopId,
      provider: r.provider,
      device: r.reference.securityDeviceModule,
      client_serial: r.reference.clientSerialNumber,
      transaction_number: r.reference.transactionNumber,
      start_log: start,
      finish_log: finish,
    };
  });
  return sql.begin(async (tx) => {
    const rows = await tx<Array<{ project: string; process_id: string; n: number | null; state: string | null; summary: string | null; reference: string | null }>>`
      with input as (
        select * from json_to_recordset(${JSON.stringify(input)}::text::json) as i(
          n int, project text, process_id text collate "C", shop_id text collate "C", provider text, device jsonb, client_serial text,
          transaction_number bigint, start_log jsonb, finish_log jsonb)
      ), t as (
        insert into fiscal_transactions (project, process_id, shop_id, provider, device, client_serial, transaction_number, start_log, finish_log, started_at, finished_at)
        select project, process_id, shop_id, provider, device, client_serial, transaction_number, start_log, finish_log, now(), now()
        from input order by n
        on conflict (project, process_id) do update
          set device = excluded.device, client_serial = excluded.client_serial, transaction_number = excluded.transaction_number,
              start_log = coalesce(fiscal_transactions.start_log, excluded.start_log), finish_log = excluded.finish_log, finished_at = excluded.finished_at
          where fiscal_transactions.finish_log is null
        returning project, process_id, device, client_serial, transaction_number, start_log, finish_log
      )
      select t.project, t.process_id, i.n, o.state, ${recordedReference(tx)}::text as reference,
        json_build_object('id', o.id, 'state', o.state, 'shopID', o.shop_id, 'sequenceNumber', o.sequence_number,
          'finalizedAt', x."finalizedAt", 'paidAmount', x."paidAmount", 'currency', x.currency, 'links', x.links)::text as summary
      from t join input i on i.project = t.project and i.process_id = t.process_id
      left join orders o on o.project = t.project and o.id = t.process_id and o.fiscal_pending
      -- One parse of the document for its four members (each -> parses a json value whole).
      left join lateral json_to_record(o.doc) as x("finalizedAt" json, "paidAmount" json, currency json, links json) on true
      order by i.n`;
    const events: OutboxEvent[] = [];
    for (const row of rows) {
      if (row.state === null || row.n === null) continue;
      const record = records[row.n]!;
      const payload = { ...record.event.envelope, order: JSON.parse(row.summary!) as unknown, fiscalReference: JSON.parse(row.reference!) as unknown };
      events.push({ subject: record.event.subject, payload });
      if (row.state === 'final' && record.receiptJob) events.push(record.receiptJob);
    }
    await insertOutbox(tx, events);
    return new Set(rows.map((r) => processKey(r.project, r.process_id)));
  });
}

/**
 * The device the provider last signed the project's transactions with (an outage's log names it;
 * the registers list it). Another provider's device is never it: a project that moved from the local
 * signer to fiskaly has no fiskaly TSE to register until fiskaly signed a sale.
 */
export async function lastDevice(sql: Sql, project: string, provider: string): Promise<SecurityDeviceModule | undefined> {
  const [row] = await sql<{ device: SecurityDeviceModule }[]>`
    select device from fiscal_transactions
    where project = ${project} and provider = ${provider} and device is not null and device ->> 'serialNumber' <> ''
    order by started_at desc nulls last limit 1`;
  return row?.device;
}

export interface ShopRow {
  id: string;
  name: string;
  street: string;
  zip: string;
  city: string;
  country: string;
}

/** The shops of a project: its cash registers. */
export function listShops(sql: Sql, project: string) {
  return sql<ShopRow[]>`select id, name, street, zip, city, country from shops where project = ${project} order by id`;
}
