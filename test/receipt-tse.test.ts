import { execFile } from 'node:child_process';
import { verify } from 'node:crypto';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import t from 'tap';
import { loadReceiptFonts } from '../actors/receipts/fonts.js';
import { renderReceipt } from '../actors/receipts/render-pool.js';
import { receiptLayout } from '../src/domain/receipt/layout.js';
import { readReceiptOrder, type ReceiptSettings } from '../src/domain/receipt/source.js';
import { findExecutable } from '../src/infra/processes.js';
import { fiscalReferenceOf, pointPublicKey, signedMessage, testTse } from './support/fiscal.js';
import { pdfText, withoutPdftotext } from './support/pdf.js';

/**
 * The TSE block of a receipt (KassenSichV): what the TSE signed, in words and as the DFKA QR code,
 * read back from the rendered PDF as a checker's phone would: the page rasterized (pdftoppm) and
 * the code decoded by a QR decoder that knows nothing of how it was drawn.
 *
 * RECEIPT_TSE_PNG=<path> keeps the rendered page (the README's docs/receipt-tse.png is made so).
 */
const pdftoppm = await findExecutable('pdftoppm');
const withoutPoppler = pdftoppm && !withoutPdftotext ? false : 'pdftoppm/pdftotext are not installed (Debian: apt install poppler-utils)';
const run = promisify(execFile);
// jsqr is CommonJS whose types declare an ES default export: at run time the import is the function.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

const settings: ReceiptSettings = {
  currency: 'EUR',
  locale: 'de-DE',
  companyName: 'Müller Handels GmbH',
  taxNumber: '12/345/67890',
  vatID: 'DE123456789',
  companyAdress: { street: 'Hauptstraße 1', zip: '10115', city: 'Berlin', country: 'DE' },
};
const tse = testTse();
const startedAt = 1_782_900_000; // 2026-07-01T10:00:00Z
const processData = 'Beleg^2.38_7.98_0.00_0.00_0.00^10.36:Bar';
const reference = fiscalReferenceOf(tse, { transactionNumber: 4711, counter: 9120, startedAt, processData, clientSerialNumber: 'shop-s1' });
const finish = reference.logs[1]!;

/** The DFKA string as the standard spells it, written out here rather than by the code under test. */
const expectedQr = [
  'V0', 'shop-s1', 'Kassenbeleg-V1', processData, '4711', '9121', '2026-07-01T10:00:00.000Z', '2026-07-01T10:00:03.000Z',
  'ecdsa-plain-SHA256', 'unixTime', finish.signature, tse.publicKeyBase64,
].join(';');

function order(fiscalReference?: object) {
  return readReceiptOrder({
    id: 'order-tse-1', state: 'final', sequenceNumber: 12, finalizedAt: '2026-07-01T10:00:03.000Z', currency: 'EUR',
    shop: { name: 'Markt am Platz', street: 'Torstraße 1', zip: '10119', city: 'Berlin' }, checkoutDevice: { type: 'app' },
    paymentMethod: 'cash', paidAmount: 1036,
    lineItems: [
      { id: '1', name: 'Kaffee 500 g', amount: 1, price: 798, totalPrice: 798, taxRate: '7' },
      { id: '2', name: 'Spülmittel', amount: 2, price: 119, totalPrice: 238, taxRate: '19' },
    ],
    price: { price: 1036, taxPre: { '7': 798, '19': 238 }, tax: { '7': 52, '19': 38 }, taxNet: { '7': 746, '19': 200 } },
    ...(fiscalReference ? { fiscalReference } : {}),
  });
}

const fonts = await loadReceiptFonts();
const render = (o: ReturnType<typeof order>) => renderReceipt({ order: o, settings, timeZone: 'Europe/Berlin' }, fonts);

/**
 * Every QR code on the page's PNG, as a reader finds them when aimed at one part of the page at a
 * time: the whole page, then windows a little higher than the page is wide, an eighth of its width
 * apart (jsQR answers one code per image; with two sharp codes in view it may answer none).
 */
function qrCodes(png: PNG): string[] {
  const found = new Set<string>();
  const decode = (top: number, height: number) => {
    const code = jsQR(new Uint8ClampedArray(png.data.subarray(top * png.width * 4, (top + height) * png.width * 4)), png.width, height);
    if (code) found.add(code.data);
  };
  decode(0, png.height);
  const window = Math.round(png.width * 1.2);
  for (let top = 0; top < png.height; top += Math.round(png.width / 8)) decode(top, Math.min(window, png.height - top));
  return [...found];
}

