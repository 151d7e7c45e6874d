import { Readable } from 'node:stream';
import { z } from 'zod';
import { imports, type ProductResult } from '../../../subjects/imports.js';
import { Plu, Product, ProductListMediaType, ProductSearchResult, products, Sku, StoredProduct } from '../../../subjects/products.js';
import { AppError } from '../../errors.js';
import type { ServiceClient } from '../../messaging/client.js';
import { BatchBodyLimit, batchItems, fieldOf, NdjsonTypes, sendBatch } from '../batch.js';
import { documentedBody, EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { inParts, jsonArray, ndjson as ndjsonStream } from '../streams.js';

const SkuParams = ProjectParams.extend({ sku: Sku });
const tags = ['products'];
// The spec wraps errors of the product family as {error: {type, message}}.
const read = { auth: { permissions: ['productsRead'] }, errorEnvelope: 'wrapped' } as const;
const write = { auth: { permissions: ['productsWrite'] }, errorEnvelope: 'wrapped' } as const;
const ListPageSize = 500;

const ListQuery = z.object({
  limit: z.coerce.number().int().min(0).default(0).describe('At most this many products; 0: no limit'),
  q: z.string().min(1).max(200).optional().describe('Words of name and description, united with SKU, code and PLU prefixes'),
  excludeFromSync: z.stringbool().optional().describe('Only products with this excludeFromSync; unset: both'),
  withUnsearchable: z.stringbool().default(false).describe('Also products with searchable false'),
});

const SearchQuery = z.object({
  search: z.string().min(1).max(200),
  shopID: z.string().min(1),
  showProductsWithoutPrices: z.stringbool().default(false),
  page: z.coerce.number().int().min(0).default(0),
  perPage: z.coerce.number().int().min(1).max(100).default(25),
});

export function productRoutes(app: ZodApp, client: ServiceClient): void {
  app.post(
    '/:project/products/_batch',
    {
      config: write,
      bodyLimit: BatchBodyLimit,
      schema: {
        tags,
        summary: 'Import products: ndjson (one Product per line, at most 20000) or a JSON array (at most 500)',
        description:
          'Answers 200 with one result `{sku, status, message?, line?}` per item, in input order, streamed (ndjson for ndjson, a JSON array for JSON). ' +
          'A line that is not JSON, fails validation or claims a PLU of another product is an error for that line only; every good line is stored. ' +
          'A later line about the same SKU wins. Above the limits: 413 batch_too_large and nothing stored.',
        consumes: [...NdjsonTypes, 'application/json'],
        params: ProjectParams,
        body: documentedBody(z.array(Product)),
        response: { 200: z.array(z.object({ sku: z.string(), status: z.enum(['ok', 'error']), message: z.string().optional(), line: z.int().optional() })), ...ErrorResponses },
      },
    },
    async (request, reply) =>
      sendBatch(request, reply, {
        client,
        endpoint: imports.products,
        project: request.params.project,
        items: batchItems(request.body),
        failed: ([line, text], message): ProductResult => ({ sku: fieldOf(text, 'sku'), status: 'error', message, line }),
      }),
  );

  app.get(
    '/:project/products',
    {
      config: read,
      schema: {
        tags,
        summary: `List products as ${ProductListMediaType} {products} or, with Accept: application/x-ndjson, one product per line`,
        description: 'Both representations stream: the list is read in pages and never held whole.',
        params: ProjectParams,
        querystring: ListQuery,
        response: { 200: z.object({ products: z.array(StoredProduct) }), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const { limit, ...filter } = request.query;
      const ndjson = (request.headers.accept ?? '').includes('ndjson');
      const page = async (after: string | undefined, wanted: number) => {
        const part = await client.call(products.listPage, { project, ...filter, after, pageSize: Math.min(ListPageSize, wanted) });
        return { items: part.products, next: part.next };
      };
      const wanted = limit === 0 ? Infinity : limit;
      // The first part is read before answering, so that its errors still get their status.
      const items = inParts(await page(undefined, wanted), wanted, page);
      const body = ndjson ? ndjsonStream(items) : jsonArray(items, '{"products":[', ']}');
      // The response schema documents what the stream carries; the stream itself is not a typed value.
      return reply.type(ndjson ? 'application/x-ndjson' : ProductListMediaType).send(Readable.from(body) as never);
    },
  );

  app.post(
    '/:project/products',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create or update a product (an existing SKU is updated, as with PUT)',
        description: '201 with Location when the SKU is new, else 200.',
        params: ProjectParams,
        body: Product,
        response: { 200: StoredProduct, 201: StoredProduct, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { product, created } = await client.call(products.put, { project: request.params.project, product: request.body });
      if (created) reply.code(201).header('location', `/${request.params.project}/products/sku/${encodeURIComponent(product.sku)}`);
      return product;
    },
  );

  app.get(
    '/:project/products/sku/:sku',
    { config: read, schema: { tags, summary: 'Get a product by SKU', params: SkuParams, response: { 200: StoredProduct, ...ErrorResponses } } },
    async (request) => client.call(products.get, request.params),
  );

  app.put(
    '/:project/products/sku/:sku',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create or replace a product; the body SKU must equal the path SKU',
        params: SkuParams,
        body: Product,
        response: { 200: StoredProduct, 201: StoredProduct, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      if (request.body.sku !== request.params.sku) throw AppError.badRequest(`the body's SKU ${request.body.sku} differs from the path's SKU ${request.params.sku}`);
      const { product, created } = await client.call(products.put, { project: request.params.project, product: request.body });
      return reply.code(created ? 201 : 200).send(product);
    },
  );

  app.delete(
    '/:project/products/sku/:sku',
    { config: write, schema: { tags, summary: 'Delete a product', params: SkuParams, response: { 200: EmptyBody, ...ErrorResponses } } },
    async (request, reply) => {
      await client.call(products.delete, request.params);
      return reply.code(200).send('');
    },
  );

  app.get(
    '/:project/products/plu/:plu',
    {
      config: read,
      schema: { tags, summary: 'Get the product a PLU belongs to', params: ProjectParams.extend({ plu: Plu }), response: { 200: StoredProduct, ...ErrorResponses } },
    },
    async (request) => client.call(products.getByPlu, request.params),
  );

  app.get(
    '/:project/products/search',
    {
      config: read,
      schema: {
        tags,
        summary: 'PoS product search with the current list price in a shop',
        description: 'Searchable products only; without showProductsWithoutPrices, only those with a price in the shop now. Pages count from 0.',
        params: ProjectParams,
        querystring: SearchQuery,
        response: { 200: ProductSearchResult, ...ErrorResponses },
      },
    },
    async (request) => client.call(products.search, { project: request.params.project, ...request.query }),
  );

  app.delete(
    '/:project/products',
    {
      config: { ...write, auth: { permissions: ['productsWrite', 'availabilitiesWrite', 'pricingWrite'] } },
      schema: {
        tags,
        summary: 'Delete all catalog data of the project: products, availabilities and prices (pricing categories stay)',
        params: ProjectParams,
        response: { 200: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      await client.call(products.deleteAll, { project: request.params.project });
      return reply.code(200).send('');
    },
  );
}
