import type { z } from 'zod';
import type { Sql } from '../../src/infra/postgres.js';
import { stringAt } from '../../subjects/formats/json.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { AvailabilityBatchItem } from '../../subjects/availabilities.js';
import type { Endpoint } from '../../subjects/contract.js';
import {
  imports,
  type AvailabilityResult,
  type CategoryPriceResult,
  type ImportChunk,
  type PriceResult,
  type PricingResult,
  type ProductResult,
} from '../../subjects/imports.js';
import { CategoryPricing, PriceBatchItem, PricingBatchItem } from '../../subjects/pricing.js';
import { Product } from '../../subjects/products.js';
import { writeAvailabilities } from '../catalog/availabilities.sql.js';
import { writeCategoryPrices, writeLegacyPrices, writePricings, type PricingWrite } from '../catalog/pricing.sql.js';
import { productWrite, writeProducts } from '../catalog/products.sql.js';
import { parseLines } from './lines.js';

/**
 * The import workers. Each takes a chunk of a batch, answers one result per line in the chunk's
 * order, and writes the valid lines set-based in one transaction (catalog/*.sql.ts). A line that is
 * not JSON or fails validation is an error result for that line only.
 */
export function createImportsActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;
  return [
    importRoute(imports.products, Product, {
      prepare: (product, line) => productWrite(line, product),
      write: async (project, items, at) => (await writeProducts(sql, project, items, at)).refused,
      ok: (product): ProductResult => ({ sku: product.sku, status: 'ok' }),
      error: (item, message, line): ProductResult => ({ sku: stringAt(item, 'sku'), status: 'error', message, line }),
    }),
    importRoute(imports.availabilities, AvailabilityBatchItem, {
      prepare: (item, line) => ({ line, item }),
      write: (project, items, at) => writeAvailabilities(sql, project, items, at),
      ok: (item): AvailabilityResult => ({ availability: item.availability, status: 'ok' }),
      error: (item, message, line): AvailabilityResult => ({
        availability: { shopID: stringAt(item, 'availability', 'shopID'), sku: stringAt(item, 'availability', 'sku'), value: stringAt(item, 'availability', 'value') },
        status: 'error',
        message,
        line,
      }),
    }),
    importRoute(imports.categoryPrices, CategoryPricing, {
      prepare: (pricing, line) => ({ line, pricing }),
      write: (project, items, at) => writeCategoryPrices(sql, project, items, at),
      ok: (pricing): CategoryPriceResult => ({ sku: pricing.sku, category: pricing.category, status: 'ok' }),
      error: (item, message, line): CategoryPriceResult => ({ sku: stringAt(item, 'sku'), category: stringAt(item, 'category'), status: 'error', message, line }),
    }),
    importRoute(imports.legacyPricings, PricingBatchItem, {
      prepare: (update, line): PricingWrite => (update.op === 'put' ? { line, op: 'put', pricing: update.item } : { line, op: 'delete', sku: update.item.sku }),
      write: (project, items, at) => writePricings(sql, project, items, at),
      ok: (update): PricingResult => ({ sku: update.item.sku, status: 'ok' }),
      error: (item, message, line): PricingResult => ({ sku: stringAt(item, 'item', 'sku'), status: 'error', message, line }),
    }),
    importRoute(imports.legacyPrices, PriceBatchItem, {
      prepare: (price, line) => ({ line, price }),
      write: (project, items, at) => writeLegacyPrices(sql, project, items, at),
      ok: (price): PriceResult => ({ sku: price.sku, category: price.category, status: 'ok' }),
      error: (item, message, line): PriceResult => ({ sku: stringAt(item, 'sku'), category: stringAt(item, 'category'), status: 'error', message, line }),
    }),
  ];
}

type ResultOf<E extends Endpoint> = z.output<E['reply']> extends { results: Array<infer R> } ? R : never;

interface ImportHandling<T, W, R> {
  /**
   * What the write needs of a valid item. Called as soon as the item is parsed, so that the parsed
   * objects of a chunk do not live on while the transaction runs.
   */
  prepare(value: T, line: number): W;
  /** Writes the prepared items; answers the lines it refused, with why (or nothing when it refuses none). */
  write(project: string, items: W[], writtenAt: Date): Promise<Map<number, string> | void>;
  ok(value: T): R;
  /** The result of a line that is not a valid item; `raw` is what could be read of it. */
  error(raw: unknown, message: string, line: number): R;
}

function importRoute<E extends Endpoint<typeof ImportChunk>, S extends z.ZodType, W>(
  endpoint: E,
  schema: S,
  handling: ImportHandling<NoInfer<z.output<S>>, W, NoInfer<ResultOf<E>>>,
): Route {
  return route(endpoint, async (chunk: ImportChunk) => {
    const writes: W[] = [];
    const outcomes = parseLines(chunk.lines, schema).map((p) => {
      if (!p.ok) return { line: p.line, result: handling.error(p.raw, p.message, p.line) };
      writes.push(handling.prepare(p.value, p.line));
      return { line: p.line, result: handling.ok(p.value) };
    });
    const refused = (await handling.write(chunk.project, writes, new Date(chunk.batchAt))) ?? new Map<number, string>();
    const results = outcomes.map(({ line, result }) => {
      const reason = refused.get(line);
      // A refused valid item: its ok result (which names it) turned into an error.
      return reason ? { ...(result as object), status: 'error', message: reason, line } : result;
    });
    return { results } as z.output<E['reply']>;
  });
}
