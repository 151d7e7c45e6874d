import { gs1CheckDigit } from '../src/domain/codes.js';
import { fixtureCategoryPricing, fixtureProduct } from './fixtures.js';
import type { Bench } from './harness.js';

/** A catalog through the API, as a retailer's nightly import makes it: products, prices, a shop. */
export async function seedCatalog(bench: Bench, project: string, count: number): Promise<void> {
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
