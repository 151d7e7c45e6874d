import { parseAmount } from '../../subjects/formats/money.js';
import { DefaultCategory, shopCategoryOrder, type LegacyPrice, type PriceV2 as DomainPrice, type ProductPrices } from '../../src/domain/pricing.js';
import { inTransaction, jsonParam, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import type { CategoryPricing, LegacyPrice as StoredLegacyPrice, PriceBatchItem, PricingCategoryInput, PricingInput, PriceV2 } from '../../subjects/pricing.js';
import { lastPerKey } from './write-order.js';

// ---------------------------------------------------------------- pricing v2

export interface CategoryPricingWrite {
  line: number;
  pricing: CategoryPricing;
}

/** Replaces the prices of each (sku, category); a later write already stored stays. */
export async function writeCategoryPrices(sql: Sql, project: string, writes: readonly CategoryPricingWrite[], writtenAt: Date): Promise<void> {
  const items = lastPerKey(writes, (w) => `${w.pricing.sku}\u0000${w.pricing.category}`);
  const rows = items.map((w) => ({ sku: w.pricing.sku, category: w.pricing.category, prices: w.pricing.prices, line: w.line }));
  await inTransaction(sql, (tx) => tx`
    insert into category_prices (project, sku, category, prices, written_at, written_line)
    select ${project}, x.sku, x.category, x.prices, ${writtenAt}, x.line
    from jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb) as x(sku text, category text, prices jsonb, line int)
    order by x.sku, x.category
    on conflict (project, sku, category) do update
      set prices = excluded.prices, written_at = excluded.written_at, written_line = excluded.written_line
      where (category_prices.written_at, category_prices.written_line) <= (excluded.written_at, excluded.written_line)`);
}

export async function categoryPricesOfSku(sql: Sql, project: string, sku: string) {
  return sql<{ category: string; prices: PriceV2[] }[]>`
    select category, prices from category_prices
    where project = ${project} and sku = ${sku} and jsonb_array_length(prices) > 0
    order by category`;
}

// ---------------------------------------------------------------- legacy categories

interface CategoryRow {
  id: string;
  name: string | null;
  priority: number;
  shops: string[];
}

const categoryColumns = (sql: Sql) => sql`
  c.id, c.name, c.priority,
  coalesce((select array_agg(s.shop_id order by s.shop_id) from pricing_category_shops s
            where s.project = c.project and s.category_id = c.id), '{}') as shops`;

export function listCategories(sql: Sql, project: string) {
  return sql<CategoryRow[]>`
    select ${categoryColumns(sql)} from pricing_categories c where c.project = ${project} order by c.priority desc, c.id`;
}

export async function findCategory(sql: Sql, project: string, id: string): Promise<CategoryRow | undefined> {
  const [row] = await sql<CategoryRow[]>`
    select ${categoryColumns(sql)} from pricing_categories c where c.project = ${project} and c.id = ${id}`;
  return row;
}

/** Inserts (mode `create`, false when the id exists) or replaces (mode `replace`, false when it does not). */
export async function saveCategory(sql: Sql, project: string, id: string, category: PricingCategoryInput, mode: 'create' | 'replace'): Promise<boolean> {
  return inTransaction(sql, async (tx) => {
    const saved =
      mode === 'create'
        ? await tx`
            insert into pricing_categories (project, id, name, priority) values (${project}, ${id}, ${category.name}, ${category.priority})
            on conflict do nothing`
        : await tx`
            update pricing_categories set name = ${category.name}, priority = ${category.priority}
            where project = ${project} and id = ${id}`;
    if (!saved.count) return false;
    await tx`delete from pricing_category_shops where project = ${project} and category_id = ${id}`;
    const shops = [...new Set(category.shops.map((s) => s.id))];
    if (shops.length) {
      await tx`
        insert into pricing_category_shops (project, category_id, shop_id)
        select ${project}, ${id}, unnest(${shops}::text[])`;
    }
    return true;
  });
}

/** The categories a shop's prices come from, in the order to try them (`default` last). */
export async function shopCategories(sql: Sql | TransactionSql, project: string, shopId: string): Promise<string[]> {
  const rows = await sql<{ id: string; priority: number }[]>`
    select c.id, c.priority from pricing_categories c
    join pricing_category_shops s on s.project = c.project and s.category_id = c.id
    where c.project = ${project} and s.shop_id = ${shopId}`;
  return shopCategoryOrder(rows);
}

// ---------------------------------------------------------------- legacy prices

interface LegacyRow {
  category: string;
  list_price: string;
  discounted_price: string | null;
  customer_card_price: string | null;
  base_price: string | null;
}

export async function legacyPricesOfSku(sql: Sql, project: string, sku: string): Promise<StoredLegacyPrice[]> {
  const rows = await sql<LegacyRow[]>`
    select category, list_price, discounted_price, customer_card_price, base_price
    from legacy_prices where project = ${project} and sku = ${sku} order by category`;
  return rows.map(toLegacyPrice);
}

function toLegacyPrice(row: LegacyRow): StoredLegacyPrice {
  const amount = (value: string | null) => (value === null ? null : Number(value));
  return {
    category: row.category,
    listPrice: Number(row.list_price),
    discountedPrice: amount(row.discounted_price),
    customerCardPrice: amount(row.customer_card_price),
    basePrice: row.base_price,
  };
}

export type PricingWrite = { line: number; op: 'put'; pricing: PricingInput } | { line: number; op: 'delete'; sku: string };

/**
 * Replaces or deletes whole legacy Pricings (every category of a SKU). The SKU's write order is
 * claimed first; a SKU whose stored order is later is left alone.
 */
export async function writePricings(sql: Sql, project: string, writes: readonly PricingWrite[], writtenAt: Date): Promise<void> {
  const items = lastPerKey(writes, (w) => skuOf(w)).sort((a, b) => (skuOf(a) < skuOf(b) ? -1 : 1));
  await inTransaction(sql, async (tx) => {
    const claims = items.map((w) => ({ sku: skuOf(w), line: w.line }));
    const won = await tx<{ sku: string }[]>`
      insert into legacy_pricing_writes (project, sku, written_at, written_line)
      select ${project}, x.sku, ${writtenAt}, x.line from jsonb_to_recordset(${jsonParam(tx, claims)}::jsonb) as x(sku text, line int)
      on conflict (project, sku) do update set written_at = excluded.written_at, written_line = excluded.written_line
        where (legacy_pricing_writes.written_at, legacy_pricing_writes.written_line) <= (excluded.written_at, excluded.written_line)
      returning sku`;
    if (!won.length) return;
    const skus = won.map((w) => w.sku);
    await tx`delete from legacy_prices lp using unnest(${skus}::text[]) as s(sku) where lp.project = ${project} and lp.sku = s.sku`;
    const winners = new Set(skus);
    const prices = items.flatMap((w) => (w.op === 'put' && winners.has(w.pricing.sku) ? w.pricing.prices.map((p) => ({ ...p, sku: w.pricing.sku, line: w.line })) : []));
    if (prices.length) await insertLegacyPrices(tx, project, prices, writtenAt, false);
  });
}

function skuOf(w: PricingWrite): string {
  return w.op === 'put' ? w.pricing.sku : w.sku;
}

/** Creates or replaces single prices (one SKU in one category), unless a later write is stored. */
export async function writeLegacyPrices(sql: Sql, project: string, writes: ReadonlyArray<{ line: number; price: PriceBatchItem }>, writtenAt: Date): Promise<void> {
  const items = lastPerKey(writes, (w) => `${w.price.sku}\u0000${w.price.category}`);
  await inTransaction(sql, (tx) => insertLegacyPrices(tx, project, items.map((w) => ({ ...w.price, line: w.line })), writtenAt, true));
}

async function insertLegacyPrices(
  tx: TransactionSql,
  project: string,
  prices: Array<PriceBatchItem & { line: number }>,
  writtenAt: Date,
  respectPricingWrites: boolean,
): Promise<void> {
  const rows = [...prices].sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : a.category < b.category ? -1 : 1));
  await tx`
    insert into legacy_prices (project, sku, category, list_price, discounted_price, customer_card_price, base_price, written_at, written_line)
    select ${project}, x.sku, x."category", x."listPrice", x."discountedPrice", x."customerCardPrice", x."basePrice", ${writtenAt}, x.line
    from jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb)
      as x(sku text, "category" text, "listPrice" bigint, "discountedPrice" bigint, "customerCardPrice" bigint, "basePrice" text, line int)
    ${
      respectPricingWrites
        ? tx`where not exists (
               select 1 from legacy_pricing_writes w
               where w.project = ${project} and w.sku = x.sku and (w.written_at, w.written_line) > (${writtenAt}::timestamptz, x.line))`
        : tx``
    }
    on conflict (project, sku, category) do update
      set list_price = excluded.list_price, discounted_price = excluded.discounted_price,
          customer_card_price = excluded.customer_card_price, base_price = excluded.base_price,
          written_at = excluded.written_at, written_line = excluded.written_line
      where (legacy_prices.written_at, legacy_prices.written_line) <= (excluded.written_at, excluded.written_line)`;
}

