import { strToU8, zipSync } from 'fflate';
import t from 'tap';
import { createTotals } from '../src/domain/closings/totals.js';
import { createDsfinvkWriter, StreamedTables, type ExportContext, type Fiscalization, type StreamedTable } from '../src/domain/dsfinvk/export.js';
import { DtdFile, GdpduDtd, indexXml } from '../src/domain/dsfinvk/index-xml.js';
import type { ExportOrder } from '../src/domain/dsfinvk/orders.js';
import { TableOrder, Tables } from '../src/domain/dsfinvk/tables.js';
import { isTseFailure } from '../src/domain/fiscal/reference.js';
import type { FiscalReference } from '../subjects/fiscal.js';
import { checkTse, validateDsfinvk, type Row } from './support/dsfinvk-validator.js';
import { fiscalReferenceOf, testTse } from './support/fiscal.js';

/**
 * The TSE tables of the DSFinV-K export (tse.csv, transactions_tse.csv), written by the pure
 * writer from orders with and without fiscal references, zipped as the closing log is, and checked
 * by the auditor's checker (support/dsfinvk-validator.ts).
 */
const ctx: ExportContext = {
  shopId: 's1', closingNumber: 3, createdAt: new Date('2026-07-01T21:00:00Z'), zone: 'Europe/Berlin', bookingDay: '2026-07-01', currency: 'EUR',
  company: { name: 'Acme GmbH', street: 'Hauptstraße 1', zip: '10115', city: 'Berlin', country: 'DE', taxNumber: '12/345/67890', vatID: 'DE123456789' },
  location: { name: 'Shop 1', street: 'Torstraße 1', zip: '10119', city: 'Berlin', country: 'DE' },
  software: { brand: 'checkout-platform', version: '0.1.0' },
};

let sequence = 0;
function order(fiscalReference?: FiscalReference, state = 'final'): ExportOrder {
  sequence += 1;
  const final = state === 'final';
  return {
    id: `order-${sequence}`, sequenceNumber: sequence, state, startedAt: '2026-07-01T10:00:00.000Z', finalizedAt: '2026-07-01T10:00:03.000Z',
    paymentMethod: 'cash', paidAmount: final ? 238 : 0, price: { price: 238, taxPre: { '19': 238 }, tax: { '19': 38 }, taxNet: { '19': 200 } },
    lineItems: [{ id: 'l1', sku: 'SOAP', name: 'Spülmittel', type: 'default', amount: 2, price: 119, totalPrice: 238, taxRate: '19' }],
    ...(fiscalReference ? { fiscalReference } : {}),
  };
}

/** The export of these orders as the closing log's zip, and the checker's verdict on it. */
function exportOf(orders: ExportOrder[], fiscalization?: Fiscalization) {
  const streamed = new Map<StreamedTable, string[]>(StreamedTables.map((table) => [table, []]));
  const writer = createDsfinvkWriter(ctx, (table, text) => streamed.get(table)!.push(text), fiscalization);
  const totals = createTotals();
  for (const o of orders) {
    writer.addOrder(o);
    totals.add(o);
  }
  const rest = writer.finish();
  const files: Record<string, Uint8Array> = { 'index.xml': strToU8(indexXml({ name: 'Acme GmbH', location: 'Berlin', comment: 'DSFinV-K 2.3' }, 'test')), [DtdFile]: strToU8(GdpduDtd) };
  for (const key of TableOrder) files[Tables[key].file] = strToU8(streamed.get(key as StreamedTable)?.join('') ?? rest.get(key) ?? '');
  const sum = totals.result();
  const closing = { sequenceNumber: ctx.closingNumber, total: sum.total, taxShares: sum.taxShares, shareByPaymentMethod: sum.shareByPaymentMethod, orderCount: orders.length };
  return validateDsfinvk(zipSync(files), closing);
}

const first = testTse();
const second = testTse();
const signed = fiscalReferenceOf(first, { transactionNumber: 100, counter: 500, startedAt: 1_782_900_000 });
const alsoSigned = fiscalReferenceOf(first, { transactionNumber: 101, counter: 502, startedAt: 1_782_900_010, processData: 'AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^' });
const failed = fiscalReferenceOf(first, { transactionNumber: 102, counter: 504, startedAt: 1_782_900_020, outage: 'keine Antwort der Cloud-TSE nach 5 Versuchen' });
const otherTse = fiscalReferenceOf(second, { transactionNumber: 7, counter: 20, startedAt: 1_782_900_030 });

