import { minorUnitDigits } from '../../../subjects/formats/money.js';
import { wallTimeOf } from '../closings/schedule.js';
import { AlwaysListedVatKeys, countryCodeOf, paymentTypeOf, StandardVatKeys, vatKeyOf, type VatKey } from './codes.js';
import { headerOf, idOf, rowWriter, type Value } from './csv.js';
import { positionsOf, type ExportOrder } from './orders.js';
import { Tables, TaxonomyVersion, type TableKey } from './tables.js';
import { createTseRows, type Fiscalization } from './tse.js';

export type { Fiscalization } from './tse.js';

/**
 * The DSFinV-K 2.3 export of one closing, written order by order (pure: text in, text out).
 *
 * The shop's self-checkout is the register (Kasse), Z_KASSE_ID its id; the closing is the
 * Kassenabschluss (Z_NR its sequence number); each order a Beleg (BON_ID its id, BON_NR its
 * sequence number). The per-order tables are streamed: `addOrder` hands their rows to the sink as
 * it goes, so no closing is ever held whole; `finish` answers the other tables, whose sums it kept
 * on the way. Each Beleg has its row in transactions_tse, and each TSE that signed one its row in
 * tse (tse.ts).
 */

/** The tables written order by order; the writer's caller streams each into its own member of the zip. */
export const StreamedTables = ['transactions', 'transactionsVat', 'datapayment', 'transactionsTse', 'lines', 'linesVat'] as const;
export type StreamedTable = (typeof StreamedTables)[number];

export interface Address {
  name: string;
  street: string;
  zip: string;
  city: string;
  country: string;
}

export interface ExportContext {
  /** The shop id: the register. */
  shopId: string;
  /** Z_NR: the closing's sequence number. */
  closingNumber: number;
  /** Z_ERSTELLUNG: when the closing was made. */
  createdAt: Date;
  /** The zone times are written in (with their offset). */
  zone: string;
  /** Z_BUCHUNGSTAG, YYYY-MM-DD. */
  bookingDay: string;
  currency: string;
  company: Address & { taxNumber: string; vatID: string };
  location: Address;
  software: { brand: string; version: string };
}

export interface DsfinvkWriter {
  addOrder(order: ExportOrder): void;
  /** The tables that are not streamed, each as its whole text (header included). */
  finish(): Map<TableKey, string>;
}

/** Operator of a self-checkout: no person runs it, yet BEDIENER_ID must be filled. */
const Operator = { id: 'SCO', name: 'Selbstbedienung' };

/** ISO 8601 with the zone's offset, without fractions: `2026-11-22T18:00:01+01:00`. */
export function isoInZone(instant: Date, zone: string): string {
  return createZonedFormat(zone)(instant.getTime());
}

/**
 * isoInZone for many instants of one zone: the offset is looked up once per quarter hour (zones
 * change their offset only at such boundaries), not once per instant.
 */
