import { gs1CheckDigit } from '../src/domain/codes.js';
import { fixtureCategoryPricing, fixtureProduct } from './fixtures.js';
import type { Bench } from './harness.js';

/** A catalog through the API, as a retailer's nightly import makes it: products, prices, a shop. */
/**
 * How a bench project's sales are signed. The service runs as in production, where a project must
 * choose (else it cannot sell); the scenarios sign nothing (`none`) unless they measure signing, so
 * that their figures compare with runs from before fiscalization.
 */
export type BenchFiscalization = { provider: 'none' | 'local' } | { provider: 'fiskaly'; tssId: string; apiKey: string; apiSecret: string; adminPin: string; baseUrl: string };

export async function chooseFiscalization(bench: Bench, project: string, fiscalization: BenchFiscalization): Promise<void> {
  const token = await bench.token({ project, permissions: ['projectsWrite'] });
  const res = await fetch(`${bench.url}/${project}/settings`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      currency: 'EUR',
      taxRates: { normal: '19', reduced: '7' },
      paymentMethods: ['cash'],
      fiscalization: fiscalization.provider === 'none' ? { provider: 'none', reason: 'benchmark' } : fiscalization,
    }),
  });
  if (!res.ok) throw new Error(`choosing the fiscalization failed: ${res.status} ${await res.text()}`);
}

export async function seedCatalog(bench: Bench, project: string, count: number, fiscalization: BenchFiscalization = { provider: 'none' }): Promise<void> {
  await chooseFiscalization(bench, project, fiscalization);
  const token = await bench.token({ project, permissions: ['productsWrite', 'pricingWrite', 'shopsWrite'] });
  const post = async (path: string, body: string, type = 'application/x-ndjson') => {
    const res = await fetch(`${bench.url}/${project}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': type }, body });
    const text = await res.text();
    if (!res.ok || text.includes('"status":"error"')) throw new Error(`seeding ${path} failed: ${res.status} ${text.slice(0, 300)}`);
  };
  const ndjson = (items: unknown[]) => items.map((i) => JSON.stringify(i)).join('\n');
  const products = Array.from({ length: count }, (_, i) => fixtureProduct(i + 1));
  await post('/products/_batch', ndjson(products));
  await post('/products/_batch', ndjson([{ sku: 'DEPOSIT-025', name: 'Pfand 0,25', productType: 'deposit', taxCategory: 'normal' }]));
  const prices = Array.from({ length: count }, (_, i) => fixtureCategoryPricing(i + 1));
  await post('/pricing/v2/category/batch', ndjson(prices));
  await post('/pricing/v2/category/batch', ndjson([{ sku: 'DEPOSIT-025', category: 'default', prices: [{ price: '0.25', currency: 'EUR', tier: 'list' }] }]));
  await post('/shops', JSON.stringify({ id: 'bench-shop', name: 'Bench shop', city: 'Berlin' }), 'application/json');
}

export function sku(i: number): string {
  return `SKU-${String(i).padStart(6, '0')}`;
}

/** A GS1 in-store code: 2T PPPPP VVVVV C. */
export function instoreCode(type: number, plu: number, value: number): string {
  const digits = `2${type}${String(plu).padStart(5, '0')}${String(value).padStart(5, '0')}`;
  return `${digits}${gs1CheckDigit(digits)}`;
}
