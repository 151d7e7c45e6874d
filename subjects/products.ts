import { z } from 'zod';
import { Units } from './formats/units.js';
import { Done, Pagination, ProjectId } from './common.js';
import { endpoint } from './contract.js';

/** A SKU: any printable text (SKUs from ERPs contain spaces, slashes, ...). Paths carry it encoded. */
export const Sku = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}]*$/u, 'a SKU has no control characters');

/** A PLU short code (digits in practice; GS1 in-store codes embed 5 of them). */
export const Plu = z
  .string()
  .min(1)
  .max(32)
  .regex(/^[^\s\p{Cc}/]+$/u, 'a PLU has no spaces, slashes or control characters');

/**
 * A unit (referenceUnit, encodingUnit, weightUnit). The set is open: units this platform does not
 * know are stored and returned as given. Pricing knows ${Units.join(', ')}; an encodingUnit of
 * `price` marks a price-encoded product (its scanned code carries the price).
 */
export const Unit = z
  .string()
  .min(1)
  .max(32)
  .describe(`Open set; known: ${Units.join(', ')}, and \`price\` for price-encoded products`);

const Text = (max: number) => z.string().max(max);
/** Text that defaults to '' when absent or null (the documented v1 product sends `depositProduct: null`). */
const TextOrEmpty = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? '');

export const ProductCode = z.object({
  code: z.string().min(1).max(500),
  template: Text(64).default('default'),
  isPrimary: z.boolean().default(false),
  transmissionCode: TextOrEmpty(64),
  encodingUnit: Unit.nullable().default(null),
  specifiedQuantity: z.number().min(0).nullable().default(null),
});

/**
 * The Product object of the spec, as imported and as stored: every field with its default, unknown
 * fields dropped (so the deprecated `eans` or `boost` of old clients do no harm). `project` is the
 * path's. `excludeFromSync` is this platform's addition: the flag the list's filter of that name
 * reads.
 */
export const Product = z
  .object({
    sku: Sku,
    productType: Text(64).min(1).default('default').describe('default, weighable, productSet, variantBase, ...'),
    name: TextOrEmpty(500),
    description: Text(10_000).nullable().default(null),
    subtitle: Text(500).nullable().default(null),
    imageUrl: Text(2000).nullable().default(null),
    basePrice: TextOrEmpty(200).describe('Base price as on shelf labels, such as "12.99 €/kg"'),
    additionalAttributes: z.record(z.string(), z.string()).default({}),
    saleRestriction: Text(64).nullable().default(null).describe('Such as a minimum age'),
    referenceUnit: Unit.nullable().default(null).describe('Unit the price refers to, such as kg'),
    encodingUnit: Unit.nullable().default(null).describe('Unit encoded in a scanned code, such as g'),
    weighByCustomer: z.boolean().nullable().default(null),
    depositProduct: TextOrEmpty(200).describe('SKU of the deposit product that scanning this one adds'),
    bundledProduct: TextOrEmpty(200),
    baseProduct: TextOrEmpty(200),
    setComponents: z.array(z.object({ sku: Sku, amount: z.int().min(1) })).max(200).default([]),
    outOfStock: z.boolean().default(false),
    deleted: z.boolean().default(false),
    taxCategory: TextOrEmpty(64).describe('Key of the project settings\' taxRates'),
    codes: z.array(ProductCode).max(100).default([]),
    controlIndication: z.number().default(0),
    forceControl: z.boolean().default(false),
    pluSet: z.array(Plu).max(50).default([]).describe('PLUs of a weighable product; a PLU belongs to one product only'),
    scanMessage: TextOrEmpty(200),
    isDiscountable: z.boolean().default(false),
    isReturnable: z.boolean().default(false),
    priceEntryRequired: z.boolean().default(false),
    fulfillmentType: TextOrEmpty(64),
    allowedOnDeviceTypes: z.array(Text(64).min(1)).max(20).default([]).describe('pos, sco-ng, ... (open set); empty allows every device type'),
    maxSaleQuantity: z.int().min(1).optional(),
    maxSaleText: TextOrEmpty(500),
    saleStop: z.boolean().default(false),
    notForSale: z.boolean().default(false),
    quantityPriceKey: TextOrEmpty(200),
    searchable: z.boolean().default(true),
    excludeFromSync: z.boolean().default(false),
  })
  .meta({ id: 'Product' });
