import { z } from 'zod';
import { CategoryPriceResult, imports, PriceResult, PricingResult } from '../../../subjects/imports.js';
import {
  CategoryId,
  CategoryPricing,
  PriceBatchItem,
  Pricing,
  PricingBatchItem,
  PricingCategory,
  PricingCategoryInput,
  PricingCategoryList,
  PricingInput,
  pricing,
  SkuPricing,
} from '../../../subjects/pricing.js';
import { Sku } from '../../../subjects/products.js';
import { AppError } from '../../errors.js';
import type { ServiceClient } from '../../messaging/client.js';
import { BatchBodyLimit, batchItems, fieldOf, NdjsonTypes, sendBatch } from '../batch.js';
import { documentedBody, EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const SkuParams = ProjectParams.extend({ sku: Sku });
const CategoryParams = ProjectParams.extend({ id: CategoryId });
const batchBody = { consumes: [...NdjsonTypes, 'application/json'] };
const v2 = ['pricing v2'];
const legacy = ['legacy pricing'];
const pricingRead = { auth: { permissions: ['pricingRead'] } } as const;
const pricingWrite = { auth: { permissions: ['pricingWrite'] } } as const;
const categoriesRead = { auth: { permissions: ['pricingCategoriesRead'] } } as const;
const categoriesWrite = { auth: { permissions: ['pricingCategoriesWrite'] } } as const;

export function pricingRoutes(app: ZodApp, client: ServiceClient): void {
  // ---------------------------------------------------------------- v2
  app.post(
    '/:project/pricing/v2/category/batch',
    {
      config: pricingWrite,
      bodyLimit: BatchBodyLimit,
      schema: {
        tags: v2,
        summary: 'Import category prices: ndjson of {sku, category, prices} (at most 20000) or a JSON array (at most 500)',
        description:
          'The prices of a category replace the previous ones of that product there; an empty list leaves it without price in the category. ' +
          'Answers 200 with one result `{sku, category, status, message?, line?}` per item, in input order, streamed.',
        ...batchBody,
        params: ProjectParams,
        body: documentedBody(z.array(CategoryPricing)),
        response: { 200: z.array(CategoryPriceResult), ...ErrorResponses },
      },
    },
    async (request, reply) =>
      sendBatch(request, reply, {
        client,
        endpoint: imports.categoryPrices,
        project: request.params.project,
        items: batchItems(request.body),
        failed: ([line, text], message): CategoryPriceResult => ({ sku: fieldOf(text, 'sku'), category: fieldOf(text, 'category'), status: 'error', message, line }),
      }),
  );

  app.get(
    '/:project/pricing/v2/sku/:sku',
    {
      config: pricingRead,
      schema: {
        tags: v2,
        summary: 'The v2 prices of a product by category (sorted by category; prices by tier, then validFrom, those without first)',
        params: SkuParams,
        response: { 200: z.array(SkuPricing), ...ErrorResponses },
      },
    },
    async (request) => client.call(pricing.bySku, request.params),
  );

  // ---------------------------------------------------------------- legacy categories
  app.get(
    '/:project/pricing/categories',
    { config: categoriesRead, schema: { tags: legacy, summary: 'List pricing categories', params: ProjectParams, response: { 200: PricingCategoryList, ...ErrorResponses } } },
    async (request) => client.call(pricing.listCategories, request.params),
  );

  app.post(
    '/:project/pricing/categories',
    {
      config: { ...categoriesWrite, idempotent: true },
      schema: { tags: legacy, summary: 'Create a pricing category', params: ProjectParams, body: PricingCategoryInput, response: { 201: PricingCategory, ...ErrorResponses } },
    },
    async (request, reply) => {
      const category = await client.call(pricing.createCategory, { project: request.params.project, category: request.body });
      return reply.code(201).header('location', category.links.self.href).send(category);
    },
  );

  app.get(
    '/:project/pricing/categories/id/:id',
    { config: categoriesRead, schema: { tags: legacy, summary: 'Get a pricing category', params: CategoryParams, response: { 200: PricingCategory, ...ErrorResponses } } },
    async (request) => client.call(pricing.getCategory, request.params),
  );

  app.put(
    '/:project/pricing/categories/id/:id',
    {
      config: categoriesWrite,
      schema: { tags: legacy, summary: 'Replace a pricing category (its shops too)', params: CategoryParams, body: PricingCategoryInput, response: { 200: PricingCategory, ...ErrorResponses } },
    },
    async (request) => client.call(pricing.putCategory, { ...request.params, category: request.body }),
  );

  // ---------------------------------------------------------------- legacy pricings
  app.get(
    '/:project/pricing/products/sku/:sku',
    { config: pricingRead, schema: { tags: legacy, summary: 'The legacy prices of a product', params: SkuParams, response: { 200: Pricing, ...ErrorResponses } } },
    async (request) => client.call(pricing.getPricing, request.params),
  );

  app.put(
    '/:project/pricing/products/sku/:sku',
    {
      config: pricingWrite,
      schema: {
        tags: legacy,
        summary: 'Replace the legacy prices of a product (every category); the body SKU must equal the path SKU',
        params: SkuParams,
        body: PricingInput,
        response: { 200: Pricing, ...ErrorResponses },
      },
    },
    async (request) => {
      if (request.body.sku !== request.params.sku) throw AppError.badRequest(`the body's SKU ${request.body.sku} differs from the path's SKU ${request.params.sku}`);
      return client.call(pricing.putPricing, { project: request.params.project, pricing: request.body });
    },
  );

  app.delete(
    '/:project/pricing/products/sku/:sku',
    { config: pricingWrite, schema: { tags: legacy, summary: 'Delete the legacy prices of a product', params: SkuParams, response: { 200: EmptyBody, ...ErrorResponses } } },
    async (request, reply) => {
      await client.call(pricing.deletePricing, request.params);
      return reply.code(200).send('');
    },
  );

  app.delete(
    '/:project/pricing/products/sku/:sku/category/:categoryID',
    {
      config: pricingWrite,
      schema: {
        tags: legacy,
        summary: 'Delete one legacy price of a product in one category',
        params: SkuParams.extend({ categoryID: CategoryId }),
        response: { 200: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project, sku, categoryID } = request.params;
      await client.call(pricing.deletePrice, { project, sku, category: categoryID });
      return reply.code(200).send('');
    },
  );

  app.delete(
    '/:project/pricing/products',
    { config: pricingWrite, schema: { tags: legacy, summary: 'Delete every legacy pricing of the project', params: ProjectParams, response: { 200: EmptyBody, ...ErrorResponses } } },
    async (request, reply) => {
      await client.call(pricing.deleteAllPricings, request.params);
      return reply.code(200).send('');
    },
  );

  app.post(
    '/:project/pricing/products/_batch',
    {
      config: pricingWrite,
      bodyLimit: BatchBodyLimit,
      schema: {
        tags: legacy,
        summary: 'Put or delete legacy pricings: ndjson of {op: put|delete, item: Pricing} (at most 20000), or a JSON array (at most 500)',
        description: 'Answers 200 with one result `{sku, status, message?, line?}` per item, in input order, streamed.',
        ...batchBody,
        params: ProjectParams,
        body: documentedBody(z.array(PricingBatchItem)),
        response: { 200: z.array(PricingResult), ...ErrorResponses },
      },
    },
    async (request, reply) =>
      sendBatch(request, reply, {
        client,
        endpoint: imports.legacyPricings,
        project: request.params.project,
        items: batchItems(request.body),
        failed: ([line, text], message): PricingResult => ({ sku: fieldOf(text, 'item', 'sku'), status: 'error', message, line }),
      }),
  );

  app.post(
    '/:project/pricing/_batch',
    {
      config: pricingWrite,
      bodyLimit: BatchBodyLimit,
      schema: {
        tags: legacy,
        summary: 'Put single legacy prices: ndjson of {sku, category, listPrice, discountedPrice?, customerCardPrice?, basePrice?} (at most 20000), or a JSON array (at most 500)',
        description: 'Answers 200 with one result `{sku, category, status, message?, line?}` per item, in input order, streamed.',
        ...batchBody,
        params: ProjectParams,
        body: documentedBody(z.array(PriceBatchItem)),
        response: { 200: z.array(PriceResult), ...ErrorResponses },
      },
    },
    async (request, reply) =>
      sendBatch(request, reply, {
        client,
        endpoint: imports.legacyPrices,
        project: request.params.project,
        items: batchItems(request.body),
        failed: ([line, text], message): PriceResult => ({ sku: fieldOf(text, 'sku'), category: fieldOf(text, 'category'), status: 'error', message, line }),
      }),
  );
}
