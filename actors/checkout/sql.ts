import type { Catalog, CatalogEntry } from '../../src/domain/cart.js';
import { interpretCode } from '../../src/domain/codes.js';
import { shopCategoryOrder, type LegacyPrice } from '../../src/domain/pricing.js';
import type { Sql } from '../../src/infra/postgres.js';
import type { CartItem, ShopInformation } from '../../subjects/checkout.js';
import type { PriceV2 } from '../../subjects/pricing.js';
import { ProductDefaults, type Product } from '../../subjects/products.js';
import type { ConfigurationBody } from '../../subjects/promotions.js';
import { DefaultSettings, type Settings } from '../../subjects/settings.js';
import { toDomainPrice } from '../catalog/pricing.sql.js';

export interface CartKeys {
  skus: string[];
  codes: string[];
  plus: string[];
}

/** The keys a cart's product items are looked up by: SKUs, scanned codes, and the PLUs a code may carry. */
export function cartKeys(items: readonly CartItem[]): CartKeys {
  const keys: CartKeys = { skus: [], codes: [], plus: [] };
  for (const item of items) {
    if (item.sku !== undefined) keys.skus.push(item.sku);
    if (item.scannedCode === undefined) continue;
    keys.codes.push(item.scannedCode);
    const interpreted = interpretCode(item.scannedCode);
    if (interpreted.kind === 'instore' || interpreted.kind === 'plu') keys.plus.push(...interpreted.plus);
  }
  return keys;
}

/** What a checkout reads of the project settings. */
export type CheckoutSettings = Pick<Settings, 'currency' | 'taxRates' | 'paymentMethods' | 'locale'>;

/** The project's active promotion configuration; its id and version name its compiled form. */
export interface ActivePromotion {
  id: number;
  version: number;
  body: ConfigurationBody;
}

export interface CheckoutData {
  /** Undefined when the shop does not exist. */
  shop?: ShopInformation;
  settings: CheckoutSettings;
  /** The shop's pricing categories in order, `default` last. */
  categories: string[];
  catalog: Catalog;
  /** Undefined while no configuration is active. */
  promotion?: ActivePromotion;
}

/** The version of a project that has never had a catalog write. */
const NoCatalogVersion = '0';

export interface VersionedCheckoutData extends CheckoutData {
  /** The project's catalog version the data was read at. */
  version: string;
}

/** Product fields a checkout never reads; they stay at their defaults in the checkout's catalog. */
const CheckoutUnreadFields = [
  'description', 'subtitle', 'imageUrl', 'basePrice', 'additionalAttributes', 'codes', 'pluSet',
  'setComponents', 'bundledProduct', 'baseProduct', 'isReturnable',
  'searchable', 'excludeFromSync', 'weighByCustomer', 'outOfStock',
] satisfies Array<keyof Product>;

interface ProductRow {
  sku: string;
  doc: Partial<Product>;
  keys: Array<['code' | 'plu', string]>;
  v2: Record<string, PriceV2[]> | null;
  legacy: Record<string, LegacyPrice> | null;
  isDeposit: boolean;
}

interface DataRow {
  version: string | null;
  shop: ShopInformation | null;
  settings: CheckoutSettings | null;
  promotion: ActivePromotion | null;
  categories: Array<{ id: string; priority: number }>;
  products: ProductRow[];
}

/**
 * Everything a checkout info needs from the database, in one statement and one JSON value: the
 * shop, the project settings, the shop's pricing categories, and the products the cart's SKUs,
 * codes and PLUs name with their deposit products and their prices in those categories (and
 * `default`). One round trip, one parse: three statements cost a socket write each, and fifty
 * small jsonb columns a parse each, which together were most of a checkout's CPU.
 *
 * Arrays are joined as unnest(...) (see catalog/products.sql.ts); the checkout pool keeps a generic
 * plan of this statement (see service.ts).
 */
