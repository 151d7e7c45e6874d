import { z } from 'zod';
import { ProjectId } from './common.js';
import { endpoint } from './contract.js';

/**
 * Batch imports. The edge cuts a batch into chunks of raw lines (NATS messages stay well under their
 * 1 MB limit) and sends them to the import worker pool, several at a time; each worker parses and
 * validates its lines and writes the good ones set-based. `batchAt` and each line's number order
 * the writes, so the later line of a batch wins whatever order the chunks are written in.
 */
export const ImportChunk = z.object({
  project: ProjectId,
  batchAt: z.iso.datetime(),
  /** [line number in the request body (1-based), the item's JSON text] */
  lines: z.array(z.tuple([z.int().min(1), z.string()])).min(1).max(5000),
});
export type ImportChunk = z.infer<typeof ImportChunk>;

const Status = z.enum(['ok', 'error']);
/** On errors: what went wrong, and the line of the request body it is about. */
const Failure = { message: z.string().optional(), line: z.int().optional() };

export const ProductResult = z.object({ sku: z.string(), status: Status, ...Failure });
export const AvailabilityResult = z.object({
  availability: z.object({ shopID: z.string(), sku: z.string(), value: z.string().optional() }),
  status: Status,
  ...Failure,
});
export const CategoryPriceResult = z.object({ sku: z.string(), category: z.string(), status: Status, ...Failure });
export const PricingResult = z.object({ sku: z.string(), status: Status, ...Failure });
export const PriceResult = z.object({ sku: z.string(), category: z.string(), status: Status, ...Failure });

export type ProductResult = z.infer<typeof ProductResult>;
export type AvailabilityResult = z.infer<typeof AvailabilityResult>;
export type CategoryPriceResult = z.infer<typeof CategoryPriceResult>;
export type PricingResult = z.infer<typeof PricingResult>;
export type PriceResult = z.infer<typeof PriceResult>;

const results = <T extends z.ZodType>(result: T) => z.object({ results: z.array(result) });

export const imports = {
  products: endpoint('svc.imports.products', ImportChunk, results(ProductResult)),
  availabilities: endpoint('svc.imports.availabilities', ImportChunk, results(AvailabilityResult)),
  categoryPrices: endpoint('svc.imports.categoryPrices', ImportChunk, results(CategoryPriceResult)),
  legacyPricings: endpoint('svc.imports.legacyPricings', ImportChunk, results(PricingResult)),
  legacyPrices: endpoint('svc.imports.legacyPrices', ImportChunk, results(PriceResult)),
};
