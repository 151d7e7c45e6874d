import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { ClosingOrder } from '../../src/domain/closings/totals.js';
import type { ClosingOrigin, ClosingShop, LogFormat, TaxShare } from '../../subjects/closings.js';
import { fiscalReferenceOf, withFiscalTransaction } from '../orders/sql.js';
import type { NewClosing } from './sql.js';

/** Stored closings as they are read: one, a page of the list, their orders, the logs still to write. */

type Db = Sql | TransactionSql;

export interface ClosingRow {
  project: string;
  shop_id: string;
  sequence_number: string;
  first_order_sequence_number: string;
  last_order_sequence_number: string;
  order_count: number;
  include_all_states: boolean;
  created_at: Date;
  cut_off_at: Date;
  zone: string;
  currency: string;
  shop: ClosingShop;
  tax_shares: TaxShare[];
  tax_rates: string[];
  share_by_payment_method: Array<{ paymentMethod: string; amount: number }>;
  total: string;
  tse_failures: number;
  company: NewClosing['company'];
  origin: ClosingOrigin;
  logs: Array<{ id: string; format: string; state: 'not_present' | 'present'; kind: 'closing' | 'batch' }>;
}

const closingColumns = (db: Db) => db`
  c.project, c.shop_id, c.sequence_number, c.first_order_sequence_number, c.last_order_sequence_number, c.order_count,
  c.include_all_states, c.created_at, c.cut_off_at, c.zone, c.currency, c.shop, c.tax_shares, c.tax_rates,
  c.share_by_payment_method, c.total, c.tse_failures, c.company, c.origin,
  coalesce((select json_agg(json_build_object('id', l.id, 'format', l.format, 'state', l.state, 'kind', l.kind) order by l.kind desc, l.id)
            from closing_logs l
            where l.project = c.project and l.shop_id = c.shop_id and l.closing_sequence_number = c.sequence_number), '[]') as logs`;

export async function findClosing(db: Db, project: string, shopId: string, sequenceNumber: number): Promise<ClosingRow | undefined> {
  const [row] = await db<ClosingRow[]>`
    select ${closingColumns(db)} from closings c
    where c.project = ${project} and c.shop_id = ${shopId} and c.sequence_number = ${sequenceNumber}`;
  return row;
}

export async function countClosings(db: Db, project: string, shopId: string | undefined): Promise<number> {
  const ofShop = shopId === undefined ? db`` : db`and shop_id = ${shopId}`;
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from closings where project = ${project} ${ofShop}`;
  return row!.n;
}

/** The last closing of a part of the list: the next part starts after it. */
export interface ListPosition {
  createdAt: Date;
  shopId: string;
  sequenceNumber: number;
}

/** Newest first (creation time, then shop, then number): from `offset`, or after a position. */
export function listClosings(db: Db, scope: { project: string; shopId: string | undefined; offset: number; after: ListPosition | undefined }, limit: number) {
  const { project, shopId, after } = scope;
  const ofShop = shopId === undefined ? db`` : db`and c.shop_id = ${shopId}`;
  const afterPosition =
    after === undefined
      ? db``
      : db`and (c.created_at < ${after.createdAt}
             or (c.created_at = ${after.createdAt} and (c.shop_id > ${after.shopId} or (c.shop_id = ${after.shopId} and c.sequence_number < ${after.sequenceNumber}))))`;
  return db<ClosingRow[]>`
    select ${closingColumns(db)} from closings c where c.project = ${project} ${ofShop} ${afterPosition}
    order by c.created_at desc, c.shop_id, c.sequence_number desc offset ${after === undefined ? scope.offset : 0} limit ${limit}`;
}

/** A page of a closing's orders as stored JSON texts, by sequence number. */
export function ordersPage(db: Db, c: { project: string; shopId: string; after: number; last: number; includeAllStates: boolean }, limit: number) {
  const ofState = c.includeAllStates ? db`` : db`and state = 'final'`;
  return db<Array<{ sequence_number: string; doc: string }>>`
    select sequence_number, doc::text as doc from orders
    where project = ${c.project} and shop_id = ${c.shopId} and sequence_number > ${c.after} and sequence_number <= ${c.last} ${ofState}
    order by sequence_number limit ${limit}`;
}

export interface ProjectedOrder {
  sequence_number: string;
  id: string;
  state: string;
  started_at: string;
  finalized_at: string;
  payment_method: string;
  paid_amount: string;
  line_items: unknown[] | null;
  price: ClosingOrder['price'];
  checkout_device: { type?: string; externalID?: string } | null;
  fiscal_reference: unknown;
}

/**
 * A page of a closing's orders with the members its logs read, by sequence number. Postgres cuts
 * them out of each document (one parse, json_to_record), so the rest of it (shop, payments,
 * links, ...) never travels.
 */
export function projectedOrdersPage(db: Db, c: { project: string; shopId: string; after: number; last: number; includeAllStates: boolean }, limit: number) {
  return db<ProjectedOrder[]>`
    select o.sequence_number, x.id, x.state, x."startedAt" as started_at, x."finalizedAt" as finalized_at,
           x."paymentMethod" as payment_method, x."paidAmount" as paid_amount, x."lineItems" as line_items, x.price,
           x."checkoutDevice" as checkout_device, ${fiscalReferenceOf(db)} as fiscal_reference
    from orders o ${withFiscalTransaction(db)}, json_to_record(o.doc) as x(
      id text, state text, "startedAt" text, "finalizedAt" text, "paymentMethod" text, "paidAmount" numeric, "lineItems" json, price json,
      "checkoutDevice" json, "fiscalReference" json)
    where o.project = ${c.project} and o.shop_id = ${c.shopId} and o.sequence_number > ${c.after} and o.sequence_number <= ${c.last}
      and (${c.includeAllStates} or o.state = 'final')
    order by o.sequence_number limit ${limit}`;
}

export async function logsToWrite(db: Db, project: string, shopId: string, sequenceNumber: number) {
  return db<Array<{ id: string; format: LogFormat }>>`
    select id, format from closing_logs
    where project = ${project} and shop_id = ${shopId} and closing_sequence_number = ${sequenceNumber} and state = 'not_present'
      and kind = 'closing'
    order by id`;
}