export async function deleteLegacyPricing(sql: Sql, project: string, sku: string, at: Date): Promise<boolean> {
  return inTransaction(sql, async (tx) => {
    const deleted = await tx`delete from legacy_prices where project = ${project} and sku = ${sku}`;
    await tx`
      insert into legacy_pricing_writes (project, sku, written_at, written_line) values (${project}, ${sku}, ${at}, 0)
      on conflict (project, sku) do update set written_at = excluded.written_at, written_line = 0`;
    return deleted.count > 0;
  });
}

export async function deleteAllLegacyPricings(sql: Sql, project: string): Promise<void> {
  await inTransaction(sql, async (tx) => {
    await tx`delete from legacy_prices where project = ${project}`;
    await tx`delete from legacy_pricing_writes where project = ${project}`;
  });
}

export async function deleteLegacyPrice(sql: Sql, project: string, sku: string, category: string): Promise<boolean> {
  const result = await sql`delete from legacy_prices where project = ${project} and sku = ${sku} and category = ${category}`;
  return result.count > 0;
}

// ---------------------------------------------------------------- prices for resolution

/**
 * The v2 and legacy prices of some SKUs in some categories (one round trip), as the domain's
 * ProductPrices. Amounts are converted with each price's own currency; prices in another currency
 * than the project's are filtered out by the resolution.
 */
