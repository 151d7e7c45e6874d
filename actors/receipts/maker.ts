import { createHash } from 'node:crypto';
import { readReceiptOrder } from '../../src/domain/receipt/source.js';
import type { Sql } from '../../src/infra/postgres.js';
import { readSettings } from '../settings/sql.js';
import { createReceiptRenderer } from './render-pool.js';
import * as db from './sql.js';

/**
 * Makes and keeps the receipt of a final order, from the order document as stored (the shop as it
 * was at the sale) and the project settings. Both ways a receipt is made go through here: the
 * receipt job when the order became final, and a request that finds none yet.
 */
export interface ReceiptMakerDeps {
  sql: Sql;
  /** IANA time zone the sale's date and time are printed in. */
  timeZone: string;
  /** Threads that make the PDFs; 0: on the event loop. */
  renderThreads: number;
  /** Base64 characters of the first part a made receipt answers with. */
  partChars: number;
}

export interface ReceiptMaker {
  /** Makes and stores the receipt of the order whose document this is; answers what is stored. */
  make(project: string, id: string, doc: string): Promise<db.StoredReceipt>;
}

export function createReceiptMaker(deps: ReceiptMakerDeps): ReceiptMaker {
  const { sql, timeZone, partChars } = deps;
  const renderer = createReceiptRenderer({ threads: deps.renderThreads });

  const render = async (project: string, id: string, doc: string): Promise<db.StoredReceipt> => {
    const order = readReceiptOrder(JSON.parse(doc));
    const pdf = await renderer.render({ order, settings: await readSettings(sql, project), timeZone });
    return db.storeReceipt(sql, project, id, { etag: etagOf(pdf), size: pdf.length, base64: pdf.toString('base64') }, partChars);
  };
  // Whoever asks for a receipt being made (a request, or its job) waits for it rather than making
  // it again (in this process; across processes the store keeps the first).
  const making = new Map<string, Promise<db.StoredReceipt>>();
  return {
    make(project, id, doc) {
      const key = `${project}/${id}`;
      let pending = making.get(key);
      if (!pending) {
        pending = render(project, id, doc).finally(() => making.delete(key));
        making.set(key, pending);
      }
      return pending;
    },
  };
}

/** A strong ETag from the bytes: the same receipt always has the same one. */
function etagOf(pdf: Buffer): string {
  return `"${createHash('sha256').update(pdf).digest('base64url').slice(0, 27)}"`;
}
