import { inTransaction, jsonParam, type Sql, type TransactionSql } from '../../src/infra/postgres.js';
import { ProductDefaults, type Product } from '../../subjects/products.js';
import { lastPerKey } from './write-order.js';

/**
 * Documents are stored without the fields that hold their default (half the size of a typical
 * import, so half the bytes to send, parse and keep); reads merge the defaults back in SQL with
 * `productDoc`, so every reader sees the whole Product. Codes are kept whole.
 */
export function compactProduct(product: Product): Partial<Product> {
  const compact: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(product)) {
    const fallback = (ProductDefaults as Record<string, unknown>)[key];
    const isDefault =
      value === fallback ||
      (Array.isArray(value) && Array.isArray(fallback) && value.length === 0 && fallback.length === 0) ||
      (isPlainObject(value) && isPlainObject(fallback) && Object.keys(value).length === 0 && Object.keys(fallback).length === 0);
    if (!isDefault) compact[key] = value;
  }
  return compact as Partial<Product>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The whole stored Product of the row `p` (defaults merged back), as jsonb. */
export function productDoc(sql: Sql | TransactionSql) {
  // An object parameter: the driver encodes it by the jsonb type the cast gives it.
  return sql`(${jsonParam(sql, ProductDefaults)}::jsonb || p.doc)`;
}

/**
 * What the write needs of a product: its compact document and the keys derived from it. Imports
 * reduce each validated product to this at once, so the whole parsed objects of a chunk do not stay
 * alive across the transaction (they did, and took the import's peak memory above 150 MB).
 */
export interface ProductWrite {
  /** The item's line in its batch (0 outside batches): with `writtenAt`, the order of the write. */
  line: number;
  sku: string;
  doc: Partial<Product>;
  pluSet: string[];
  codes: string[];
}

