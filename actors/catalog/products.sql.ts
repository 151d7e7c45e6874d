import { inTransaction, jsonParam, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import type { Product } from '../../subjects/products.js';
import { lastPerKey } from './write-order.js';

export interface ProductWrite {
  /** The item's line in its batch (0 outside batches): with `writtenAt`, the order of the write. */
  line: number;
  product: Product;
}

export interface ProductWriteOutcome {
  /** Lines refused, with why: a PLU that another product owns. */
  refused: Map<number, string>;
  /** SKUs that did not exist before. */
  created: Set<string>;
}

/**
 * Writes products set-based, in one transaction. Every line not refused is stored, unless a later
 * write of the same SKU is already stored (then the later one stays).
 *
 * PLUs are claimed first with `insert ... on conflict do update ... where owner = same sku`: a
 * claim that returns no row belongs to another product, also when that product is being written by
 * a concurrent transaction (the insert waits for it). Codes and PLUs are then rebuilt from the
 * stored documents, so they always match the version that won.
 */
export async function writeProducts(sql: Sql, project: string, writes: readonly ProductWrite[], writtenAt: Date): Promise<ProductWriteOutcome> {
  const items = lastPerKey(writes, (w) => w.product.sku).sort((a, b) => (a.product.sku < b.product.sku ? -1 : 1));
  return inTransaction(sql, async (tx) => {
    const refused = await claimPlus(tx, project, items);
    const accepted = items.filter((w) => !refused.has(w.line));
    const created = new Set<string>();
    if (accepted.length) {
      const rows = accepted.map((w) => ({ sku: w.product.sku, doc: w.product, line: w.line }));
      const written = await tx<{ sku: string; inserted: boolean }[]>`
        insert into products (project, sku, doc, written_at, written_line)
        select ${project}, x.sku, x.doc, ${writtenAt}, x.line
        from jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb) as x(sku text, doc jsonb, line int)
        on conflict (project, sku) do update
          set doc = excluded.doc, written_at = excluded.written_at, written_line = excluded.written_line
          where (products.written_at, products.written_line) <= (excluded.written_at, excluded.written_line)
        returning sku, (xmax = 0) as inserted`;
      for (const row of written) if (row.inserted) created.add(row.sku);
      await rebuildCodesAndPlus(tx, project, accepted.map((w) => w.product.sku));
    }
    return { refused, created };
  });
}

async function claimPlus(tx: TransactionSql, project: string, items: readonly ProductWrite[]): Promise<Map<number, string>> {
  const refused = new Map<number, string>();
  const claims = items.flatMap((w) => w.product.pluSet.map((plu) => ({ plu, sku: w.product.sku, line: w.line })));
  if (!claims.length) return refused;

  const claimed = await tx<{ plu: string; sku: string; inserted: boolean }[]>`
    with wanted as (
      select distinct on (plu) plu, sku from jsonb_to_recordset(${jsonParam(tx, claims)}::jsonb) as w(plu text, sku text, line int)
      order by plu, line
    )
    insert into product_plus (project, plu, sku)
    select ${project}, plu, sku from wanted order by plu
    on conflict (project, plu) do update set sku = excluded.sku where product_plus.sku = excluded.sku
    returning plu, sku, (xmax = 0) as inserted`;
  const owned = new Set(claimed.map((c) => `${c.plu}\u0000${c.sku}`));
  const lost = claims.filter((c) => !owned.has(`${c.plu}\u0000${c.sku}`));
  if (!lost.length) return refused;

  const owners = await tx<{ plu: string; sku: string }[]>`
    select plu, sku from product_plus where project = ${project} and plu = any(${lost.map((c) => c.plu)})`;
  const ownerOf = new Map(owners.map((o) => [o.plu, o.sku]));
  for (const c of lost) {
    if (!refused.has(c.line)) refused.set(c.line, `PLU ${c.plu} belongs to product ${ownerOf.get(c.plu) ?? 'another product'}`);
  }
  // A refused product keeps its stored version: release only the PLUs this write had newly claimed.
  const refusedSkus = new Set(items.filter((w) => refused.has(w.line)).map((w) => w.product.sku));
  const release = claimed.filter((c) => c.inserted && refusedSkus.has(c.sku)).map((c) => c.plu);
  if (release.length) await tx`delete from product_plus where project = ${project} and plu = any(${release})`;
  return refused;
}

async function rebuildCodesAndPlus(tx: TransactionSql, project: string, skus: string[]): Promise<void> {
  await tx`delete from product_codes where project = ${project} and sku = any(${skus})`;
  await tx`
    insert into product_codes (project, code, sku)
    select distinct ${project}, c.code, p.sku
    from products p cross join lateral jsonb_to_recordset(p.doc -> 'codes') as c(code text)
    where p.project = ${project} and p.sku = any(${skus})
    on conflict do nothing`;
  await tx`
    delete from product_plus pl
    where pl.project = ${project} and pl.sku = any(${skus})
      and not exists (
        select 1 from products p where p.project = pl.project and p.sku = pl.sku and p.doc -> 'pluSet' ? pl.plu
      )`;
}

/** The stored product as JSON text, with its project. */
export async function findProductJson(sql: Sql, project: string, sku: string): Promise<string | undefined> {
  const [row] = await sql<{ json: string }[]>`
    select (doc || jsonb_build_object('project', project))::text as json from products where project = ${project} and sku = ${sku}`;
  return row?.json;
}

export async function findSkuByPlu(sql: Sql, project: string, plu: string): Promise<string | undefined> {
  const [row] = await sql<{ sku: string }[]>`select sku from product_plus where project = ${project} and plu = ${plu}`;
  return row?.sku;
}

export async function deleteProduct(sql: Sql, project: string, sku: string): Promise<boolean> {
  return inTransaction(sql, async (tx) => {
    await tx`delete from product_codes where project = ${project} and sku = ${sku}`;
    await tx`delete from product_plus where project = ${project} and sku = ${sku}`;
    const result = await tx`delete from products where project = ${project} and sku = ${sku}`;
    return result.count > 0;
  });
}

/** Every product, code, PLU, availability and price of a project; pricing categories stay. */
export async function deleteCatalog(sql: Sql, project: string): Promise<void> {
  await inTransaction(sql, async (tx) => {
    for (const table of ['product_codes', 'product_plus', 'products', 'availabilities', 'category_prices', 'legacy_prices', 'legacy_pricing_writes']) {
      await tx`delete from ${tx(table)} where project = ${project}`;
    }
  });
}

export interface ProductFilter {
  q?: string;
  excludeFromSync?: boolean;
  withUnsearchable: boolean;
}

/** One page of the list in SKU order, as JSON text with the project. */
export async function listProductsJson(sql: Sql, project: string, filter: ProductFilter, after: string | undefined, limit: number) {
  const matches = filter.q ? matchingSkus(sql, project, filter.q) : sql`select sku from products where project = ${project}`;
  return sql<{ sku: string; json: string }[]>`
    select p.sku, (p.doc || jsonb_build_object('project', p.project))::text as json
    from products p join (${matches}) m on m.sku = p.sku
    where p.project = ${project}
      ${filter.withUnsearchable ? sql`` : sql`and p.searchable`}
      ${filter.excludeFromSync === undefined ? sql`` : sql`and p.exclude_from_sync = ${filter.excludeFromSync}`}
      ${after === undefined ? sql`` : sql`and p.sku > ${after}`}
    order by p.sku
    limit ${limit}`;
}

/**
 * The SKUs a search text finds: words of name and description (each word as a prefix), united with
 * SKUs, codes and PLUs that start with the text.
 */
export function matchingSkus(sql: Sql, project: string, text: string) {
  const prefix = `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const tsQuery = words.map((w) => `${w}:*`).join(' & ');
  return sql`
    ${tsQuery ? sql`select sku from products where project = ${project} and search @@ to_tsquery('simple', ${tsQuery}) union` : sql``}
    select sku from products where project = ${project} and sku like ${prefix}
    union select sku from product_codes where project = ${project} and code like ${prefix}
    union select sku from product_plus where project = ${project} and plu like ${prefix}`;
}

export interface SearchOptions {
  /** The shop's categories, in order; with `currency` and `at`, what "has a price" means. */
  categories: string[];
  currency: string;
  at: Date;
  withoutPrices: boolean;
}

/**
 * PoS search: searchable products the text finds, by name. Unless products without prices are
 * wanted, only products with a price in the shop now (the same rule as the price resolution: a v2
 * list or discount price for one unit, valid now, in the currency; else any legacy price).
 */
export function searchProducts(sql: Sql, project: string, text: string, options: SearchOptions) {
  const priced = options.withoutPrices
    ? sql``
    : sql`and (
        exists (
          select 1 from category_prices cp
          where cp.project = p.project and cp.sku = p.sku and cp.category = any(${options.categories})
            and jsonb_path_exists(cp.prices, ${SellablePrice}::jsonpath,
                                  jsonb_build_object('currency', ${options.currency}::text, 'now', ${options.at.toISOString()}::text)))
        or exists (
          select 1 from legacy_prices lp
          where lp.project = p.project and lp.sku = p.sku and lp.category = any(${options.categories})))`;
  const found = sql`
    select p.sku, p.doc from products p join (${matchingSkus(sql, project, text)}) m on m.sku = p.sku
    where p.project = ${project} and p.searchable ${priced}`;
  return {
    count: async () => ((await sql<{ n: number }[]>`select count(*)::int as n from (${found}) f`)[0]?.n ?? 0),
    page: (offset: number, limit: number) =>
      sql<{ sku: string; doc: Product }[]>`select * from (${found}) f order by f.doc ->> 'name', f.sku offset ${offset} limit ${limit}`,
  };
}

// Timestamps of prices are stored in UTC ISO form, so comparing them as text compares them as time.
const SellablePrice = `$[*] ? (@.currency == $currency && (@.tier == "list" || @.tier == "discount") && @.quantity <= 1
  && (!(exists(@.validFrom)) || @.validFrom <= $now) && (!(exists(@.validTo)) || @.validTo > $now))`;
