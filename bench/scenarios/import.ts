import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import { compactProduct } from '../../actors/catalog/products.sql.js';
import { CategoryPricing } from '../../subjects/pricing.js';
import { Product } from '../../subjects/products.js';
import { fixtureCategoryPricing, fixtureProduct } from '../fixtures.js';
import { cpuSpentBy, formatCpu } from '../cpu.js';
import { startBench, type Bench } from '../harness.js';

/**
 * Issue 3's import scenario: 20000 products (realistic fields, codes, PLUs) as one ndjson request,
 * then 20000 category prices, each beside a raw COPY of the same rows into the same tables of the
 * same Postgres. Goal: the product import in at most 1.5 s, at least 40% of the COPY rate, with the
 * service's peak RSS growing at most 150 MB.
 */
const Items = 20_000;

export async function importScenario(): Promise<string[]> {
  const bench = await startBench();
  const sql = postgres(bench.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const products = Array.from({ length: Items }, (_, i) => fixtureProduct(i + 1));
    const prices = Array.from({ length: Items }, (_, i) => fixtureCategoryPricing(i + 1));
    const productBody = products.map((p) => JSON.stringify(p)).join('\n');
    const priceBody = prices.map((p) => JSON.stringify(p)).join('\n');

    // Warm-up: 1000 other products, so that the measured import does not pay for JIT compilation.
    const warmUp = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ ...fixtureProduct(i + 1), sku: `WARM-${i}` })).join('\n');
    await importWithRss(bench, '/bench-warm-up/products/_batch', warmUp, 'bench-warm-up');

    // Each measured step starts from a checkpoint, so none pays for the dirty pages of the one before.
    await sql`checkpoint`;
    const copyProducts = await timed(() => copyProductRows(sql, 'copy-baseline', products));
    await sql`checkpoint`;
    const { result: productImport, spent: productCpu } = await cpuSpentBy(bench.cpu, () => importWithRss(bench, '/bench-import/products/_batch', productBody));
    await sql`checkpoint`;
    const copyPrices = await timed(() => copyPriceRows(sql, 'copy-baseline', prices));
    await sql`checkpoint`;
    const { result: priceImport, spent: priceCpu } = await cpuSpentBy(bench.cpu, () => importWithRss(bench, '/bench-import/pricing/v2/category/batch', priceBody));

    const ratio = copyProducts / productImport.ms;
    const met = productImport.ms <= 1500 && ratio >= 0.4 && productImport.rssGrowthMb <= 150 && productImport.errors === 0;
    return [
      `import, ${Items} products as one ndjson request (${(productBody.length / 1e6).toFixed(1)} MB), after a warm-up import of 1000`,
      line('  through the service', productImport.ms, `peak RSS +${productImport.rssGrowthMb.toFixed(0)} MB${errorsOf(productImport)}`),
      formatCpu(productCpu, Items / 1000, '1000 products'),
      line('  raw COPY of the same rows', copyProducts, 'products, codes and PLUs'),
      `  ratio ${(ratio * 100).toFixed(0)}% of the COPY rate   goal ≤ 1.5 s, ≥ 40%, RSS growth ≤ 150 MB: ${met ? 'met' : 'NOT met'}`,
      `import, ${Items} category prices as one ndjson request (${(priceBody.length / 1e6).toFixed(1)} MB)`,
      line('  through the service', priceImport.ms, `peak RSS +${priceImport.rssGrowthMb.toFixed(0)} MB${errorsOf(priceImport)}`),
      formatCpu(priceCpu, Items / 1000, '1000 prices'),
      line('  raw COPY of the same rows', copyPrices, ''),
      `  ratio ${((copyPrices / priceImport.ms) * 100).toFixed(0)}% of the COPY rate`,
    ];
  } finally {
    await sql.end();
    await bench.close();
  }
}

function line(label: string, ms: number, note: string): string {
  return `${label.padEnd(34)} ${(ms / 1000).toFixed(2).padStart(5)} s ${((Items / ms) * 1000).toFixed(0).padStart(7)} items/s   ${note}`;
}

function errorsOf(result: { errors: number }): string {
  return result.errors ? `   (${result.errors} items refused)` : '';
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Posts one ndjson batch, sampling the service's resident memory every 5 ms meanwhile. */
async function importWithRss(bench: Bench, path: string, body: string, project = 'bench-import') {
  const token = await bench.token({ project, permissions: ['productsWrite', 'pricingWrite'] });
  const pid = bench.pids[0] ?? 0;
  const baseline = rssMb(pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 5);
  const started = performance.now();
  const response = await fetch(`${bench.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body });
  const text = await response.text();
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, rssMb(pid));
  if (response.status !== 200) throw new Error(`import answered ${response.status}: ${text.slice(0, 300)}`);
  const errors = text.split('\n').filter((l) => l.includes('"status":"error"')).length;
  return { ms, rssGrowthMb: peak - baseline, errors };
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) / 1024;
}

// The rows the import writes, as COPY text (tab-separated; \ and control characters escaped).
const field = (value: string) => value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');

async function copyProductRows(sql: postgres.Sql, project: string, items: ReturnType<typeof fixtureProduct>[]): Promise<void> {
  const parsed = items.map((i) => Product.parse(i));
  const at = new Date().toISOString();
  await copy(sql`copy products (project, sku, doc, written_at, written_line) from stdin`, parsed.map((p, i) => [project, p.sku, JSON.stringify(compactProduct(p)), at, String(i + 1)]));
  await copy(sql`copy product_codes (project, code, sku) from stdin`, parsed.flatMap((p) => p.codes.map((c) => [project, c.code, p.sku])));
  await copy(sql`copy product_plus (project, plu, sku) from stdin`, parsed.flatMap((p) => p.pluSet.map((plu) => [project, plu, p.sku])));
}

async function copyPriceRows(sql: postgres.Sql, project: string, items: ReturnType<typeof fixtureCategoryPricing>[]): Promise<void> {
  const at = new Date().toISOString();
  const rows = items.map((i, k) => {
    const pricing = CategoryPricing.parse(i);
    return [project, pricing.sku, pricing.category, JSON.stringify(pricing.prices), at, String(k + 1)];
  });
  await copy(sql`copy category_prices (project, sku, category, prices, written_at, written_line) from stdin`, rows);
}

async function copy(statement: postgres.PendingQuery<postgres.Row[]>, rows: string[][]): Promise<void> {
  const stream = await statement.writable();
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', reject);
  });
  for (const row of rows) {
    if (!stream.write(`${row.map(field).join('\t')}\n`)) await new Promise((resolve) => stream.once('drain', resolve));
  }
  stream.end();
  await done;
}
