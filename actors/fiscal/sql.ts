import type { Sql } from '../../src/infra/postgres.js';
import type { FiscalizationSettings, FiscalLogEntry, FiscalReference, SecurityDeviceModule } from '../../subjects/fiscal.js';
import type { OutboxEvent } from '../outbox/sql.js';

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

/** The process's provider and version, the project's TSE settings and what is recorded of the transaction, in one read. */
export async function readTransaction(sql: Sql, project: string, processId: string): Promise<TransactionState | undefined> {
  const [row] = await sql<TransactionState[]>`
    select p.fiscal_provider, p.version, s.fiscalization, t.device, t.transaction_number::int as transaction_number, t.start_log, t.finish_log
    from checkout_processes p
    left join project_settings s on s.project = p.project
    left join fiscal_transactions t on t.project = p.project and t.process_id = p.id
    where p.project = ${project} and p.id = ${processId}`;
  return row;
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

/** Records a signed start, unless one is recorded already. */
export async function recordStart(sql: Sql, r: StartRecord): Promise<void> {
  await sql`
    insert into fiscal_transactions (project, process_id, shop_id, provider, device, client_serial, transaction_number, start_log, started_at)
    values (${r.project}, ${r.processId}, ${r.shopId}, ${r.provider}, ${JSON.stringify(r.device)}::text::jsonb, ${r.clientSerial},
            ${r.transactionNumber}, ${JSON.stringify(r.log)}::text::jsonb, now())
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
  /** The receipt job of a final order, queued with the signature. */
  receiptJob: OutboxEvent;
}

/**
 * Records a finished transaction, once: the transaction row, the order's fiscalReference (the
 * order document gets it as its last member, its text otherwise untouched), and the `fiscalized`
 * event and a final order's receipt job in the outbox, all in one statement. False when the finish
 * was recorded already (a repeated job): then nothing is written.
 */
export async function recordFinish(sql: Sql, r: FinishRecord): Promise<boolean> {
  // The finish is the last log; a transaction the TSE never started has no other.
  const finish = r.reference.logs.at(-1)!;
  const start = r.reference.logs.length > 1 ? r.reference.logs[0] : undefined;
  const reference = JSON.stringify(r.reference);
  const [row] = await sql<{ recorded: boolean }[]>`
    with tx as (
      insert into fiscal_transactions (project, process_id, shop_id, provider, device, client_serial, transaction_number, start_log, finish_log, started_at, finished_at)
      values (${r.project}, ${r.processId}, ${r.shopId}, ${r.provider}, ${JSON.stringify(r.reference.securityDeviceModule)}::text::jsonb,
              ${r.reference.clientSerialNumber}, ${r.reference.transactionNumber}, ${start ? JSON.stringify(start) : null}::text::jsonb,
              ${JSON.stringify(finish)}::text::jsonb, now(), now())
      on conflict (project, process_id) do update
        set device = excluded.device, client_serial = excluded.client_serial, transaction_number = excluded.transaction_number,
            start_log = coalesce(fiscal_transactions.start_log, excluded.start_log), finish_log = excluded.finish_log, finished_at = excluded.finished_at
        where fiscal_transactions.finish_log is null
      returning 1
    ), ordered as (
      update orders set doc = (left(doc::text, -1) || ',"fiscalReference":' || ${reference}::text || '}')::json, fiscal_pending = false
      where project = ${r.project} and id = ${r.processId} and fiscal_pending and exists (select from tx)
      returning state, json_build_object('id', id, 'state', state, 'shopID', shop_id, 'sequenceNumber', sequence_number,
        'finalizedAt', doc -> 'finalizedAt', 'paidAmount', doc -> 'paidAmount', 'currency', doc -> 'currency', 'links', doc -> 'links') as summary
    ), published as (
      insert into outbox (subject, payload, msg_id)
      select subject, payload, msg_id from (
        select 1 as n, ${r.event.subject}::text as subject,
               (left(${JSON.stringify(r.event.envelope)}::text, -1) || ',"order":' || summary::text || ',"fiscalReference":' || ${reference}::text || '}')::json as payload,
               null::text as msg_id
        from ordered
        union all
        select 2, ${r.receiptJob.subject}::text, ${JSON.stringify(r.receiptJob.payload)}::text::json, ${r.receiptJob.msgId ?? null}::text
        from ordered where state = 'final'
      ) e order by n
    )
    select exists (select from tx) as recorded`;
  return row!.recorded;
}

/** The device the project's transactions were last signed by (an outage's log names it). */
export async function lastDevice(sql: Sql, project: string): Promise<SecurityDeviceModule | undefined> {
  const [row] = await sql<{ device: SecurityDeviceModule }[]>`
    select device from fiscal_transactions where project = ${project} and device is not null order by started_at desc nulls last limit 1`;
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
