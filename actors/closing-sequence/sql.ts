import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { ClosingOrder } from '../../src/domain/closings/totals.js';
import type { ClosingOrigin, ClosingShop, LogFormat, TaxShare } from '../../subjects/closings.js';
import type { CompanyAddress } from '../../subjects/settings.js';
import { fiscalReferenceOf, withFiscalTransaction } from '../orders/sql.js';
import { insertOutbox } from '../outbox/sql.js';

/**
 * The statements of making a closing: the shop's sequence (locked), the range of orders it takes
 * and their sums, the closing and its logs. Report jobs: job-sql.ts; reading closings: read-sql.ts.
 */

type Db = Sql | TransactionSql;

export interface SequenceRow {
  last_number: string;
  last_order_sequence_number: string;
  /** The last order a batch of the open closing appended (0 or below last_order_sequence_number: none). */
  batched_order_sequence_number: string;
}

/**
 * Locks the shop's closing sequence for the transaction (creating it at 0 first): the one writer
 * of the shop's closings, whichever worker process it runs in.
 */
export async function lockSequence(tx: TransactionSql, project: string, shopId: string): Promise<SequenceRow> {
  await tx`insert into closing_sequences (project, shop_id) values (${project}, ${shopId}) on conflict do nothing`;
  const [row] = await tx<SequenceRow[]>`
    select last_number, last_order_sequence_number, batched_order_sequence_number from closing_sequences
    where project = ${project} and shop_id = ${shopId} for update`;
  return row!;
}

export async function closingOfTrigger(db: Db, key: string): Promise<{ shop_id: string; sequence_number: string } | undefined> {
  const [row] = await db<{ shop_id: string; sequence_number: string }[]>`select shop_id, sequence_number from closings where trigger_key = ${key}`;
  return row;
}

/** The formats of a shop's schedules, in the order of the schedules, each once. */
export async function scheduleFormatsOfShop(db: Db, project: string, shopId: string): Promise<{ formats: LogFormat[]; location: string | null }> {
  const rows = await db<{ formats: LogFormat[]; location: string }[]>`
    select formats, location from closing_schedules where project = ${project} and shop_id = ${shopId} order by id`;
  return { formats: [...new Set(rows.flatMap((r) => r.formats))], location: rows[0]?.location ?? null };
}

/** The shop as the last order of the range wrote it (for a shop that was deleted since). */
export async function shopOfOrder(db: Db, project: string, shopId: string, sequenceNumber: number): Promise<ClosingShop | undefined> {
  const [row] = await db<{ shop: ClosingShop | null }[]>`
    select doc -> 'shop' as shop from orders where project = ${project} and shop_id = ${shopId} and sequence_number = ${sequenceNumber}`;
  return row?.shop ?? undefined;
}

/**
 * Where the range after `after` ends: the longest prefix of the shop's committed orders after it
 * whose orders were finalized at or before the cut-off. Orders are numbered in commit order, so
 * the committed ones are always 1..k: nothing is skipped.
 */
export async function rangeEnd(db: Db, project: string, shopId: string, after: number, cutOff: Date): Promise<number> {
  const [row] = await db<{ last: string | null; late: string | null }[]>`
    select
      (select max(sequence_number) from orders where project = ${project} and shop_id = ${shopId}) as last,
      (select min(sequence_number) from orders
       where project = ${project} and shop_id = ${shopId} and sequence_number > ${after} and finalized_at > ${cutOff}) as late`;
  const end = row!.late !== null ? Number(row!.late) - 1 : Number(row!.last ?? 0);
  return Math.max(after, end);
}

/**
 * Whether the order's fiscal reference (fiscalReferenceOf: `t` and the document's `x`) records a
 * failure in its finish log (the last entry): domain/fiscal.ts isTseFailure, in SQL.
 */
const tseFailed = (db: Db) => db`coalesce(${fiscalReferenceOf(db)} -> 'logs' -> -1 ->> 'error', '') <> ''`;

/** The members of the range's final orders a closing sums, each document parsed once (no jsonb is built). */
function finalOrderFigures(db: Db, project: string, shopId: string, after: number, last: number) {
  return db`
    select o.sequence_number, x."paidAmount" as paid, x."paymentMethod" as method, x.price, x."lineItems" as line_items,
      x.price -> 'taxPre' is not null and json_typeof(x.price -> 'taxPre') = 'object' and x.price -> 'tax' is not null
      and (select coalesce(sum(t.value::numeric), 0) from json_each_text(x.price -> 'taxPre') t) = (x.price ->> 'price')::numeric as complete,
      ${tseFailed(db)} as tse_failed
    from orders o ${withFiscalTransaction(db)}, json_to_record(o.doc) as x("paidAmount" numeric, "paymentMethod" text, price json, "lineItems" json, "fiscalReference" json)
    where o.project = ${project} and o.shop_id = ${shopId} and o.sequence_number > ${after} and o.sequence_number <= ${last}
      and o.state = 'final'`;
}

export interface RangeSums {
  count: number;
  rates: Array<{ rate: string; gross: number; net: number; tax: number }>;
  payments: Array<{ paymentMethod: string; amount: number }>;
  /** How many orders the sums leave out (incompleteOrders reads them). */
  incomplete: number;
  /** How many of the final orders the TSE could not sign. */
  tseFailures: number;
}

/**
 * Sums of the range's final orders whose pricing has complete tax figures (taxPre and tax, adding
 * up to the price), per rate and per payment method, worked out by Postgres as closings/totals.ts
 * would: net is taxNet, else gross − tax. The other orders (rare) are counted, for the caller to
 * read them (incompleteOrders) and work them out one by one.
 */
