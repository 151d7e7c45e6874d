import { parentPort } from 'node:worker_threads';
import { loadReceiptFonts } from './fonts.js';
import { renderReceipt, type RenderReply, type RenderRequest } from './render-pool.js';

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

async function answer({ seq, ...input }: RenderRequest): Promise<RenderReply> {
  try {
    const pdf = await renderReceipt(input, fonts);
    // A buffer of its own, so that transferring it takes no other bytes along.
    const own = pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength ? new Uint8Array(pdf.buffer, 0, pdf.byteLength) : new Uint8Array(pdf);
    return { seq, pdf: own };
  } catch (err) {
    return { seq, error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}
