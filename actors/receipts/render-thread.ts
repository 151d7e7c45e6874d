import { parentPort } from 'node:worker_threads';
import { receiptLayout } from '../../src/domain/receipt/layout.js';
import { renderReceiptPdf } from '../../src/domain/receipt/pdf.js';
import { loadReceiptFonts } from './fonts.js';
import type { RenderReply, RenderRequest } from './render-pool.js';

/**
 * A receipt render thread: lays out and writes receipts (PDF) off the worker's event loop. It
 * parses its font once and answers each request with the PDF's bytes (transferred, not copied).
 */
const port = parentPort;
if (!port) throw new Error('render-thread runs as a worker thread');
const fonts = await loadReceiptFonts();

port.on('message', (request: RenderRequest) => {
  void answer(request).then((reply) => {
    port.postMessage(reply, 'pdf' in reply ? [reply.pdf.buffer as ArrayBuffer] : []);
  });
});

async function answer({ seq, order, settings, timeZone }: RenderRequest): Promise<RenderReply> {
  try {
    const pdf = await renderReceiptPdf(receiptLayout(order, settings, { timeZone }), fonts);
    // A buffer of its own, so that transferring it takes no other bytes along.
    const own = pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength ? new Uint8Array(pdf.buffer, 0, pdf.byteLength) : new Uint8Array(pdf);
    return { seq, pdf: own };
  } catch (err) {
    return { seq, error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}