export async function loadCheckoutData(sql: Sql, project: string, shopId: string, keys: CartKeys): Promise<VersionedCheckoutData> {
  const [row] = await sql<{ data: DataRow }[]>`
    with cats as (
      select c.id, c.priority from pricing_categories c
      join pricing_category_shops s on s.project = c.project and s.category_id = c.id
      where c.project = ${project} and s.shop_id = ${shopId}
    ),
    priced as (select id from cats union select 'default'),
    -- Codes and PLUs are looked up one by one through their primary keys: a LATERAL subquery with
    -- "offset 0" (so that the planner keeps it a subquery) rather than a join, which the planner
    -- turned into a scan of every PLU of the project (0.14 of the statement's 0.55 ms).
    requested as (
      select k.key as sku, null as kind, null as key from unnest(${keys.skus}::text[]) as k(key)
      union all
      select x.sku, 'code', x.code from unnest(${keys.codes}::text[]) as k(key)
        cross join lateral (select c.sku, c.code from product_codes c where c.project = ${project} and c.code = k.key offset 0) x
      union all
      select x.sku, 'plu', x.plu from unnest(${keys.plus}::text[]) as k(key)
        cross join lateral (select pl.sku, pl.plu from product_plus pl where pl.project = ${project} and pl.plu = k.key offset 0) x
    ),
    found as (select distinct sku from requested),
    -- "is not null" rather than "doc ? 'depositProduct'": the latter tempts the planner into the
    -- partial deposit index, scanning every product with a deposit (2.7 ms instead of 0.1 ms).
    deposits as (
      select distinct p.doc ->> 'depositProduct' as sku from found f
      join products p on p.project = ${project} and p.sku = f.sku
      where (p.doc ->> 'depositProduct') is not null
    ),
    wanted as (select sku from found union select sku from deposits),
    rows as (
      -- Only what pricing reads: the rest of a document (texts, images, codes) is left in Postgres.
      select p.sku, p.doc - ${CheckoutUnreadFields}::text[] as doc,
        (select coalesce(json_agg(json_build_array(r.kind, r.key)), '[]') from requested r where r.sku = p.sku and r.kind is not null) as keys,
        (select json_object_agg(cp.category, cp.prices) from category_prices cp join priced on priced.id = cp.category
          where cp.project = p.project and cp.sku = p.sku) as v2,
        (select json_object_agg(lp.category, json_build_object(
            'listPrice', lp.list_price, 'discountedPrice', lp.discounted_price,
            'customerCardPrice', lp.customer_card_price, 'basePrice', lp.base_price))
          from legacy_prices lp join priced on priced.id = lp.category
          where lp.project = p.project and lp.sku = p.sku) as legacy,
        (coalesce(p.doc ->> 'productType' = 'deposit', false) or exists (
          select 1 from products d
          where d.project = p.project and d.doc ? 'depositProduct' and (d.doc ->> 'depositProduct') collate "C" = p.sku)) as "isDeposit"
      from wanted w join products p on p.project = ${project} and p.sku = w.sku
    )
    select json_build_object(
      'version', (select version::text from catalog_versions where project = ${project}),
      'shop', (select json_build_object(
          'externalId', coalesce(external_id, ''), 'name', name, 'email', email, 'phone', phone, 'street', street,
          'zip', zip, 'city', city, 'state', state, 'country', country)
        from shops where project = ${project} and id = ${shopId}),
      'settings', (select json_build_object('currency', currency, 'taxRates', tax_rates, 'paymentMethods', payment_methods, 'locale', locale)
        from project_settings where project = ${project}),
      'promotion', (select json_build_object('id', id, 'version', version, 'body', json_build_object('rounding', rounding, 'ranks', ranks, 'groups', groups))
        from promotion_configurations where project = ${project} and active),
      'categories', (select coalesce(json_agg(json_build_object('id', id, 'priority', priority)), '[]') from cats),
      'products', (select coalesce(json_agg(rows order by rows.sku), '[]') from rows)
    ) as data`;
  const data = row?.data as DataRow;

  const bySku = new Map<string, CatalogEntry>();
  const skuOfCode = new Map<string, string>();
  const skuOfPlu = new Map<string, string>();
  for (const p of data.products) {
    bySku.set(p.sku, {
      // Stored compact, and read only by pricing: the fields a document leaves out are its
      // defaults, which it inherits from ProductDefaults instead of copying 35 fields per product.
      product: Object.assign(Object.create(ProductDefaults) as Product, p.doc, { sku: p.sku }),
      isDeposit: p.isDeposit,
      prices: {
        v2: new Map(Object.entries(p.v2 ?? {}).map(([category, prices]) => [category, prices.flatMap(toDomainPrice)])),
        legacy: new Map(Object.entries(p.legacy ?? {})),
      },
    });
    // Products come in SKU order: a code several products share stands for the first of them.
    for (const [kind, key] of p.keys) {
      if (kind === 'code' && !skuOfCode.has(key)) skuOfCode.set(key, p.sku);
      if (kind === 'plu') skuOfPlu.set(key, p.sku);
    }
  }
  return {
    version: data.version ?? NoCatalogVersion,
    ...(data.shop ? { shop: data.shop } : {}),
    settings: data.settings ?? DefaultSettings,
    categories: shopCategoryOrder(data.categories),
    catalog: { bySku, skuOfCode, skuOfPlu },
    ...(data.promotion ? { promotion: data.promotion } : {}),
  };
}

/** The current catalog version of each project (see migrations/0005_catalog_versions.sql). */
export async function readCatalogVersions(sql: Sql, projects: string[]): Promise<Map<string, string>> {
  const rows = await sql<{ project: string; version: string }[]>`
    select v.project, v.version::text from unnest(${projects}::text[]) as p(project)
    join catalog_versions v on v.project = p.project`;
  const versions = new Map(projects.map((project) => [project, NoCatalogVersion]));
  for (const row of rows) versions.set(row.project, row.version);
  return versions;
}
