import { z } from 'zod';
import { parseAmount } from './formats/money.js';
import { Done, Href, pathSafeId, ProjectId, SelfLinks } from './common.js';
import { endpoint } from './contract.js';
import { Sku } from './products.js';
import { ShopId } from './shops.js';

export const CategoryId = pathSafeId('a category id').describe('Pricing category id; `default` is the fallback of every shop');

/** The currency of a price, as given (EUR, ...); a price applies only in the project's currency. */
export const Currency = z.string().min(1).max(16);

/** Timestamps of prices are kept in UTC so that they compare as text and as time alike. */
const Moment = z.iso.datetime({ offset: true }).transform((value) => new Date(value).toISOString());

// ---------------------------------------------------------------- pricing v2

export const PriceV2 = z
  .object({
    price: z.string().describe('Decimal text in the currency, such as "1.99"'),
    currency: Currency,
    tier: z.string().min(1).max(64).describe('list, discount, ... (only list and discount price a sale)'),
    basePrice: z.string().max(200).optional(),
    quantity: z.int().min(0).max(1_000_000_000).default(1).describe('The price applies from this many counted units on'),
    validFrom: Moment.optional(),
    validTo: Moment.optional(),
    productSetSKU: Sku.optional(),
  })
  .superRefine((p, ctx) => {
    if (parseAmount(p.price, p.currency) === undefined) {
      ctx.addIssue({ code: 'custom', path: ['price'], message: `not an amount of ${p.currency}: a non-negative decimal with at most its subunit's digits` });
    }
    if (p.validFrom && p.validTo && p.validFrom >= p.validTo) {
      ctx.addIssue({ code: 'custom', path: ['validTo'], message: 'validTo must be after validFrom' });
    }
  })
  .meta({ id: 'PriceV2' });
export type PriceV2 = z.output<typeof PriceV2>;

/** The prices of one product in one category; they replace the previous ones (empty: no price). */
export const CategoryPricing = z.object({ sku: Sku, category: CategoryId, prices: z.array(PriceV2).max(200) }).meta({ id: 'CategoryPricing' });
export type CategoryPricing = z.output<typeof CategoryPricing>;

export const SkuPricing = z
  .object({ sku: Sku, pricings: z.array(z.object({ category: CategoryId, prices: z.array(PriceV2) })) })
  .meta({ id: 'SkuPricing' });

// ---------------------------------------------------------------- legacy pricing

export const PricingCategoryInput = z.object({
  id: CategoryId.optional(),
  name: z.string().max(200).nullable().default(null),
  priority: z.int().min(-2_147_483_648).max(2_147_483_647).default(0).describe('Categories are tried by descending priority'),
  shops: z.array(z.object({ id: ShopId })).max(10_000).default([]),
});
export type PricingCategoryInput = z.output<typeof PricingCategoryInput>;

export const PricingCategory = z
  .object({
    id: CategoryId,
    project: ProjectId,
    name: z.string().nullable(),
    priority: z.int(),
    shops: z.array(z.object({ id: z.string() })),
    links: SelfLinks,
  })
  .meta({ id: 'PricingCategory' });
export type PricingCategory = z.infer<typeof PricingCategory>;

export const PricingCategoryList = z.object({ categories: z.array(PricingCategory), links: SelfLinks }).meta({ id: 'PricingCategoryList' });

const Amount = z.int().min(0).max(Number.MAX_SAFE_INTEGER).describe('In the currency subunit');

export const LegacyPrice = z
  .object({
    category: CategoryId,
    listPrice: Amount,
    discountedPrice: Amount.nullable().default(null).describe('0 or null: none'),
    customerCardPrice: Amount.nullable().default(null).describe('For loyalty card owners; 0 or null: none'),
    basePrice: z.string().max(200).nullable().default(null),
  })
  .meta({ id: 'LegacyPrice' });
export type LegacyPrice = z.output<typeof LegacyPrice>;

/** A legacy Pricing: all prices of one product. `project` and `links` are the platform's. */
export const PricingInput = z.object({
  sku: Sku,
  prices: z
    .array(LegacyPrice)
    .max(500)
    .refine((prices) => new Set(prices.map((p) => p.category)).size === prices.length, 'one price per category'),
});
export type PricingInput = z.output<typeof PricingInput>;

export const Pricing = z
  .object({
    sku: Sku,
    project: ProjectId,
    prices: z.array(LegacyPrice),
    links: z.object({ self: Href, product: Href }),
  })
  .meta({ id: 'Pricing' });
export type Pricing = z.infer<typeof Pricing>;

export const PricingBatchItem = z.discriminatedUnion('op', [
  z.object({ op: z.literal('put'), item: PricingInput }),
  z.object({ op: z.literal('delete'), item: z.object({ sku: Sku }) }),
]);
export type PricingBatchItem = z.output<typeof PricingBatchItem>;

export const PriceBatchItem = LegacyPrice.extend({ sku: Sku });
export type PriceBatchItem = z.output<typeof PriceBatchItem>;

export function pricingCategoryPath(project: string, id: string): string {
  return `/${project}/pricing/categories/id/${encodeURIComponent(id)}`;
}

export function pricingPath(project: string, sku: string): string {
  return `/${project}/pricing/products/sku/${encodeURIComponent(sku)}`;
}

export function productPath(project: string, sku: string): string {
  return `/${project}/products/sku/${encodeURIComponent(sku)}`;
}

const SkuRef = z.object({ project: ProjectId, sku: Sku });
const CategoryRef = z.object({ project: ProjectId, id: CategoryId });

export const pricing = {
  /** v2: every category's prices of a SKU (an empty array when it has none). */
  bySku: endpoint('svc.pricing.bySku', SkuRef, z.array(SkuPricing), { repeatable: true }),
  listCategories: endpoint('svc.pricing.listCategories', z.object({ project: ProjectId }), PricingCategoryList, { repeatable: true }),
  getCategory: endpoint('svc.pricing.getCategory', CategoryRef, PricingCategory, { repeatable: true }),
  createCategory: endpoint('svc.pricing.createCategory', z.object({ project: ProjectId, category: PricingCategoryInput }), PricingCategory),
  putCategory: endpoint('svc.pricing.putCategory', CategoryRef.extend({ category: PricingCategoryInput }), PricingCategory, { repeatable: true }),
  getPricing: endpoint('svc.pricing.getPricing', SkuRef, Pricing, { repeatable: true }),
  putPricing: endpoint('svc.pricing.putPricing', z.object({ project: ProjectId, pricing: PricingInput }), Pricing, { repeatable: true }),
  deletePricing: endpoint('svc.pricing.deletePricing', SkuRef, Done),
  deleteAllPricings: endpoint('svc.pricing.deleteAllPricings', z.object({ project: ProjectId }), Done),
  deletePrice: endpoint('svc.pricing.deletePrice', SkuRef.extend({ category: CategoryId }), Done),
};
