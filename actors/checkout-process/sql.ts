import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { CheckoutInfo } from '../../subjects/checkout.js';
import type { PaymentState, Pricing } from '../../subjects/checkout-process.js';
import type { Order } from '../../subjects/orders.js';
import type { JsonObject, PosNotes, ProcessRecord } from './state.js';

type Db = Sql | TransactionSql;

interface ProcessRow {
  project: string;
  id: string;
  shop_id: string;
  request_digest: string;
  checkout_info: CheckoutInfo;
  pricing: Pricing | null;
  payment_method: string;
  payment_information: JsonObject | null;
  payment_result: JsonObject | null;
  payment_state: PaymentState;
  approval_required: boolean;
  supervisor_approval: boolean | null;
  payment_approval: boolean | null;
  aborted: boolean;
  modified: boolean;
  processed_offline: boolean;
  pos: PosNotes;
  version: number;
  created_at: Date;
  finalized_at: Date | null;
}

export interface StoredProcess {
  record: ProcessRecord;
  requestDigest: string;
}

function toStored(row: ProcessRow): StoredProcess {
  const info = row.checkout_info;
  return {
    requestDigest: row.request_digest,
    record: {
      project: row.project,
      id: row.id,
      shopID: row.shop_id,
      checkoutInfo: info,
      pricing: row.pricing ?? { lineItems: info.lineItems, price: info.price },
      paymentMethod: row.payment_method,
      paymentInformation: row.payment_information,
      paymentResult: row.payment_result,
      paymentState: row.payment_state,
      approvalRequired: row.approval_required,
      supervisorApproval: row.supervisor_approval,
      paymentApproval: row.payment_approval,
      aborted: row.aborted,
      modified: row.modified,
      processedOffline: row.processed_offline,
      pos: row.pos,
      version: row.version,
      createdAt: row.created_at,
      finalizedAt: row.finalized_at,
    },
  };
}

// JSON parameters go as text: the driver would encode a value for a json column a second time.
const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** Inserts a new process; undefined when the id is taken (the caller compares the request). */
export async function insertProcess(db: Db, p: ProcessRecord, requestDigest: string): Promise<StoredProcess | undefined> {
  const [row] = await db<ProcessRow[]>`
    insert into checkout_processes (
      project, id, shop_id, request_digest, checkout_info, payment_method, payment_information,
      approval_required, supervisor_approval, processed_offline, created_at
    ) values (
      ${p.project}, ${p.id}, ${p.shopID}, ${requestDigest}, ${json(p.checkoutInfo)}::text::json, ${p.paymentMethod},
      ${json(p.paymentInformation)}::text::json, ${p.approvalRequired}, ${p.supervisorApproval}, ${p.processedOffline}, ${p.createdAt}
    )
    on conflict (project, id) do nothing
    returning *`;
  return row && toStored(row);
}

export async function findProcess(db: Db, project: string, id: string): Promise<StoredProcess | undefined> {
  const [row] = await db<ProcessRow[]>`select * from checkout_processes where project = ${project} and id = ${id}`;
  return row && toStored(row);
}

/** The process, locked until the transaction ends: its actor's commands run one after another. */
export async function lockProcess(tx: TransactionSql, project: string, id: string): Promise<StoredProcess | undefined> {
  const [row] = await tx<ProcessRow[]>`select * from checkout_processes where project = ${project} and id = ${id} for update`;
  return row && toStored(row);
}

export async function listProcessesOfShop(db: Db, project: string, shop: string, limit: number): Promise<ProcessRecord[]> {
  const rows = await db<ProcessRow[]>`
    select * from checkout_processes where project = ${project} and shop_id = ${shop}
    order by created_at desc, id limit ${limit}`;
  return rows.map((row) => toStored(row).record);
}

/** Writes a decided change; the pricing column only when the change set a new pricing. */
export async function updateProcess(tx: TransactionSql, p: ProcessRecord, pricingChanged: boolean): Promise<void> {
  await tx`
    update checkout_processes set
      pricing = coalesce(${pricingChanged ? json(p.pricing) : null}::text::json, pricing),
      payment_result = ${json(p.paymentResult)}::text::json,
      payment_state = ${p.paymentState},
      supervisor_approval = ${p.supervisorApproval},
      payment_approval = ${p.paymentApproval},
      aborted = ${p.aborted},
      modified = ${p.modified},
      pos = ${json(p.pos)}::text::jsonb,
      version = ${p.version},
      finalized_at = ${p.finalizedAt},
      updated_at = now()
    where project = ${p.project} and id = ${p.id}`;
}

/** The shop's next order number; the counter row stays locked until the transaction ends. */
export async function nextOrderNumber(tx: TransactionSql, project: string, shop: string): Promise<number> {
  const [row] = await tx<{ last_number: string }[]>`
    insert into order_sequences (project, shop_id, last_number) values (${project}, ${shop}, 1)
    on conflict (project, shop_id) do update set last_number = order_sequences.last_number + 1
    returning last_number`;
  return Number(row!.last_number);
}

export async function insertOrder(tx: TransactionSql, order: Order, shopExternalId: string): Promise<void> {
  await tx`
    insert into orders (project, id, shop_id, shop_external_id, sequence_number, state, finalized_at, doc)
    values (${order.project}, ${order.id}, ${order.shopID}, ${shopExternalId || null}, ${order.sequenceNumber},
            ${order.state}, ${order.finalizedAt}, ${JSON.stringify(order)}::text::json)`;
}

export interface OutboxEvent {
  subject: string;
  payload: unknown;
}

export async function insertEvents(tx: TransactionSql, events: readonly OutboxEvent[]): Promise<void> {
  if (!events.length) return;
  await tx`
    insert into outbox (subject, payload)
    select subject, payload::json
    from unnest(${events.map((e) => e.subject)}::text[], ${events.map((e) => JSON.stringify(e.payload))}::text[]) with ordinality as e(subject, payload, n)
    order by n`;
}

/** Whether any of these products must be checked by a supervisor (forceControl). */
export async function anyForceControlled(db: Db, project: string, skus: readonly string[]): Promise<boolean> {
  if (!skus.length) return false;
  const [row] = await db<{ controlled: boolean }[]>`
    select exists (
      select from unnest(${skus as string[]}::text[]) as s(sku)
      join products p on p.project = ${project} and p.sku = s.sku collate "C"
      where (p.doc ->> 'forceControl')::boolean
    ) as controlled`;
  return row!.controlled;
}