export type ProductInput = z.input<typeof Product>;
export type Product = z.output<typeof Product>;

/** What every field of a Product is when the import does not give it (the schema's defaults). */
export const ProductDefaults: Readonly<Omit<Product, 'sku'>> = (() => {
  const { sku: _sku, ...defaults } = Product.parse({ sku: '-' });
  return defaults;
})();

/** A product as answered: the stored object with its project. */
export const StoredProduct = Product.extend({ project: ProjectId }).meta({ id: 'StoredProduct' });
export type StoredProduct = z.output<typeof StoredProduct>;

export const ProductListMediaType = 'application/vnd.service.product.list.v2+json';

export const ProductSearchItem = z
  .object({
    type: z.string(),
    price: z.int().nullable().describe('Current list price for quantity 1 in the shop, in the currency subunit; null without a price'),
    sku: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    subtitle: z.string().nullable(),
    basePrice: z.string(),
    additionalAttributes: z.record(z.string(), z.string()),
    saleRestriction: z.string().nullable(),
    referenceUnit: z.string().nullable(),
    encodingUnit: z.string().nullable(),
    weighByCustomer: z.boolean().nullable(),
    saleStop: z.boolean(),
    notForSale: z.boolean(),
    quantityPriceKey: z.string(),
    searchable: z.boolean(),
    allowedOnDeviceTypes: z.array(z.string()),
    maxSaleQuantity: z.int().optional(),
    maxSaleText: z.string(),
  })
  .meta({ id: 'ProductSearchItem' });


export const ProductSearchResult = z.object({ products: z.array(ProductSearchItem), pagination: Pagination }).meta({ id: 'ProductSearchResult' });

export const ProductListFilter = z.object({
  q: z.string().min(1).max(200).optional(),
  excludeFromSync: z.boolean().optional(),
  withUnsearchable: z.boolean().default(false),
});

const ProductRef = z.object({ project: ProjectId, sku: Sku });

export const products = {
  get: endpoint('svc.products.get', ProductRef, StoredProduct, { repeatable: true }),
  getByPlu: endpoint('svc.products.getByPlu', z.object({ project: ProjectId, plu: Plu }), StoredProduct, { repeatable: true }),
  /** Create or update one product (the write path of the imports, with one item). */
  put: endpoint('svc.products.put', z.object({ project: ProjectId, product: Product }), z.object({ product: StoredProduct, created: z.boolean() }), { repeatable: true }),
  delete: endpoint('svc.products.delete', ProductRef, Done),
  /**
   * One page of the product list, in SKU order after `after`. The products travel as their stored
   * JSON text, so that a list of any length streams through the edge without being parsed again.
   */
  listPage: endpoint(
    'svc.products.listPage',
    ProductListFilter.extend({ project: ProjectId, after: z.string().optional(), pageSize: z.int().min(1).max(1000) }),
    z.object({ products: z.array(z.string()), next: z.string().nullable() }),
    { repeatable: true },
  ),
  search: endpoint(
    'svc.products.search',
    z.object({
      project: ProjectId,
      search: z.string().min(1).max(200),
      shopID: z.string().min(1),
      showProductsWithoutPrices: z.boolean(),
      page: z.int().min(0),
      perPage: z.int().min(1).max(100),
    }),
    ProductSearchResult,
    { repeatable: true },
  ),
  /** Every product, availability and price of the project (categories stay). */
  deleteAll: endpoint('svc.products.deleteAll', z.object({ project: ProjectId }), Done),
};
