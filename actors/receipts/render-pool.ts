import { Worker } from 'node:worker_threads';
import { receiptLayout } from '../../src/domain/receipt/layout.js';
import { renderReceiptPdf, type ReceiptFonts } from '../../src/domain/receipt/pdf.js';
import type { ReceiptOrder, ReceiptSettings } from '../../src/domain/receipt/source.js';
import { loadReceiptFonts } from './fonts.js';

/**
 * Makes receipt PDFs. Writing one costs some milliseconds of CPU (layout, font subset, deflate);
 * on the worker's event loop that would hold up every other request the process serves (a burst of
 * first-time receipts would stall checkouts). So receipts are made in render threads (RECEIPT_
 * RENDER_THREADS, each with its own copy of the font), a request going to the least busy one; with
 * 0 threads they are made on the event loop.
 */
export interface RenderInput {
  order: ReceiptOrder;
  settings: ReceiptSettings;
  timeZone: string;
}

export interface RenderRequest extends RenderInput {
  seq: number;
}

export type RenderReply = { seq: number; pdf: Uint8Array } | { seq: number; error: string };

export interface ReceiptRenderer {
  render(input: RenderInput): Promise<Buffer>;
}

/** A receipt's PDF, laid out and written here and now: what a render thread (or the event loop) does. */
export function renderReceipt({ order, settings, timeZone }: RenderInput, fonts: ReceiptFonts): Promise<Buffer> {
  return renderReceiptPdf(receiptLayout(order, settings, { timeZone }), fonts);
}

export function createReceiptRenderer(options: { threads: number }): ReceiptRenderer {
  return options.threads > 0 ? threadRenderer(options.threads) : inlineRenderer();
}

/** Fonts read from the dejavu-fonts-ttf package on the first render (again after a failed read). */
function inlineRenderer(): ReceiptRenderer {
  let fonts: Promise<ReceiptFonts> | undefined;
  return {
    async render(input) {
      fonts ??= loadReceiptFonts().catch((err: unknown) => {
        fonts = undefined;
        throw err;
      });
      return renderReceipt(input, await fonts);
    },
  };
}

interface Pending {
  resolve(pdf: Buffer): void;
  reject(err: Error): void;
}

interface RenderThread {
  worker: Worker;
  pending: Map<number, Pending>;
}

function threadRenderer(count: number): ReceiptRenderer {
  const threads: Array<RenderThread | undefined> = Array.from({ length: count }, () => undefined);
  let seq = 0;

  const start = (slot: number): RenderThread => {
    // Run from dist (.js) as from the TypeScript sources the tests load (.ts).
    const entry = new URL(`./render-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
    const thread: RenderThread = { worker: new Worker(entry), pending: new Map() };
    const fail = (err: Error) => {
      if (threads[slot] === thread) threads[slot] = undefined;
      for (const p of thread.pending.values()) p.reject(err);
      thread.pending.clear();
    };
    thread.worker.on('message', (reply: RenderReply) => {
      const waiting = thread.pending.get(reply.seq);
      if (!waiting) return;
      thread.pending.delete(reply.seq);
      if ('pdf' in reply) waiting.resolve(Buffer.from(reply.pdf.buffer, reply.pdf.byteOffset, reply.pdf.byteLength));
      else waiting.reject(new Error(`receipt render thread: ${reply.error}`));
    });
    thread.worker.on('error', (err) => fail(new Error('receipt render thread failed', { cause: err })));
    thread.worker.on('exit', (code) => fail(new Error(`receipt render thread exited (${code})`)));
    // An idle thread never keeps the process alive; one with work is held by its caller's promise.
    thread.worker.unref();
    threads[slot] = thread;
    return thread;
  };

  const leastBusy = (): RenderThread => {
    let best: RenderThread | undefined;
    for (let slot = 0; slot < threads.length; slot++) {
      const thread = threads[slot] ?? start(slot);
      if (!best || thread.pending.size < best.pending.size) best = thread;
    }
    return best!;
  };

  return {
    render(input) {
      const thread = leastBusy();
      const request: RenderRequest = { ...input, seq: seq++ };
      return new Promise<Buffer>((resolve, reject) => {
        thread.pending.set(request.seq, { resolve, reject });
        thread.worker.postMessage(request);
      });
    },
  };
}
