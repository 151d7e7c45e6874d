import { z } from 'zod';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { orders } from '../../subjects/orders.js';
import { tryParseJson } from '../../subjects/formats/json.js';
import * as db from './sql.js';

export interface OrdersDeps {
  sql: Sql;
  /** A list matching more orders than this is refused with 403 too_many_records. */
  maxListRecords: number;
}

const Position = z.tuple([z.string(), z.string()]);

/**
 * Bytes of order documents one reply carries at most: the reply escapes their quotes once more and
 * must stay under the broker's message limit (1 MB by default). Orders with a fiscalReference (TSE
 * certificate, key, signatures) are a kilobyte or so larger than they were: 500 of them no longer fit.
 */
const PartBudgetBytes = 600 * 1024;

/** The leading rows that fit the budget (always at least one); `cut` when some were left for the next part. */
function withinBudget(rows: db.OrderTextRow[]): db.OrderTextRow[] & { cut?: boolean } {
  let bytes = 0;
  for (let i = 0; i < rows.length; i++) {
    bytes += Buffer.byteLength(rows[i]!.doc);
    if (bytes > PartBudgetBytes && i > 0) return Object.assign(rows.slice(0, i), { cut: true });
  }
  return rows;
}

/** Reads orders; the checkout process actor writes them when a process finishes. */
export function createOrdersActor(deps: OrdersDeps): Route[] {
  const { sql, maxListRecords } = deps;
  return [
    route(orders.get, async ({ project, id }) => {
      const doc = await db.findOrder(sql, project, id);
      if (!doc) throw AppError.notFound(`no order with id ${id}`);
      return { order: doc };
    }),

    route(orders.listPart, async ({ offset, after, limit, ...scope }) => {
      let totalItems: number | null = null;
      let position: { offset: number } | { at: string; id: string } = { offset };
      if (after === undefined) {
        totalItems = await db.countOrders(sql, scope, maxListRecords);
        if (totalItems > maxListRecords) {
          throw new AppError(403, 'too_many_records', `more than ${maxListRecords} orders match: narrow the time range (from, to, date) or filter by shop`);
        }
      } else {
        const parsed = Position.safeParse(tryParseJson(after));
        if (!parsed.success) throw AppError.badRequest('the list position is not one this service gave');
        const [at, id] = parsed.data;
        position = { at, id };
      }
      const rows = withinBudget(await db.listOrders(sql, scope, position, limit));
      const last = rows.at(-1);
      return {
        orders: rows.map((r) => r.doc),
        // A part cut short by its size continues where it stopped, like a full one.
        next: (rows.length === limit || rows.cut) && last ? JSON.stringify([last.at, last.id]) : null,
        totalItems,
      };
    }),
  ];
}