export function productWrite(line: number, product: Product): ProductWrite {
  return { line, sku: product.sku, doc: compactProduct(product), pluSet: product.pluSet, codes: product.codes.map((c) => c.code) };
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
 * a concurrent transaction (the insert waits for it). The upsert returns only the rows it wrote;
 * their codes and PLUs are then made to match what was written.
 */
export async function writeProducts(sql: Sql, project: string, writes: readonly ProductWrite[], writtenAt: Date): Promise<ProductWriteOutcome> {
  const items = lastPerKey(writes, (w) => w.sku).sort((a, b) => (a.sku < b.sku ? -1 : 1));
  return inTransaction(sql, async (tx) => {
    const { refused, fresh } = await claimPlus(tx, project, items);
    const accepted = items.filter((w) => !refused.has(w.line));
    const created = new Set<string>();
    if (!accepted.length) return { refused, created };

    const rows = accepted.map((w) => ({ sku: w.sku, doc: w.doc, line: w.line }));
    const written = await tx<{ sku: string; inserted: boolean }[]>`
      insert into products (project, sku, doc, written_at, written_line)
      select ${project}, x.sku, x.doc, ${writtenAt}, x.line
      from jsonb_to_recordset(${jsonParam(tx, rows)}::jsonb) as x(sku text, doc jsonb, line int)
      on conflict (project, sku) do update
        set doc = excluded.doc, written_at = excluded.written_at, written_line = excluded.written_line
        where (products.written_at, products.written_line) <= (excluded.written_at, excluded.written_line)
      returning sku, (xmax = 0) as inserted`;
    for (const row of written) if (row.inserted) created.add(row.sku);
    // A write that lost to a later one (not returned) gives back the PLUs it had newly claimed.
    const stored = new Set(written.map((row) => row.sku));
    await releasePlus(tx, project, fresh.filter((c) => !stored.has(c.sku)));
    const bySku = new Map(accepted.map((w) => [w.sku, w]));
    await replaceCodesAndPlus(tx, project, written.map((row) => ({ write: bySku.get(row.sku) as ProductWrite, updated: !row.inserted })));
    return { refused, created };
  });
}

interface PluClaims {
  /** Lines refused, with why. */
  refused: Map<number, string>;
  /** PLUs this write newly claimed for the products it did not refuse. */
  fresh: Array<{ plu: string; sku: string }>;
}

async function claimPlus(tx: TransactionSql, project: string, items: readonly ProductWrite[]): Promise<PluClaims> {
  const refused = new Map<number, string>();
  const claims = items.flatMap((w) => w.pluSet.map((plu) => ({ plu, sku: w.sku, line: w.line })));
  if (!claims.length) return { refused, fresh: [] };

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
  const fresh = claimed.filter((c) => c.inserted).map(({ plu, sku }) => ({ plu, sku }));
  if (!lost.length) return { refused, fresh };

  const owners = await tx<{ plu: string; sku: string }[]>`
    select pl.plu, pl.sku from product_plus pl join unnest(${lost.map((c) => c.plu)}::text[]) as l(plu) on l.plu = pl.plu
    where pl.project = ${project}`;
  const ownerOf = new Map(owners.map((o) => [o.plu, o.sku]));
  for (const c of lost) {
    if (!refused.has(c.line)) refused.set(c.line, `PLU ${c.plu} belongs to product ${ownerOf.get(c.plu) ?? 'another product'}`);
  }
  // A refused product keeps its stored version: give back only the PLUs this write had newly claimed.
  const refusedSkus = new Set(items.filter((w) => refused.has(w.line)).map((w) => w.sku));
  await releasePlus(tx, project, fresh.filter((c) => refusedSkus.has(c.sku)));
  return { refused, fresh: fresh.filter((c) => !refusedSkus.has(c.sku)) };
}

async function releasePlus(tx: TransactionSql, project: string, claims: Array<{ plu: string }>): Promise<void> {
  if (!claims.length) return;
  await tx`delete from product_plus pl using unnest(${claims.map((c) => c.plu)}::text[]) as r(plu) where pl.project = ${project} and pl.plu = r.plu`;
}

// Arrays of a chunk's SKUs are joined as unnest(...) rather than compared with `= any(...)`: the
// plan of a prepared `= any` statement, made while the tables are still small, scans the table and
// compares every row with every element, which grows with the table (measured: 3.7 s of a 5.3 s
// import of 20000 products). The join keeps the index lookups.
async function replaceCodesAndPlus(tx: TransactionSql, project: string, written: Array<{ write: ProductWrite; updated: boolean }>): Promise<void> {
  const updated = written.filter((w) => w.updated).map((w) => w.write);
  if (updated.length) {
    const skus = updated.map((p) => p.sku);
    await tx`delete from product_codes pc using unnest(${skus}::text[]) as s(sku) where pc.project = ${project} and pc.sku = s.sku`;
    // PLUs the new version no longer lists are free again (those it lists were claimed before).
    const kept = updated.flatMap((p) => p.pluSet.map((plu) => ({ sku: p.sku, plu })));
    await tx`
      delete from product_plus pl using unnest(${skus}::text[]) as s(sku)
      where pl.project = ${project} and pl.sku = s.sku
        and not exists (select 1 from jsonb_to_recordset(${jsonParam(tx, kept)}::jsonb) as k(sku text, plu text) where k.sku = pl.sku and k.plu = pl.plu)`;
  }
  const codes = [...new Set(written.flatMap(({ write }) => write.codes.map((code) => `${code}\u0000${write.sku}`)))].map((key) => key.split('\u0000'));
  if (codes.length) {
    await tx`
      insert into product_codes (project, code, sku)
      select ${project}, c.code, c.sku from unnest(${codes.map((c) => c[0] as string)}::text[], ${codes.map((c) => c[1] as string)}::text[]) as c(code, sku)
      on conflict do nothing`;
  }
}

/** The stored product as JSON text, with its project. */
export async function findProductJson(sql: Sql, project: string, sku: string): Promise<string | undefined> {
  const [row] = await sql<{ json: string }[]>`
    select (${productDoc(sql)} || jsonb_build_object('project', p.project))::text as json from products p where p.project = ${project} and p.sku = ${sku}`;
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
    select p.sku, (${productDoc(sql)} || jsonb_build_object('project', p.project))::text as json
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
    select p.sku, ${productDoc(sql)} as doc from products p join (${matchingSkus(sql, project, text)}) m on m.sku = p.sku
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
