import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import * as fontkit from 'fontkit';
import t from 'tap';
import { withLayoutCache } from '../src/domain/receipt/layout-cache.js';
import { receiptLayout } from '../src/domain/receipt/layout.js';
import { renderReceiptPdf } from '../src/domain/receipt/pdf.js';
import { readReceiptOrder, type ReceiptSettings } from '../src/domain/receipt/source.js';
import { checkoutPrice } from '../src/domain/tax.js';

const require = createRequire(import.meta.url);
const font = fontkit.create(await readFile(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'))) as fontkit.Font;
const settings: ReceiptSettings = {
  currency: 'EUR',
  locale: 'de-DE',
  companyName: 'Müller Handels GmbH',
  taxNumber: '12/345/67890',
  vatID: 'DE123456789',
  companyAdress: { street: 'Hauptstraße 1', zip: '10115', city: 'Berlin', country: 'DE' },
};

function order(id: string, names: string[]) {
  const lineItems = names.map((name, i) => ({ id: String(i), name, amount: 1 + (i % 3), price: 199 + i, totalPrice: (1 + (i % 3)) * (199 + i), taxRate: i % 2 ? '7' : '19' }));
  const price = checkoutPrice(lineItems.map((l) => ({ totalPrice: l.totalPrice, taxRate: l.taxRate })));
  return readReceiptOrder({
    id, state: 'final', sequenceNumber: 7, finalizedAt: '2026-07-01T10:00:00.000Z', currency: 'EUR',
    shop: { name: 'Markt Mitte' }, checkoutDevice: { type: 'app' }, paymentMethod: 'cash', paidAmount: price.price, lineItems, price,
  });
}

const render = (o: ReturnType<typeof order>, regular: fontkit.Font) => renderReceiptPdf(receiptLayout(o, settings, { timeZone: 'Europe/Berlin' }), { regular });

t.test('a font that keeps its layouts across receipts writes the same receipts, byte for byte', async (t) => {
  // Words repeat across these receipts (kept layouts are used again); Arabic and Devanagari need
  // the font's shaping. The small cache holds fewer words than a receipt sets: it starts afresh.
  const caches = { large: withLayoutCache(font), small: withLayoutCache(font, 20) };
  const receipts = [
    order('a', ['Bio Vollkornbrot 500 g', 'Käse Gouda jung', 'Weißwein trocken']),
    order('b', ['Käse Gouda alt', 'Bio Vollkornbrot 1000 g', 'Äpfel Elstar']),
    order('c', ['خبز عربي', 'दूध 1 लीटर', 'Bio Vollkornbrot 500 g']),
    order('a', ['Bio Vollkornbrot 500 g', 'Käse Gouda jung', 'Weißwein trocken']),
  ];
  for (const [i, o] of receipts.entries()) {
    const expected = await render(o, font);
    for (const [name, cached] of Object.entries(caches)) t.ok((await render(o, cached)).equals(expected), `receipt ${i + 1}, ${name} cache`);
  }
});

t.test('answers runs of its own: the caller may scale their positions', async (t) => {
  const cached = withLayoutCache(font);
  const first = cached.layout('Gouda');
  const width = first.advanceWidth;
  for (const p of first.positions) p.xAdvance *= 2;
  t.equal(first.advanceWidth, 2 * width, 'the width is the sum of the positions as they are');
  const again = cached.layout('Gouda');
  t.equal(again.advanceWidth, width, 'the next caller gets the positions as the font made them');
  t.same(again.glyphs.map((g) => g.id), font.layout('Gouda').glyphs.map((g) => g.id));
});
