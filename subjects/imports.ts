import { z } from 'zod';
import { ProjectId } from './common.js';
import { endpoint, type Codec } from './contract.js';

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

const Newline = 0x0a;
const utf8 = new TextDecoder();

/**
 * An import chunk travels as ndjson: one JSON header line (project, batchAt, the lines' numbers),
 * then the items' lines as they came. Wrapping them in JSON instead would escape every quote and
 * make each chunk one large string on both sides, which V8 keeps in old space until a full GC: that
 * cost the import more CPU and most of its peak memory. Item lines hold no raw newline (they come
 * from ndjson lines or JSON.stringify), so they split again safely.
 */
export const ImportChunkCodec: Codec = {
  contentType: 'application/x-ndjson',
  description: 'ndjson: a JSON header line `{project, batchAt, lines}` (lines: the numbers of the lines in the request body), then one line per item, its JSON text as it came',
  encode(request) {
    const chunk = request as ImportChunk;
    const header = Buffer.from(JSON.stringify({ project: chunk.project, batchAt: chunk.batchAt, lines: chunk.lines.map(([line]) => line) }));
    let size = header.length;
    for (const [, text] of chunk.lines) size += 1 + Buffer.byteLength(text);
    const payload = Buffer.allocUnsafe(size);
    let offset = header.copy(payload);
    for (const [, text] of chunk.lines) {
      payload[offset++] = Newline;
      offset += payload.write(text, offset);
    }
    return payload;
  },
  decode(data) {
    const end = data.indexOf(Newline);
    const header = JSON.parse(utf8.decode(end === -1 ? data : data.subarray(0, end))) as { project?: unknown; batchAt?: unknown; lines?: unknown };
    const numbers = Array.isArray(header.lines) ? header.lines : [];
    const lines: Array<[unknown, string]> = [];
    for (let start = end + 1, k = 0; end !== -1 && start <= data.length && k < numbers.length; k++) {
      let stop = data.indexOf(Newline, start);
      if (stop === -1) stop = data.length;
      lines.push([numbers[k], utf8.decode(data.subarray(start, stop))]);
      start = stop + 1;
    }
    if (lines.length !== numbers.length) throw new Error('an import chunk holds fewer lines than its header numbers');
    return { project: header.project, batchAt: header.batchAt, lines };
  },
};

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
// The same chunk again answers the same results and stores the same (imports are idempotent).
const options = { codec: ImportChunkCodec, repeatable: true };

export const imports = {
  products: endpoint('svc.imports.products', ImportChunk, results(ProductResult), options),
  availabilities: endpoint('svc.imports.availabilities', ImportChunk, results(AvailabilityResult), options),
  categoryPrices: endpoint('svc.imports.categoryPrices', ImportChunk, results(CategoryPriceResult), options),
  legacyPricings: endpoint('svc.imports.legacyPricings', ImportChunk, results(PricingResult), options),
  legacyPrices: endpoint('svc.imports.legacyPrices', ImportChunk, results(PriceResult), options),
};