export async function loadProductPrices(sql: Sql | TransactionSql, project: string, skus: readonly string[], categories: readonly string[]): Promise<Map<string, ProductPrices>> {
  const cats = categories.length ? [...categories] : [DefaultCategory];
  // unnest joins, not `= any`: see products.sql.ts (rebuildCodesAndPlus).
  const rows = await sql<{ sku: string; category: string; v2: PriceV2[] | null; legacy: LegacyRow | null }[]>`
    with wanted as (select s.sku, c.category from unnest(${[...skus]}::text[]) as s(sku) cross join unnest(${cats}::text[]) as c(category))
    select cp.sku, cp.category, cp.prices as v2, null::jsonb as legacy
      from wanted w join category_prices cp on cp.project = ${project} and cp.sku = w.sku and cp.category = w.category
    union all
    select lp.sku, lp.category, null, jsonb_build_object(
        'category', lp.category, 'list_price', lp.list_price::text, 'discounted_price', lp.discounted_price::text,
        'customer_card_price', lp.customer_card_price::text, 'base_price', lp.base_price)
      from wanted w join legacy_prices lp on lp.project = ${project} and lp.sku = w.sku and lp.category = w.category`;
  const result = new Map<string, { v2: Map<string, DomainPrice[]>; legacy: Map<string, LegacyPrice> }>();
  for (const row of rows) {
    let entry = result.get(row.sku);
    if (!entry) result.set(row.sku, (entry = { v2: new Map(), legacy: new Map() }));
    if (row.v2) entry.v2.set(row.category, row.v2.flatMap(toDomainPrice));
    if (row.legacy) entry.legacy.set(row.category, toLegacyPrice(row.legacy));
  }
  return result;
}

/** A stored v2 price as the resolution counts it (amount in the subunit); none when unreadable. */
export function toDomainPrice(p: PriceV2): DomainPrice[] {
  const amount = parseAmount(p.price, p.currency);
  if (amount === undefined) return [];
  return [
    {
      amount,
      currency: p.currency,
      tier: p.tier,
      quantity: p.quantity,
      ...(p.validFrom ? { validFrom: Date.parse(p.validFrom) } : {}),
      ...(p.validTo ? { validTo: Date.parse(p.validTo) } : {}),
      ...(p.basePrice ? { basePrice: p.basePrice } : {}),
    },
  ];
}
