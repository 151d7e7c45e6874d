import t from 'tap';
import { createProcessFor, finishPayment, p, seedCheckout } from './support/checkout.js';
import { pdfText, withoutPdftotext } from './support/pdf.js';
import { startTestService } from './support/service.js';

/**
 * Receipts travel from the worker in parts of RECEIPT_PART_BYTES (default 512 KiB, so that a part
 * in base64 stays under the broker's 1 MB). Here a part is 4 KiB, so every receipt is many parts.
 */
const PartBytes = 4096;
const svc = await startTestService(t, { env: { RECEIPT_PART_BYTES: String(PartBytes) } });
const fx = await seedCheckout(svc);
const alice = await svc.token([], { appUserID: 'alice' });

async function order(lines: number): Promise<string> {
  const items = Array.from({ length: lines }, (_, i) => ({ id: `item-${i + 1}`, sku: i % 2 ? 'BREAD' : 'WATER', amount: 1 + (i % 3) }));
  const res = await createProcessFor(svc, fx, { items, extra: { appUserID: 'alice' } });
  if (res.status !== 201) throw new Error(`checkout: ${res.status} ${res.text}`);
  await finishPayment(svc, fx, res.body.id, 'successful', { pan: '4111111111111111', processorApprovalCode: 'OK-42', transactionTime: '1795000000' });
  return res.body.id;
}

async function download(id: string, token: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

t.test('sends a receipt larger than a part whole, part after part, as it was stored', { skip: withoutPdftotext }, async (t) => {
  const id = await order(100);
  const res = await download(id, fx.tokens.orders);
  t.equal(res.status, 200);
  t.ok(res.bytes.length > 3 * PartBytes, `several parts (${res.bytes.length} bytes)`);
  t.comment(`a 100-line receipt is ${res.bytes.length} bytes`);
  t.equal(Number(res.headers.get('content-length')), res.bytes.length);
  const [stored] = await svc.sql<{ pdf: string; size: number }[]>`select pdf_base64 as pdf, size from receipts where order_id = ${id}`;
  t.ok(Buffer.from(stored!.pdf, 'base64').equals(res.bytes), 'the bytes the receipts table holds, in order');
  t.equal(stored!.size, res.bytes.length);
  const text = await pdfText(res.bytes);
  t.equal(text.match(/^\f?(Wasser|Brot)\s/gm)?.length, 100, 'all 100 lines');
  t.match(text, /Genehmigungsnr\.\s+OK-42/);
  t.match(text, /Karte\s+\*{12}1111/);

  const own = await download(id, alice);
  t.equal(own.status, 200, 'the app user gets every part too');
  t.ok(own.bytes.equals(res.bytes));
  t.equal((await download(id, alice, { 'if-none-match': res.headers.get('etag')! })).status, 304);
});

t.test('keeps the largest receipt a cart can make far below the message limit', { skip: withoutPdftotext }, async (t) => {
  const id = await order(500);
  const res = await download(id, fx.tokens.orders);
  t.equal(res.status, 200);
  t.comment(`a 500-line receipt is ${res.bytes.length} bytes`);
  t.ok(res.bytes.length < 900_000, 'a single part of the default size would carry it');
  t.equal((await pdfText(res.bytes)).match(/^\f?(Wasser|Brot)\s/gm)?.length, 500);
});