function createZonedFormat(zone: string): (ms: number) => string {
  const offsets = new Map<number, { ms: number; text: string }>();
  return (ms) => {
    const at = Math.floor(ms / 1000) * 1000;
    const bucket = Math.floor(at / QuarterHour);
    let offset = offsets.get(bucket);
    if (!offset) {
      const minutes = Math.round((wallTimeOf(at, zone) - at) / 60_000);
      const abs = Math.abs(minutes);
      const text = `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
      offset = { ms: minutes * 60_000, text };
      if (offsets.size > 10_000) offsets.clear();
      offsets.set(bucket, offset);
    }
    return `${new Date(at + offset.ms).toISOString().slice(0, 19)}${offset.text}`;
  };
}

const QuarterHour = 15 * 60_000;

/** The number columns that hold amounts of money. */
const MoneyColumns = [
  'Z_SE_ZAHLUNGEN', 'Z_SE_BARZAHLUNGEN', 'Z_UMS_BRUTTO', 'Z_UMS_NETTO', 'Z_UST', 'Z_ZAHLART_BETRAG', 'ZAHLART_BETRAG_WAEH', 'UMS_BRUTTO',
  'BON_BRUTTO', 'BON_NETTO', 'BON_UST', 'ZAHLWAEH_BETRAG', 'BASISWAEH_BETRAG', 'POS_BRUTTO', 'POS_NETTO', 'POS_UST',
];

export function createDsfinvkWriter(ctx: ExportContext, sink: (table: StreamedTable, text: string) => void, fiscalization?: Fiscalization): DsfinvkWriter {
  const kasse = idOf(ctx.shopId, 50);
  const created = isoInZone(ctx.createdAt, ctx.zone);
  const key: Value[] = [kasse, created, ctx.closingNumber];
  const digits = minorUnitDigits(ctx.currency);
  // Amounts travel as integers of the currency's subunit; the row writers know their scale.
  const scales: Record<string, number> = { STK_BR: 5, UST_SATZ: 2 };
  for (const name of MoneyColumns) scales[name] = digits;
  const zoned = createZonedFormat(ctx.zone);
  const time = (iso: string) => zoned(Date.parse(iso));
  const tse = createTseRows(fiscalization);

  const usedVatKeys = new Map<number, VatKey>();
  const businessCases = new Map<string, { type: string; vatKey: number; gross: number; net: number; tax: number }>();
  const payments = new Map<string, { type: string; name: string; amount: number }>();
  const terminals = new Set<string>();
  let firstBon = '';
  let lastBon = '';

  for (const table of StreamedTables) sink(table, headerOf(Tables[table]));

  const writers = new Map(StreamedTables.map((table) => [table, rowWriter(Tables[table], key, scales)]));
  const row = (table: StreamedTable, values: Value[]) => sink(table, writers.get(table)!(values));

  return {
    addOrder(order) {
      const bonId = idOf(order.id, 40);
      firstBon ||= bonId;
      lastBon = bonId;
      const final = order.state === 'final';
      const terminal = order.checkoutDevice?.type === 'pos' && order.checkoutDevice.externalID ? idOf(order.checkoutDevice.externalID, 50) : '';
      if (terminal) terminals.add(terminal);
      const paid = final ? order.paidAmount : 0;
      row('transactions', [
        bonId, order.sequenceNumber, final ? 'Beleg' : 'AVBelegabbruch', '', terminal, '0', time(order.startedAt), time(order.finalizedAt),
        Operator.id, Operator.name, paid, '', '', '', '', '', '', '', '', '',
      ]);
      row('transactionsTse', [bonId, ...tse.transaction(order.fiscalReference)]);
      if (!final) return;

      const { vat, positions } = positionsOf(order, ctx.currency);
      for (const { vatKey, rate } of vat) {
        usedVatKeys.set(vatKey, vatKeyOf(rate.rate));
        row('transactionsVat', [bonId, vatKey, rate.gross, rate.net, rate.tax]);
      }
      for (const p of positions) {
        row('lines', [
          bonId, p.line, '', p.text, terminal, p.businessCase, '', '0', '0', 0, p.sku, p.gtin, '', '', p.quantity, 1, p.unit, p.unitPrice,
        ]);
        row('linesVat', [bonId, p.line, p.vatKey, p.gross, p.net, p.tax]);
        const caseKey = `${p.businessCase}\u0000${p.vatKey}`;
        const sum = businessCases.get(caseKey) ?? { type: p.businessCase, vatKey: p.vatKey, gross: 0, net: 0, tax: 0 };
        sum.gross += p.gross;
        sum.net += p.net;
        sum.tax += p.tax;
        businessCases.set(caseKey, sum);
      }
      const type = paymentTypeOf(order.paymentMethod);
      row('datapayment', [bonId, type, order.paymentMethod, ctx.currency, paid, paid]);
      const paymentKey = `${type}\u0000${order.paymentMethod}`;
      const payment = payments.get(paymentKey) ?? { type, name: order.paymentMethod, amount: 0 };
      payment.amount += paid;
      payments.set(paymentKey, payment);
    },

    finish() {
      const files = new Map<TableKey, string>();
      const table = (name: TableKey, rows: Value[][]) => {
        const t = Tables[name];
        const write = rowWriter(t, key, scales);
        files.set(name, headerOf(t) + rows.map(write).join(''));
      };
      const paymentRows = [...payments.values()].sort((a, b) => (a.type + a.name < b.type + b.name ? -1 : 1));
      const allPayments = paymentRows.reduce((sum, p) => sum + p.amount, 0);
      const cash = paymentRows.filter((p) => p.type === 'Bar').reduce((sum, p) => sum + p.amount, 0);
      const { company, location } = ctx;

      table('cashpointclosing', [[
        ctx.bookingDay, TaxonomyVersion, firstBon, lastBon, company.name, company.street, company.zip, company.city,
        countryCodeOf(company.country), company.taxNumber, company.vatID, allPayments, cash,
      ]]);
      table('location', [[location.name, location.street, location.zip, location.city, countryCodeOf(location.country), company.vatID]]);
      table('cashregister', [[ctx.software.brand, 'Self-Checkout', kasse, ctx.software.brand, ctx.software.version, ctx.currency, '0']]);
      table('slaves', [...terminals].sort().map((id) => [id, '', 'PoS', id, '', '']));
      table('pa', []);
      table('tse', tse.devices());
      const vatKeys = new Map<number, VatKey>(StandardVatKeys.filter((k) => AlwaysListedVatKeys.includes(k.key)).map((k) => [k.key, k]));
      for (const [k, v] of usedVatKeys) vatKeys.set(k, v);
      table('vat', [...vatKeys.values()].sort((a, b) => a.key - b.key).map((k) => [k.key, Math.round(k.rate * 100), k.description]));
      table('businesscases', [...businessCases.values()]
        .sort((a, b) => (a.type === b.type ? a.vatKey - b.vatKey : a.type < b.type ? -1 : 1))
        .map((c) => [c.type, '', 0, c.vatKey, c.gross, c.net, c.tax]));
      table('payment', paymentRows.map((p) => [p.type, p.name, p.amount]));
      table('cashPerCurrency', [[ctx.currency, cash]]);
      table('allocationGroups', []);
      table('references', []);
      table('itemamounts', []);
      table('subitems', []);
      return files;
    },
  };
}