t.test('lists each TSE once and gives every Beleg its TSE row: signed, failed, and without TSE', async (t) => {
  sequence = 0;
  const { problems, tables } = exportOf([order(signed), order(alsoSigned, 'userAborted'), order(failed), order(), order(otherTse)]);
  t.same(problems, [], 'the checker finds nothing');

  const tse = tables['tse.csv']!;
  t.same(tse.map((r) => [r.TSE_ID, r.TSE_SERIAL]), [['1', first.serialNumber], ['2', second.serialNumber]], 'numbered in the order of first use');
  t.match(tse[0], { TSE_SIG_ALGO: 'ecdsa-plain-SHA256', TSE_ZEITFORMAT: 'unixTime', TSE_PD_ENCODING: 'UTF-8', TSE_PUBLIC_KEY: first.publicKeyBase64 });
  const base64 = first.certificate.replace(/-----[^-]+-----|\s/g, '');
  t.ok(base64.length > 1000, 'a certificate longer than one column');
  t.equal(tse[0]!.TSE_ZERTIFIKAT_I, base64.slice(0, 1000), 'its first 1000 characters');
  t.equal(tse[0]!.TSE_ZERTIFIKAT_II, base64.slice(1000), 'and the rest');

  const rows = new Map((tables['transactions_tse.csv'] as Row[]).map((r) => [r.BON_ID, r]));
  t.match(rows.get('order-1'), {
    TSE_ID: '1', TSE_TANR: '100', TSE_TA_START: '2026-07-01T10:00:00.000Z', TSE_TA_ENDE: '2026-07-01T10:00:03.000Z', TSE_TA_VORGANGSART: 'Kassenbeleg-V1',
    TSE_TA_SIGZ: '501', TSE_TA_SIG: signed.logs[1]!.signature, TSE_TA_FEHLER: '', TSE_VORGANGSDATEN: 'Beleg^7.98_2.38_0.00_0.00_0.00^10.36:Bar',
  });
  t.match(rows.get('order-2'), { TSE_ID: '1', TSE_TANR: '101', TSE_VORGANGSDATEN: 'AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^' }, 'an aborted process is signed too');
  t.match(rows.get('order-3'), {
    TSE_ID: '1', TSE_TANR: '102', TSE_TA_START: '2026-07-01T10:00:20.000Z', TSE_TA_ENDE: '', TSE_TA_SIGZ: '', TSE_TA_SIG: '',
    TSE_TA_FEHLER: 'TSE-Ausfall: keine Antwort der Cloud-TSE nach 5 Versuchen',
  }, 'a failure: no signature, the failure text');
  t.match(rows.get('order-4'), { TSE_ID: '', TSE_TANR: '', TSE_TA_SIG: '' }, 'no TSE data');
  t.match(rows.get('order-4')!.TSE_TA_FEHLER, /^Keine TSE im Einsatz/);
  t.match(rows.get('order-5'), { TSE_ID: '2', TSE_TANR: '7', TSE_TA_SIGZ: '21' });
});

t.test('writes the reason a project gave for provider none where an order has no TSE data', async (t) => {
  sequence = 0;
  const reason = 'Kasse ist nach § 146a Abs. 1 AO nicht aufzeichnungspflichtig (Warenautomat)';
  const { problems, tables } = exportOf([order(), order()], { provider: 'none', reason });
  t.same(problems, []);
  t.same(tables['tse.csv'], [], 'no TSE listed');
  t.same(tables['transactions_tse.csv']!.map((r) => r.TSE_TA_FEHLER), Array(2).fill(`Keine TSE im Einsatz (Fiskalisierung: none): ${reason}`));
});

t.test('says an order lacks TSE data, not that no TSE is in use, when a TSE is configured', async (t) => {
  sequence = 0;
  const { problems, tables } = exportOf([order(signed), order()], { provider: 'fiskaly' });
  t.same(problems, []);
  t.match(tables['transactions_tse.csv']![1]!.TSE_TA_FEHLER, /^Keine TSE-Daten zu diesem Vorgang/);
});

t.test('the checker finds a TSE row that names no listed TSE, a counter used twice and a Beleg without its TSE row', async (t) => {
  sequence = 0;
  const good = exportOf([order(signed), order(otherTse)]);
  const problemsOf = (mutate: (tables: Record<string, Row[]>) => void) => {
    const tables = structuredClone(good.tables);
    mutate(tables);
    // The TSE checks alone, on tables changed after writing.
    const problems: string[] = [];
    checkTse(tables, problems);
    return problems;
  };
  const finds = (problems: string[], pattern: RegExp) => t.ok(problems.some((p) => pattern.test(p)), `${pattern} in ${JSON.stringify(problems)}`);
  finds(problemsOf((x) => (x['transactions_tse.csv']![1]!.TSE_ID = '9')), /TSE_ID 9 is not in tse.csv/);
  finds(problemsOf((x) => Object.assign(x['transactions_tse.csv']![1]!, { TSE_ID: '1', TSE_TA_SIGZ: '501' })), /signature counter 501 of TSE 1 used twice/);
  finds(problemsOf((x) => x['transactions_tse.csv']!.pop()), /BON_ID order-2: 0 records in transactions_tse.csv/);
  finds(problemsOf((x) => (x['transactions_tse.csv']![0]!.TSE_TA_FEHLER = 'TSE-Ausfall: x')), /a signature beside a TSE failure/);
});

t.test('counts an order as a TSE failure when its finish log records an error', async (t) => {
  t.equal(isTseFailure(failed), true);
  t.equal(isTseFailure(signed), false);
  t.equal(isTseFailure(undefined), false);
});
