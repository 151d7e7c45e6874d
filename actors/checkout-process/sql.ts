import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { JobsKeptDays } from '../../src/messaging/jobs.js';
import type { CheckoutInfo } from '../../subjects/checkout.js';
import type { PaymentState, Pricing } from '../../subjects/checkout-process.js';
import type { Order } from '../../subjects/orders.js';
import { outboxRows, type OutboxEvent } from '../outbox/sql.js';
import type { FulfillmentRecord, JsonObject, PosNotes, ProcessRecord, SigningProvider } from './state.js';

export type { OutboxEvent };

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
  checks_performed_by: string | null;
  payment_approval: boolean | null;
  aborted: boolean;
  modified: boolean;
  processed_offline: boolean;
  pos: PosNotes;
  fulfillments: FulfillmentRecord[];
  version: number;
  created_at: Date;
  finalized_at: Date | null;
  fiscal_provider: SigningProvider | null;
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
      checksPerformedBy: row.checks_performed_by,
      paymentApproval: row.payment_approval,
      aborted: row.aborted,
      modified: row.modified,
      processedOffline: row.processed_offline,
      pos: row.pos,
      fulfillments: row.fulfillments,
      version: row.version,
      createdAt: row.created_at,
      finalizedAt: row.finalized_at,
      ...(row.fiscal_provider ? { fiscalProvider: row.fiscal_provider } : {}),
    },
  };
}

// JSON parameters go as text: the driver would encode a value for a json column a second time.
const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** What inserting a process found: whether it was stored, and the TSE provider it signs with. */
export interface InsertedProcess {
  created: boolean;
  /** null: the project chose nothing and there is no default (production): nothing was stored. */
  provider: string | null;
}

/**
 * Inserts a new process, its fulfillments (and their index rows), its events and the jobs of its
 * fulfillments in one statement; `created` false when the id is taken (the caller compares the
 * requests). The same statement reads the project's TSE provider (`defaultProvider` when it chose
 * none), stores nothing when there is none (production without a choice), records it on the
 * process, and queues the fiscal start job `fiscalStart` unless the provider is `none`: the check
 * and the job cost no round trip of their own.
 */
export async function insertProcess(
  db: Db,
  p: ProcessRecord,
  requestDigest: string,
  events: readonly OutboxEvent[],
  fiscal: { defaultProvider: string | null; start: OutboxEvent },
): Promise<InsertedProcess> {
  const fulfillmentIds = p.fulfillments.map((f) => f.id);
  const [row] = await db<{ created: boolean; provider: string | null }[]>`
    with fiscal as (
      select coalesce((select fiscalization ->> 'provider' from project_settings where project = ${p.project}), ${fiscal.defaultProvider}::text) as provider
    ), created as (
      insert into checkout_processes (
        project, id, shop_id, request_digest, checkout_info, payment_method, payment_information,
        approval_required, supervisor_approval, processed_offline, fulfillments, created_at, fiscal_provider
      )
      select
        ${p.project}, ${p.id}, ${p.shopID}, ${requestDigest}, ${json(p.checkoutInfo)}::text::json, ${p.paymentMethod},
        ${json(p.paymentInformation)}::text::json, ${p.approvalRequired}, ${p.supervisorApproval}, ${p.processedOffline},
        ${json(p.fulfillments)}::text::jsonb, ${p.createdAt}, nullif(provider, 'none')
      from fiscal where provider is not null
      on conflict (project, id) do nothing
      returning fiscal_provider
    ), indexed as (
      insert into fulfillment_index (project, id, process_id)
      select ${p.project}, f.id, ${p.id} from unnest(${fulfillmentIds}::text[]) as f(id) where exists (select from created)
    ), published as (
      insert into outbox (subject, payload, msg_id)
      select subject, payload, msg_id from (
        select subject, payload, msg_id, n from (${outboxRows(db, events)}) e where exists (select from created)
        union all
        select subject, payload, msg_id, n + ${events.length} from (${outboxRows(db, [fiscal.start])}) e
        where exists (select from created where fiscal_provider is not null)
      ) e order by n
    )
    select exists (select from created) as created, (select provider from fiscal) as provider`;
  return { created: row!.created, provider: row!.provider };
}

/** The process a fulfillment belongs to. */
export async function findProcessOfFulfillment(db: Db, project: string, fulfillmentId: string): Promise<string | undefined> {
  const [row] = await db<{ process_id: string }[]>`select process_id from fulfillment_index where project = ${project} and id = ${fulfillmentId}`;
  return row?.process_id;
}

export async function findProcess(db: Db, project: string, id: string): Promise<StoredProcess | undefined> {
  const [row] = await db<ProcessRow[]>`select * from checkout_processes where project = ${project} and id = ${id}`;
  return row && toStored(row);
}

/**
 * Work of the processes that Postgres says is not done, for a resend after JOBS was lost
 * (actors/outbox/resend.ts): the ended processes of the last JobsKeptDays whose order waits for its
 * TSE finish (with the order's state), and the processes whose fulfillments have calls queued and
 * not answered. Both read whole tables (a heal is rare): orders by their finalization time, processes
 * by a filter on their fulfillments.
 */
