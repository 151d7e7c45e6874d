import { strToU8, unzipSync, zipSync } from 'fflate';
import t from 'tap';
import { createScheduleTrigger } from '../actors/closing-schedules/trigger.js';
import { createLogger } from '../src/logger.js';
import { p, seedCheckout } from './support/checkout.js';
import { checkoutIn, closingTokens, closingWithLogs, downloadLog, insertOrder, orderDocument, runJob } from './support/closing.js';
import { validateDsfinvk, type Row, type Validation } from './support/dsfinvk-validator.js';
import { fiscalReferenceOf, testTse } from './support/fiscal.js';
import { startTestService } from './support/service.js';

/**
 * The DSFinV-K export of real closings (checkouts over HTTP, plus orders shaped like the checkout's
 * for line types it does not make yet), checked as an auditor's checker would.
 */
const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
const fx = await seedCheckout(svc);
const tokens = await closingTokens(svc);
const admin = await svc.token(['projectsWrite', 'productsWrite', 'pricingWrite']);
const settings = {
  currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard', 'creditCardVisa'],
  companyName: 'Acme Lebensmittel GmbH & Co. KG', taxNumber: '12/345/67890', vatID: 'DE123456789',
  companyAdress: { street: 'Hauptstraße 1', zip: '10115', city: 'Berlin', country: 'DE' },
  // The sales over HTTP are not signed: what an export without a TSE says (the orders inserted
  // with fiscal references below show the TSE tables filled).
  fiscalization: { provider: 'none', reason: 'Testkasse ohne TSE' },
};
await svc.request('PUT', `${p}/settings`, { token: admin, body: settings });
const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
await svc.request('POST', `${p}/products/_batch`, {
  token: admin,
  ...ndjson([
    { sku: 'COLA', name: 'Cola 0,5 l', taxCategory: 'normal', depositProduct: 'PFAND25', codes: [{ code: '4000000000017' }] },
    { sku: 'PFAND25', name: 'Pfand 0,25', taxCategory: 'normal' },
  ]),
});
await svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson([
    { sku: 'COLA', category: 'default', prices: [{ price: '1.29', currency: 'EUR', tier: 'list' }] },
    { sku: 'PFAND25', category: 'default', prices: [{ price: '0.25', currency: 'EUR', tier: 'list' }] },
  ]),
});

async function exportOf(seq: number): Promise<{ closing: any; zip: Uint8Array; validation: Validation }> {
  const closing = await closingWithLogs(svc, tokens.read, 's1', seq);
  const download = await downloadLog(svc, tokens.read, closing.links.dsfinvk_2023_03.href);
  if (download.status !== 200) throw new Error(`download failed: ${download.status}`);
  return { closing, zip: download.bytes, validation: validateDsfinvk(download.bytes, closing) };
}

