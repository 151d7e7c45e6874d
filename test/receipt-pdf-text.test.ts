import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import QRCode, { type QRCodeSegment } from 'qrcode';
import t from 'tap';
import { loadReceiptFonts } from '../actors/receipts/fonts.js';
import { renderReceipt } from '../actors/receipts/render-pool.js';
import { qrModules } from '../src/domain/receipt/qr.js';
import { readReceiptOrder, type ReceiptSettings } from '../src/domain/receipt/source.js';
import { checkoutPrice } from '../src/domain/tax.js';
import { findExecutable } from '../src/infra/processes.js';
import { pdfText, withoutPdftotext } from './support/pdf.js';

/**
 * What makes a receipt's PDF cheap must not change what it shows: the layouts of words kept across
 * receipts (layout-cache.ts), the font subset to the glyphs used, and the QR mask chosen outside
 * the library (qr.ts).
 */
const pdffonts = await findExecutable('pdffonts');
const run = promisify(execFile);
const utf8 = new TextEncoder();

const settings: ReceiptSettings = {
  currency: 'EUR',
  locale: 'de-DE',
  companyName: 'Müller Handels GmbH',
  taxNumber: '12/345/67890',
  vatID: 'DE123456789',
  companyAdress: { street: 'Hauptstraße 1', zip: '10115', city: 'Berlin', country: 'DE' },
};

function order(id: string, names: string[]) {
  const lineItems = names.map((name, i) => ({ id: String(i), name, amount: 1, price: 199 + i, totalPrice: 199 + i, taxRate: i % 2 ? '7' : '19' }));
  const price = checkoutPrice(lineItems.map((l) => ({ totalPrice: l.totalPrice, taxRate: l.taxRate })));
  return readReceiptOrder({
    id, state: 'final', sequenceNumber: 7, finalizedAt: '2026-07-01T10:00:00.000Z', currency: 'EUR',
    shop: { name: 'Markt Mitte' }, checkoutDevice: { type: 'app' }, paymentMethod: 'cash', paidAmount: price.price, lineItems, price,
  });
}

const fonts = await loadReceiptFonts();
const render = (o: ReturnType<typeof order>) => renderReceipt({ order: o, settings, timeZone: 'Europe/Berlin' }, fonts);

/** The names of the fonts a PDF embeds, as pdffonts lists them. */
async function embeddedFonts(pdf: Buffer): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'receipt-fonts-'));
  try {
    await writeFile(path.join(dir, 'r.pdf'), pdf);
    const { stdout } = await run(pdffonts!, [path.join(dir, 'r.pdf')]);
    return stdout.split('\n').slice(2).filter(Boolean).map((line) => line.split(/\s+/)[0]!);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

t.test('a receipt embeds one subset of its font, whatever the scripts and accents, and reads back as written', { skip: withoutPdftotext || (!pdffonts && 'pdffonts is not installed') }, async (t) => {
  for (const names of [
    ['Kaffee gemahlen 500 g', 'Weißwein „Grauburgunder“', 'Äpfel – Öko'],
    ['Crème fraîche', 'Пельмени', 'Ελληνικό γιαούρτι', 'Łódź żółć', 'email@shop [x]'],
  ]) {
    const pdf = await render(order(names[0]!, names));
    const embedded = await embeddedFonts(pdf);
    t.equal(embedded.length, 1, 'one font: the subset of the glyphs the receipt uses');
    t.match(embedded[0], /^[A-Z]{6}\+DejaVuSans$/);
    const text = await pdfText(pdf);
    for (const name of names) t.ok(text.includes(name), `reads back ${name} (ligatures included)`);
  }
});

t.test('kept layouts write the same receipt again, byte for byte', async (t) => {
  const first = await render(order('c', ['Crème fraîche', 'Bio Vollkornbrot', 'خبز عربي']));
  await render(order('d', ['Пельмени', 'Bio Vollkornbrot 1000 g']));
  t.ok((await render(order('c', ['Crème fraîche', 'Bio Vollkornbrot', 'خبز عربي']))).equals(first));
});

t.test("QR codes have the modules of the library's own mask choice, in the narrowest mode that holds their content", async (t) => {
  // Digits only: numeric; digits, capitals and nine signs: alphanumeric; anything else: bytes.
  const segment = (content: string): QRCodeSegment =>
    /^[0-9]+$/.test(content)
      ? { data: content, mode: 'numeric' }
      : /^[0-9A-Z $%*+\-./:]+$/.test(content)
        ? { data: content, mode: 'alphanumeric' }
        : { data: utf8.encode(content), mode: 'byte' };
  const examples = ['0d9f4d95-e5e6-489d-a042-3a0fbdfa53cd', 'order-tse-1', '12345678901234567890', 'ORDER-42', 'V0;shop-s1;Kassenbeleg-V1;Beleg^2.38_7.98_0.00_0.00_0.00^10.36:Bar;4711;9121'];
  // Up to version 40 in each mode (its counts are longer from versions 10 and 27 on).
  const contents = fc.oneof(
    fc.constantFrom(...examples),
    fc.string({ minLength: 1, maxLength: 600, unit: 'binary' }),
    fc.string({ minLength: 600, maxLength: 2331, unit: fc.constantFrom(...'abc;^_:|+/=0123456789') }),
    fc.stringMatching(/^[0-9A-Z]{1,300}$/),
    fc.string({ minLength: 300, maxLength: 3391, unit: fc.constantFrom(...'0123456789ABCXYZ $%*+-./:') }),
    fc.string({ minLength: 1, maxLength: 5596, unit: fc.constantFrom(...'0123456789') }),
  );
  fc.assert(
    fc.property(contents, (content) => {
      const ours = qrModules(content);
      const library = QRCode.create([segment(content)], { errorCorrectionLevel: 'M' }).modules;
      return ours.size === library.size && Buffer.from(ours.dark).equals(Buffer.from(library.data));
    }),
    { numRuns: 200 },
  );
  t.pass('the same modules');
});