/** The first page at 200 dpi, as pdftoppm draws it. */
async function rasterize(pdf: Buffer, keep = false): Promise<{ png: PNG; file: Buffer }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'receipt-png-'));
  try {
    await writeFile(path.join(dir, 'r.pdf'), pdf);
    await run(pdftoppm!, ['-r', '200', '-png', '-f', '1', '-l', '1', path.join(dir, 'r.pdf'), path.join(dir, 'page')]);
    const name = (await readdir(dir)).find((f) => f.endsWith('.png'))!;
    const file = await readFile(path.join(dir, name));
    if (keep && process.env.RECEIPT_TSE_PNG) await copyFile(path.join(dir, name), process.env.RECEIPT_TSE_PNG);
    return { png: PNG.sync.read(file), file };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

t.test('lays out the TSE block from the fiscal reference: serial, transaction, finish counter, times, algorithm, signature and the DFKA code', async (t) => {
  const layout = receiptLayout(order(reference), settings, { timeZone: 'Europe/Berlin' });
  t.ok(layout.tse, 'a TSE block');
  t.same(layout.tse!.rows.map((r) => [r.label, r.value]), [
    ['TSE-Seriennummer', tse.serialNumber],
    ['TSE-Transaktion', '4711'],
    ['TSE-Signaturzähler', '9121'],
    ['TSE-Start', '2026-07-01T10:00:00.000Z'],
    ['TSE-Ende', '2026-07-01T10:00:03.000Z'],
    ['TSE-Signaturalgorithmus', 'ecdsa-plain-SHA256'],
    ['TSE-Signatur', finish.signature],
  ]);
  t.equal(layout.tse!.qr, expectedQr, 'the DFKA V0 string, field for field');
  t.equal(layout.qr, 'order-tse-1', 'the order id keeps its own code');
});

t.test('the signature in the code verifies with the public key in the code', async (t) => {
  const fields = expectedQr.split(';');
  const message = signedMessage({ transactionNumber: 4711, counter: 9121, timestamp: String(startedAt + 3), processType: fields[2]!, processData: fields[3]! });
  t.ok(verify('sha256', message, { key: pointPublicKey(fields[11]!), dsaEncoding: 'ieee-p1363' }, Buffer.from(fields[10]!, 'base64')));
});

t.test('prints the TSE block and a DFKA code that a QR reader decodes to exactly the standard string', { skip: withoutPoppler }, async (t) => {
  const pdf = await render(order(reference));
  const { png } = await rasterize(pdf, true);
  const codes = qrCodes(png);
  t.ok(codes.includes(expectedQr), `the DFKA code is readable (found ${codes.length} codes)`);
  t.ok(codes.includes('order-tse-1'), 'the order id code still is');

  const text = await pdfText(pdf);
  const flat = text.replace(/\s+/g, '');
  t.match(text, /TSE-Transaktion\s+4711/);
  t.match(text, /TSE-Signaturzähler\s+9121/);
  t.match(text, /TSE-Start\s+2026-07-01T10:00:00\.000Z/);
  t.match(text, /TSE-Ende\s+2026-07-01T10:00:03\.000Z/);
  t.match(text, /TSE-Signaturalgorithmus\s+ecdsa-plain-SHA256/);
  t.ok(flat.includes(`TSE-Seriennummer${tse.serialNumber}`), 'the serial number, wrapped under its label');
  t.ok(flat.includes(`TSE-Signatur${finish.signature}`), 'the whole signature, wrapped under its label');
  t.notOk(text.includes('…'), 'nothing of it cut off');
});

t.test('keeps a long DFKA code (several payment types, large amounts) inside the strip and readable', { skip: withoutPoppler }, async (t) => {
  const long = 'Beleg^12345.67_8901.23_0.00_45.60_0.00^10000.00:Bar_5000.00:Unbar_1234.56:Unbar:USD_789.00:Bar:CHF';
  const ref = fiscalReferenceOf(tse, { transactionNumber: 123456789, counter: 987654321, startedAt, processData: long, clientSerialNumber: 'shop-with-a-long-external-identifier-0042' });
  const layout = receiptLayout(order(ref), settings, { timeZone: 'Europe/Berlin' });
  const codes = qrCodes((await rasterize(await render(order(ref)))).png);
  t.ok(codes.includes(layout.tse!.qr!), `decoded (found ${codes.length} codes)`);
  t.ok(layout.tse!.qr!.includes(long));
});

t.test('prints TSE-Ausfall and the reason, and no signature data nor DFKA code, when the TSE could not sign', { skip: withoutPoppler }, async (t) => {
  const failed = fiscalReferenceOf(tse, { transactionNumber: 4712, counter: 9122, startedAt, processData, outage: 'Zeitüberschreitung der Cloud-TSE nach 3 Versuchen' });
  const layout = receiptLayout(order(failed), settings, { timeZone: 'Europe/Berlin' });
  t.same(layout.tse!.outage, { label: 'TSE-Ausfall', reason: 'Zeitüberschreitung der Cloud-TSE nach 3 Versuchen' });
  t.equal(layout.tse!.qr, undefined);
  const pdf = await render(order(failed));
  const text = await pdfText(pdf);
  t.match(text, /TSE-Ausfall/);
  t.match(text, /Zeitüberschreitung der Cloud-TSE nach 3 Versuchen/);
  t.notMatch(text, /TSE-Signatur|TSE-Signaturzähler|TSE-Start/, 'no signature data');
  t.same(qrCodes((await rasterize(pdf)).png), ['order-tse-1'], 'only the order id code');
});

t.test('prints no TSE block for an order without a fiscal reference (provider none)', { skip: withoutPoppler }, async (t) => {
  const layout = receiptLayout(order(), settings, { timeZone: 'Europe/Berlin' });
  t.equal(layout.tse, undefined);
  const text = await pdfText(await render(order()));
  t.notMatch(text, /TSE/);
});

t.test('a fiscal reference that does not fit the contract prints no TSE block rather than failing the receipt', async (t) => {
  const layout = receiptLayout(order({ securityDeviceModule: { serialNumber: 'x' }, logs: 'broken' }), settings, { timeZone: 'Europe/Berlin' });
  t.equal(layout.tse, undefined);
});