// The first closing: a schedule with every state, through the trigger.
await checkoutIn(svc, fx, 's1', 'successful', { items: [{ sku: 'WATER', amount: 2 }, { sku: 'BREAD', amount: 1 }] });
await checkoutIn(svc, fx, 's1', 'successful', { items: [{ sku: 'COLA', amount: 2 }], paymentMethod: 'girocard' });
await checkoutIn(svc, fx, 's1', 'failed');
await checkoutIn(svc, fx, 's1', 'aborted');
const seeded = [
  orderDocument({
    shop: 's1',
    lines: [
      { type: 'default', sku: 'WATER', name: 'Wasser', amount: 3, price: 99, taxRate: '19', scannedCode: '4000000000024' },
      { type: 'promotion', sku: '', name: '3 für 2,50', amount: 1, price: -47, taxRate: '19' },
      { type: 'coupon', sku: '', name: 'Coupon ohne Betrag', amount: 1, price: 0, taxRate: '19' },
      { type: 'default', sku: 'CHEESE', name: 'Käse "Gouda"; 48 % Fett\nam Stück', amount: 1, price: 359, taxRate: '7', weight: 240, weightUnit: 'g' },
    ],
    paymentMethod: 'cash',
  }),
  // A pricing update without tax figures, paid by card.
  orderDocument({
    shop: 's1',
    lines: [{ type: 'default', sku: 'BREAD', name: 'Brot', amount: 2, price: 249, taxRate: '7' }],
    price: { price: 498 },
    paymentMethod: 'creditCardVisa',
  }),
  // Rates beside 19 and 7, and figures that do not add up to the price.
  orderDocument({
    shop: 's1',
    lines: [{ type: 'default', sku: 'FARM', name: 'Hofladen', amount: 1, price: 1000, taxRate: '5.5' }],
    price: { price: 1100, taxPre: { '5.5': 1000 }, tax: { '5.5': 52 }, taxNet: { '5.5': 948 } },
  }),
];
for (const order of seeded) await insertOrder(svc.sql, order);
const scheduleRes = await svc.request('POST', `${p}/closings/schedules`, {
  token: tokens.write,
  body: { shop: 's1', days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'], hour: 23, location: 'Europe/Berlin', includeAllStates: true, formats: ['dsfinvk_2023_03', 'aggregated_receipts'] },
});
const trigger = createScheduleTrigger({ sql: svc.sql, log: createLogger({ level: 'silent' }) });
const claimed = await trigger.tick(new Date(Date.now() + 2 * 86_400_000));
if (claimed.length !== 1) throw new Error(`the schedule ${scheduleRes.text} did not fire: ${JSON.stringify(claimed)}`);
const first = await exportOf(1);

t.test('the export of a closing passes every check of an auditor\'s checker', async (t) => {
  t.same(first.validation.problems, [], 'no problem found');
  t.equal(first.closing.orderCount, 7, 'every state: 5 final, 2 not');
  t.same(Object.keys(first.validation.tables).length, 20, 'all 20 tables');
  t.ok(first.validation.files.includes('gdpdu-01-09-2004.dtd'));
});

t.test('each order is a Beleg: lines as Umsatz, Pfand and Rabatt, payments by type, aborted orders as Belegabbruch', async (t) => {
  const tables = first.validation.tables;
  const receipts = tables['transactions.csv']!;
  t.same(receipts.map((r) => r.BON_NR), ['1', '2', '3', '4', '5', '6', '7'], 'BON_NR: the order numbers');
  t.same(receipts.map((r) => r.BON_TYP), ['Beleg', 'Beleg', 'AVBelegabbruch', 'AVBelegabbruch', 'Beleg', 'Beleg', 'Beleg']);
  t.same(receipts.filter((r) => r.BON_TYP === 'AVBelegabbruch').map((r) => r.UMS_BRUTTO), ['0,00', '0,00'], 'aborted and failed orders paid nothing');
  const lines = tables['lines.csv']!;
  const types = (bonNr: string) => {
    const bon = receipts.find((r) => r.BON_NR === bonNr)!.BON_ID;
    return lines.filter((l) => l.BON_ID === bon);
  };
  t.same(types('2').map((l) => [l.GV_TYP, l.ARTIKELTEXT]), [['Umsatz', 'Cola 0,5 l'], ['Pfand', 'Pfand 0,25']], 'the deposit line is Pfand');
  const promoted = types('5');
  t.same(promoted.map((l) => [l.POS_ZEILE, l.GV_TYP]), [['1', 'Umsatz'], ['2', 'Rabatt'], ['4', 'Umsatz']], 'the discount is Rabatt; the coupon without amount is no position');
  const discount = tables['lines_vat.csv']!.find((l) => l.BON_ID === promoted[1]!.BON_ID && l.POS_ZEILE === '2')!;
  t.match(discount, { UST_SCHLUESSEL: '1', POS_BRUTTO: '-0,47000' }, 'a negative amount');
  t.equal(promoted[2]!.ARTIKELTEXT, 'Käse "Gouda"; 48 % Fett am Stück', 'text with quotes and ; kept, its line break a space');
  t.match(promoted[2], { MENGE: '240,000', EINHEIT: 'g' });
  t.equal(promoted[0]!.GTIN, '4000000000024');
  const payments = tables['datapayment.csv']!.map((d) => [d.ZAHLART_TYP, d.ZAHLART_NAME]);
  t.same(payments, [['Bar', 'cash'], ['ECKarte', 'girocard'], ['Bar', 'cash'], ['Kreditkarte', 'creditCardVisa'], ['Bar', 'cash']]);
  const vat = tables['vat.csv']!.map((v) => [v.UST_SCHLUESSEL, v.UST_SATZ]);
  t.same(vat, [['1', '19,00'], ['2', '7,00'], ['4', '5,50'], ['5', '0,00'], ['6', '0,00']], 'the standard keys, and 5.5 % as key 4');
  const unknownRate = tables['transactions_vat.csv']!.filter((v) => v.UST_SCHLUESSEL === '5');
  t.same(unknownRate.map((v) => v.BON_BRUTTO), ['1,00000'], 'what the rates leave of a price has no known rate');
});

t.test('the register is the shop, with the company data of the settings and no TSE', async (t) => {
  const tables = first.validation.tables;
  const closingRow = tables['cashpointclosing.csv']![0]!;
  t.match(closingRow, {
    Z_KASSE_ID: 's1', Z_NR: '1', TAXONOMIE_VERSION: '2.3', NAME: 'Acme Lebensmittel GmbH & Co. KG', STRASSE: 'Hauptstraße 1', PLZ: '10115',
    ORT: 'Berlin', LAND: 'DEU', STNR: '12/345/67890', USTID: 'DE123456789',
  });
  t.equal(closingRow.Z_SE_ZAHLUNGEN, `${(first.closing.total / 100).toFixed(2).replace('.', ',')}`);
  t.match(tables['location.csv']![0], { LOC_NAME: 'Shop 1', LOC_STRASSE: 'Torstraße 1', LOC_ORT: 'Berlin' });
  t.match(tables['cashregister.csv']![0], { KASSE_SERIENNR: 's1', KASSE_BASISWAEH_CODE: 'EUR', KEINE_UST_ZUORDNUNG: '0' });
  t.same(tables['tse.csv'], [], 'no TSE is listed');
  const tse = tables['transactions_tse.csv']!;
  t.equal(tse.length, 7, 'one record per Beleg');
  t.ok(tse.every((r: Row) => r.TSE_ID === '' && r.TSE_TA_SIG === '' && r.TSE_TA_FEHLER!.startsWith('Keine TSE')), 'no signature; the failure column says why');
  t.ok(tse.every((r: Row) => r.TSE_TA_FEHLER!.includes('Testkasse ohne TSE')), "with the reason the project gave for signing nothing");
});

t.test('the next closing is the next Z_NR of the same register, and passes the checks too', async (t) => {
  await checkoutIn(svc, fx, 's1', 'successful', { items: [{ sku: 'COLA', amount: 1 }, { sku: 'BREAD', amount: 3 }], paymentMethod: 'girocard' });
  const job = await runJob(svc, tokens, { shopID: 's1', formats: ['dsfinvk_2023_03'] });
  const second = await exportOf(job.sequenceNumber);
  t.same(second.validation.problems, []);
  const row = second.validation.tables['cashpointclosing.csv']![0]!;
  const firstRow = first.validation.tables['cashpointclosing.csv']![0]!;
  t.equal(row.Z_KASSE_ID, firstRow.Z_KASSE_ID);
  t.equal(Number(row.Z_NR), Number(firstRow.Z_NR) + 1, 'consecutive');
  t.same(second.validation.tables['transactions.csv']!.map((r) => r.BON_NR), ['8'], 'only the new order');
});

t.test('an empty closing is a valid export too', async (t) => {
  const job = await runJob(svc, tokens, { shopID: 's1', formats: ['dsfinvk_2023_03'] });
  const empty = await exportOf(job.sequenceNumber);
  t.same(empty.validation.problems, []);
  t.same(empty.validation.tables['transactions.csv'], []);
  t.match(empty.validation.tables['cashpointclosing.csv']![0], { Z_START_ID: '', Z_ENDE_ID: '', Z_SE_ZAHLUNGEN: '0,00' });
});

t.test('the checker finds a tampered export', async (t) => {
  const files = unzipSync(first.zip);
  const lines = new TextDecoder().decode(files['lines_vat.csv']).split('\r\n');
  lines[1] = lines[1]!.replace(/;(-?\d+),(\d+);/, (_m, whole: string, fraction: string) => `;${Number(whole) + 1},${fraction};`);
  const tampered = zipSync({ ...files, 'lines_vat.csv': strToU8(lines.join('\r\n')) });
  const found = validateDsfinvk(tampered, first.closing).problems;
  t.ok(found.length > 0, `found: ${found.slice(0, 3).join('; ')}`);
  const withoutFile = { ...files };
  delete withoutFile['subitems.csv'];
  t.ok(validateDsfinvk(zipSync(withoutFile), first.closing).problems.some((m) => m.includes('subitems.csv')), 'a missing file');
});

t.test('orders with fiscal references: their TSE in tse.csv, their signatures and failures in transactions_tse.csv, the failures counted on the closing', async (t) => {
  const tse = testTse();
  const at = Math.floor(Date.now() / 1000) - 60;
  const lines = [{ type: 'default', sku: 'WATER', name: 'Wasser', amount: 1, price: 99, taxRate: '19' }];
  const seed = async (fiscalReference?: object, state = 'final') => {
    const o = orderDocument({ shop: 's1', lines, state });
    if (fiscalReference) o.doc.fiscalReference = fiscalReference;
    await insertOrder(svc.sql, o);
    return o.id;
  };
  const signed = await seed(fiscalReferenceOf(tse, { transactionNumber: 1, counter: 1, startedAt: at }));
  const aborted = await seed(fiscalReferenceOf(tse, { transactionNumber: 2, counter: 3, startedAt: at + 1, processData: 'AVBelegabbruch^0.00_0.00_0.00_0.00_0.00^' }), 'userAborted');
  const failed = await seed(fiscalReferenceOf(tse, { transactionNumber: 3, counter: 5, startedAt: at + 2, outage: 'Zeitüberschreitung' }));
  const unsigned = await seed();
  const job = await runJob(svc, tokens, { shopID: 's1', formats: ['dsfinvk_2023_03'] });
  const { closing, validation } = await exportOf(job.sequenceNumber);
  t.same(validation.problems, [], 'the checker, TSE tables included, finds nothing');
  t.equal(closing.tseFailures, 1, 'one order the TSE could not sign');
  t.same(validation.tables['tse.csv']!.map((r) => [r.TSE_ID, r.TSE_SERIAL, r.TSE_PUBLIC_KEY]), [['1', tse.serialNumber, tse.publicKeyBase64]]);
  const rows = new Map(validation.tables['transactions_tse.csv']!.map((r) => [r.BON_ID, r]));
  t.same([...rows.keys()].sort(), [signed, failed, unsigned].sort(), 'a report job lists final orders only, each with its row');
  t.notOk(rows.has(aborted));
  t.match(rows.get(signed), { TSE_ID: '1', TSE_TANR: '1', TSE_TA_SIGZ: '2', TSE_TA_FEHLER: '' });
  t.match(rows.get(failed), { TSE_ID: '1', TSE_TA_SIG: '', TSE_TA_FEHLER: 'TSE-Ausfall: Zeitüberschreitung' });
  t.match(rows.get(unsigned), { TSE_ID: '', TSE_TA_FEHLER: /^Keine TSE/ });
});

t.test('control characters the API stores in names are spaces in the export: index.xml stays XML, every CSV field is free of them', async (t) => {
  const put = await svc.request('PUT', `${p}/settings`, {
    token: admin,
    body: { ...settings, companyName: 'Acme\u0001Lebensmittel\u001b\u001bGmbH', companyAdress: { ...settings.companyAdress, street: 'Hauptstraße\u00071' } },
  });
  t.equal(put.status, 200, 'the API takes them (only U+0000 cannot be stored)');
  t.teardown(() => svc.request('PUT', `${p}/settings`, { token: admin, body: settings }));
  const order = orderDocument({ shop: 's1', lines: [{ type: 'default', sku: 'TEA', name: 'Grüner\bTee\u007f\u0085\tlose\r\n100 g', amount: 1, price: 450, taxRate: '7' }] });
  await insertOrder(svc.sql, order);
  const job = await runJob(svc, tokens, { shopID: 's1', formats: ['dsfinvk_2023_03'] });
  const { zip, validation } = await exportOf(job.sequenceNumber);
  t.same(validation.problems, [], 'no character XML 1.0 refuses in index.xml, no control character in a CSV field');
  const xml = new TextDecoder().decode(unzipSync(zip)['index.xml']);
  t.match(xml, '<Name>Acme Lebensmittel GmbH</Name>', 'the data supplier: each run of control characters one space');
  t.match(xml, '<Location>Hauptstraße 1, 10115 Berlin</Location>');
  t.match(validation.tables['cashpointclosing.csv']![0], { NAME: 'Acme Lebensmittel GmbH', STRASSE: 'Hauptstraße 1' });
  t.same(validation.tables['lines.csv']!.map((l) => l.ARTIKELTEXT), ['Grüner Tee lose 100 g']);
});
