import type { z } from 'zod';
import type { Sql } from '../../src/infra/postgres.js';
import { stringAt } from '../../src/json.js';
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
import { writeCategoryPrices, writeLegacyPrices, writePricings } from '../catalog/pricing.sql.js';
import { writeProducts } from '../catalog/products.sql.js';
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
      write: async (project, items, at) => (await writeProducts(sql, project, items.map(({ line, value }) => ({ line, product: value })), at)).refused,
      ok: (product): ProductResult => ({ sku: product.sku, status: 'ok' }),
      error: (item, message, line): ProductResult => ({ sku: stringAt(item, 'sku'), status: 'error', message, line }),
    }),
    importRoute(imports.availabilities, AvailabilityBatchItem, {
      write: (project, items, at) => writeAvailabilities(sql, project, items.map(({ line, value }) => ({ line, item: value })), at),
      ok: (item): AvailabilityResult => ({ availability: item.availability, status: 'ok' }),
      error: (item, message, line): AvailabilityResult => ({
        availability: { shopID: stringAt(item, 'availability', 'shopID'), sku: stringAt(item, 'availability', 'sku'), value: stringAt(item, 'availability', 'value') },
        status: 'error',
        message,
        line,
      }),
    }),
    importRoute(imports.categoryPrices, CategoryPricing, {
      write: (project, items, at) => writeCategoryPrices(sql, project, items.map(({ line, value }) => ({ line, pricing: value })), at),
      ok: (pricing): CategoryPriceResult => ({ sku: pricing.sku, category: pricing.category, status: 'ok' }),
      error: (item, message, line): CategoryPriceResult => ({ sku: stringAt(item, 'sku'), category: stringAt(item, 'category'), status: 'error', message, line }),
    }),
    importRoute(imports.legacyPricings, PricingBatchItem, {
      write: (project, items, at) =>
        writePricings(
          sql,
          project,
          items.map(({ line, value }) => (value.op === 'put' ? { line, op: 'put', pricing: value.item } : { line, op: 'delete', sku: value.item.sku })),
          at,
        ),
      ok: (update): PricingResult => ({ sku: update.item.sku, status: 'ok' }),
      error: (item, message, line): PricingResult => ({ sku: stringAt(item, 'item', 'sku'), status: 'error', message, line }),
    }),
    importRoute(imports.legacyPrices, PriceBatchItem, {
      write: (project, items, at) => writeLegacyPrices(sql, project, items.map(({ line, value }) => ({ line, price: value })), at),
      ok: (price): PriceResult => ({ sku: price.sku, category: price.category, status: 'ok' }),
      error: (item, message, line): PriceResult => ({ sku: stringAt(item, 'sku'), category: stringAt(item, 'category'), status: 'error', message, line }),
    }),
  ];
}

type ResultOf<E extends Endpoint> = z.output<E['reply']> extends { results: Array<infer R> } ? R : never;

interface ImportHandling<T, R> {
  /** Writes the valid items; answers the lines it refused, with why (or nothing when it refuses none). */
  write(project: string, items: Array<{ line: number; value: T }>, writtenAt: Date): Promise<Map<number, string> | void>;
  ok(value: T): R;
  /** The result of a refused line; `item` is what could be read of it (the value, the raw JSON, or nothing). */
  error(item: unknown, message: string, line: number): R;
}

function importRoute<E extends Endpoint<typeof ImportChunk>, S extends z.ZodType>(
  endpoint: E,
  schema: S,
  handling: ImportHandling<NoInfer<z.output<S>>, NoInfer<ResultOf<E>>>,
): Route {
  return route(endpoint, async (chunk: ImportChunk) => {
    const parsed = parseLines(chunk.lines, schema);
    const valid = parsed.flatMap((p) => (p.ok ? [{ line: p.line, value: p.value }] : []));
    const refused = (await handling.write(chunk.project, valid, new Date(chunk.batchAt))) ?? new Map<number, string>();
    const results = parsed.map((p) => {
      if (!p.ok) return handling.error(p.raw, p.message, p.line);
      const reason = refused.get(p.line);
      return reason ? handling.error(p.value, reason, p.line) : handling.ok(p.value);
    });
    return { results } as z.output<E['reply']>;
  });
}
