import { fixtureProduct } from '../fixtures.js';
import { formatLoad, load, startBench, type LoadResult } from '../harness.js';
import { instoreCode, seedCatalog, sku } from '../seed.js';

/**
 * Issue 4's scenario: POST /{project}/checkout/info with a 10-item cart against a catalog of 20000
 * products, 50 connections, beside a bare Fastify route answering the same JSON. Goal: at least
 * 1500 req/s with p99 at most 30 ms.
 */
export async function checkoutInfoScenario(): Promise<string[]> {
  const bench = await startBench();
  try {
    const project = 'bench-checkout';
    await seedCatalog(bench, project, 20_000);
    // One product with a quantity price: 3 or more cost less each.
    const admin = await bench.token({ project, permissions: ['pricingWrite'] });
    await fetch(`${bench.url}/${project}/pricing/v2/category/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ sku: sku(3), category: 'default', prices: [{ price: '1.49', currency: 'EUR', tier: 'list' }, { price: '0.99', currency: 'EUR', tier: 'list', quantity: 3 }] }]),
    });

    const cart = {
      shopID: 'bench-shop',
      session: 'bench',
      items: [
        { sku: sku(20), scannedCode: '10020', amount: 1, weight: 1250, weightUnit: 'g' }, // weighable, PLU and weight
        { scannedCode: instoreCode(3, 10_040, 480), amount: 1 }, // weighable, weight in the code
        { scannedCode: fixtureProduct(10).codes[0]!.code, amount: 2 }, // has a deposit product
        { sku: sku(3), amount: 3 }, // quantity price
        { scannedCode: instoreCode(1, 10_060, 399), amount: 1 }, // price in the code
        ...[101, 102, 103, 104, 105].map((i) => ({ sku: sku(i), amount: 1 })),
      ],
    };
    const token = await bench.token({ project, permissions: ['productsRead'] });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = JSON.stringify(cart);
    const probe = await fetch(`${bench.url}/${project}/checkout/info`, { method: 'POST', headers, body });
    const signed: unknown = await probe.json();
    if (probe.status !== 200) throw new Error(`checkout info answered ${probe.status}: ${JSON.stringify(signed)}`);
    const lineItems = (signed as { checkoutInfo: { lineItems: unknown[] } }).checkoutInfo.lineItems.length;
    const bareUrl = await bench.bareServerInProcess('POST', '/:project/checkout/info', signed);
    const ownUrl = await bench.bareServer('POST', '/:project/checkout/info', signed);

    const full = await load({ url: `${bench.url}/${project}/checkout/info`, method: 'POST', headers, body });
    const bareInProcess = await load({ url: `${bareUrl}/${project}/checkout/info`, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const bareOwn = await load({ url: `${ownUrl}/${project}/checkout/info`, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return [
      `checkout info, 10-item cart (${lineItems} line items) against 20000 products, 50 connections`,
      formatLoad('  full path (edge→NATS→worker→PG)', full),
      formatLoad('  bare route, in the bench process', bareInProcess),
      formatLoad('  bare route, in its own process', bareOwn),
      `  ratio ${pct(full, bareInProcess)} of the in-process bare route, ${pct(full, bareOwn)} of the own-process one`,
      `  goal ≥ 1500 req/s and p99 ≤ 30 ms: ${full.requestsPerSecond >= 1500 && full.p99 <= 30 && full.non2xx === 0 ? 'met' : 'NOT met'}`,
    ];
  } finally {
    await bench.close();
  }
}

function pct(a: LoadResult, b: LoadResult): string {
  return `${((a.requestsPerSecond / b.requestsPerSecond) * 100).toFixed(1)}%`;
}