export async function completeSums(db: Db, project: string, shopId: string, after: number, last: number): Promise<RangeSums> {
  const [row] = await db<Array<{ count: number; rates: RangeSums['rates'] | null; payments: RangeSums['payments'] | null; incomplete: number; tse_failures: number }>>`
    with o as materialized (${finalOrderFigures(db, project, shopId, after, last)}),
    complete as (select * from o where complete)
    select
      (select count(*)::int from o) as count,
      (select json_agg(json_build_object('rate', rate, 'gross', gross, 'net', net, 'tax', tax)) from (
        select p.key as rate, sum(p.value::numeric)::float8 as gross,
               sum(coalesce((c.price -> 'tax' ->> p.key)::numeric, 0))::float8 as tax,
               sum(coalesce((c.price -> 'taxNet' ->> p.key)::numeric, p.value::numeric - coalesce((c.price -> 'tax' ->> p.key)::numeric, 0)))::float8 as net
        from complete c, json_each_text(c.price -> 'taxPre') p group by p.key) r) as rates,
      (select json_agg(json_build_object('paymentMethod', method, 'amount', amount)) from (
        select method, sum(paid)::float8 as amount from complete group by method) m) as payments,
      (select count(*)::int from o where not complete) as incomplete,
      (select count(*)::int from o where tse_failed) as tse_failures`;
  return { count: row!.count, rates: row!.rates ?? [], payments: row!.payments ?? [], incomplete: row!.incomplete, tseFailures: row!.tse_failures };
}

/** A page of the range's final orders that completeSums left out, after `after`, by sequence number. */
export function incompleteOrders(db: Db, project: string, shopId: string, after: number, last: number, limit: number) {
  return db<Array<{ sequence_number: string; paid: string; method: string; price: ClosingOrder['price']; line_items: ClosingOrder['lineItems'] | null }>>`
    select sequence_number, paid, method, price, line_items from (${finalOrderFigures(db, project, shopId, after, last)}) o
    where not complete order by sequence_number limit ${limit}`;
}

/** How many orders of the range are of a state other than final, and how many of them the TSE could not sign. */
export async function countNonFinal(db: Db, project: string, shopId: string, after: number, last: number): Promise<{ count: number; tseFailures: number }> {
  const [row] = await db<{ n: number; failures: number }[]>`
    select count(*)::int as n, (count(*) filter (where ${tseFailed(db)}))::int as failures
    from orders o ${withFiscalTransaction(db)}, json_to_record(o.doc) as x("fiscalReference" json)
    where o.project = ${project} and o.shop_id = ${shopId} and o.sequence_number > ${after} and o.sequence_number <= ${last} and o.state <> 'final'`;
  return { count: row!.n, tseFailures: row!.failures };
}

export interface NewClosing {
  project: string;
  shopId: string;
  sequenceNumber: number;
  firstOrder: number;
  lastOrder: number;
  orderCount: number;
  includeAllStates: boolean;
  createdAt: Date;
  cutOffAt: Date;
  zone: string;
  currency: string;
  shop: ClosingShop;
  taxShares: TaxShare[];
  taxRates: string[];
  shareByPaymentMethod: Array<{ paymentMethod: string; amount: number }>;
  total: number;
  /** Orders it lists whose finish log records a TSE failure. */
  tseFailures: number;
  company: { companyName: string; taxNumber: string; vatID: string; companyAdress: CompanyAddress };
  origin: ClosingOrigin;
  triggerKey: string | null;
  jobId: string | null;
  formats: readonly LogFormat[];
}

const json = (value: unknown) => JSON.stringify(value);

/** Stores a closing, its logs (not_present) and moves the shop's sequence; answers the logs. */
export async function insertClosing(tx: TransactionSql, c: NewClosing): Promise<Array<{ id: string; format: string; state: 'not_present' | 'present'; kind: 'closing' | 'batch' }>> {
  await tx`
    insert into closings (
      project, shop_id, sequence_number, first_order_sequence_number, last_order_sequence_number, order_count,
      include_all_states, created_at, cut_off_at, zone, currency, shop, tax_shares, tax_rates, share_by_payment_method, total,
      tse_failures, company, origin, trigger_key, job_id
    ) values (
      ${c.project}, ${c.shopId}, ${c.sequenceNumber}, ${c.firstOrder}, ${c.lastOrder}, ${c.orderCount},
      ${c.includeAllStates}, ${c.createdAt}, ${c.cutOffAt}, ${c.zone}, ${c.currency}, ${json(c.shop)}::text::jsonb, ${json(c.taxShares)}::text::jsonb,
      ${c.taxRates}, ${json(c.shareByPaymentMethod)}::text::jsonb, ${c.total}, ${c.tseFailures}, ${json(c.company)}::text::jsonb, ${json(c.origin)}::text::jsonb,
      ${c.triggerKey}, ${c.jobId}
    )`;
  await tx`
    update closing_sequences set last_number = ${c.sequenceNumber}, last_order_sequence_number = ${c.lastOrder}
    where project = ${c.project} and shop_id = ${c.shopId}`;
  // The batch logs the day's batches wrote are the closing's too (listed after its own).
  return tx<Array<{ id: string; format: string; state: 'not_present' | 'present'; kind: 'closing' | 'batch' }>>`
    with made as (
      insert into closing_logs (project, shop_id, closing_sequence_number, format)
      select ${c.project}, ${c.shopId}, ${c.sequenceNumber}, f from unnest(${c.formats as string[]}::text[]) with ordinality as u(f, n) order by n
      returning id, format, state, kind
    )
    select id, format, state, kind from made
    union all
    select id, format, state, kind from closing_logs
    where project = ${c.project} and shop_id = ${c.shopId} and closing_sequence_number = ${c.sequenceNumber} and kind = 'batch'
    order by kind desc, id`;
}

export { insertOutbox };