export async function processesWithUndoneWork(db: Db): Promise<{ unsigned: Array<{ record: ProcessRecord; state: string }>; calling: ProcessRecord[] }> {
  const unsigned = await db<Array<ProcessRow & { order_state: string }>>`
    select p.*, o.state as order_state from orders o
    join checkout_processes p on p.project = o.project and p.id = o.id
    where o.fiscal_pending and o.finalized_at > now() - ${JobsKeptDays} * interval '1 day'
      and not exists (select from fiscal_transactions t where t.project = o.project and t.process_id = o.id and t.finish_log is not null)`;
  const calling = await db<ProcessRow[]>`
    select * from checkout_processes
    where fulfillments <> '[]'::jsonb and created_at > now() - ${JobsKeptDays} * interval '1 day'
      and exists (select from jsonb_array_elements(fulfillments) f
                  where exists (select from jsonb_array_elements_text(f -> 'queued') q(call) where not (f -> 'answered') ? q.call))`;
  return { unsigned: unsigned.map((row) => ({ record: toStored(row).record, state: row.order_state })), calling: calling.map((row) => toStored(row).record) };
}

export async function listProcessesOfShop(db: Db, project: string, shop: string, limit: number): Promise<ProcessRecord[]> {
  const rows = await db<ProcessRow[]>`
    select * from checkout_processes where project = ${project} and shop_id = ${shop}
    order by created_at desc, id limit ${limit}`;
  return rows.map((row) => toStored(row).record);
}

/** The order a change finishes the process with, and its event; the statement numbers both. */
export interface FinishedOrder {
  /** With sequenceNumber 0: the statement puts the shop's next number there. */
  order: Order;
  event: OutboxEvent;
  shopExternalId: string;
}

const NumberSlot = '"sequenceNumber":0';

/** JSON text cut where the order number goes: head + number + tail. */
function aroundNumber(value: unknown): [string, string] {
  const text = JSON.stringify(value);
  // Its first occurrence is the member: the string values before it cannot hold an unescaped quote.
  const at = text.indexOf(NumberSlot);
  if (at < 0) throw new Error('the order has no sequenceNumber to fill');
  return [text.slice(0, at + NumberSlot.length - 1), text.slice(at + NumberSlot.length)];
}

/**
 * Writes a decided change in one statement, if the process is still at the version it was decided
 * on: the process row (the pricing column only when the change set a new pricing), the events, and,
 * when the change finished the process, its order with the shop's next number. The counter row of
 * the shop stays locked only for this statement, so checkouts of one shop finish one after another
 * without waiting on each other's other work. False when another writer came first.
 */
export async function writeChange(
  db: Db,
  previousVersion: number,
  p: ProcessRecord,
  pricingChanged: boolean,
  events: readonly OutboxEvent[],
  finished?: FinishedOrder,
): Promise<boolean> {
  let numbered = db``;
  let orderEvent = db``;
  if (finished) {
    const { order, event, shopExternalId } = finished;
    const [docHead, docTail] = aroundNumber(order);
    const [eventHead, eventTail] = aroundNumber(event.payload);
    numbered = db`, numbered as (
        insert into order_sequences (project, shop_id, last_number) select ${p.project}, ${p.shopID}, 1 from changed
        on conflict (project, shop_id) do update set last_number = order_sequences.last_number + 1
        returning last_number
      ), finished as (
        insert into orders (project, id, shop_id, shop_external_id, sequence_number, state, finalized_at, doc, fiscal_pending)
        select ${order.project}, ${order.id}, ${order.shopID}, ${shopExternalId || null}, last_number, ${order.state},
               ${order.finalizedAt}, (${docHead}::text || last_number || ${docTail}::text)::json, ${p.fiscalProvider !== undefined}
        from numbered
      )`;
    orderEvent = db`union all
        select ${event.subject}, (${eventHead}::text || last_number || ${eventTail}::text)::json, null, ${events.length + 1}::bigint from numbered`;
  }
  const [row] = await db<{ changed: number }[]>`
    with changed as (
      update checkout_processes set
        pricing = coalesce(${pricingChanged ? json(p.pricing) : null}::text::json, pricing),
        payment_result = ${json(p.paymentResult)}::text::json,
        payment_state = ${p.paymentState},
        supervisor_approval = ${p.supervisorApproval},
        checks_performed_by = ${p.checksPerformedBy},
        payment_approval = ${p.paymentApproval},
        aborted = ${p.aborted},
        modified = ${p.modified},
        pos = ${json(p.pos)}::text::jsonb,
        fulfillments = ${json(p.fulfillments)}::text::jsonb,
        version = ${p.version},
        finalized_at = ${p.finalizedAt},
        updated_at = now()
      where project = ${p.project} and id = ${p.id} and version = ${previousVersion}
      returning 1
    )${numbered}, published as (
      insert into outbox (subject, payload, msg_id)
      select subject, payload, msg_id from (
        select subject, payload, msg_id, n from (${outboxRows(db, events)}) e
        where exists (select from changed)
        ${orderEvent}
      ) e
      order by n
    )
    select count(*)::int as changed from changed`;
  return row!.changed === 1;
}

/**
 * Whether any of these products must be checked by a supervisor (forceControl). Each product is
 * looked up by its key (`offset 0` keeps the planner from joining the SKUs to a scan of the
 * project's products): a catalog imported since the table was last analyzed looks to the planner
 * like a project of a few products, and it read every product's document of the project for each
 * checkout (0.7 ms at 1000 products, and more the bigger the catalog).
 */
export async function anyForceControlled(db: Db, project: string, skus: readonly string[]): Promise<boolean> {
  if (!skus.length) return false;
  const [row] = await db<{ controlled: boolean }[]>`
    select exists (
      select from unnest(${skus as string[]}::text[]) as s(sku)
      cross join lateral (select p.doc from products p where p.project = ${project} and p.sku = s.sku collate "C" offset 0) p
      where (p.doc ->> 'forceControl')::boolean
    ) as controlled`;
  return row!.controlled;
}
