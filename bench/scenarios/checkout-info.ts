import { fixtureProduct } from '../fixtures.js';
import { formatCpu } from '../cpu.js';
import { formatLoad, load, loadInTurns, startBench, type LoadResult } from '../harness.js';
import { instoreCode, seedCatalog, sku } from '../seed.js';

/**
 * Issue 4's scenario: POST /{project}/checkout/info with a 10-item cart against a catalog of 20000
 * products, 50 connections, beside a bare Fastify route answering the same JSON. Goal: at least
 * 1500 req/s with p99 at most 30 ms. Then issue 13's: the same cart in a project (the same catalog)
 * with an active promotion configuration of 200 rules, half of them with conditions that hold for
 * the cart, driven in turns with the one without. Goal: at least 75% of the req/s without
 * promotions. p50 and p99 are the slowest turn's.
 */
export async function checkoutInfoScenario(): Promise<string[]> {
  const bench = await startBench();
  try {
    // The same catalog twice: the second project has an active promotion configuration.
    const project = 'bench-checkout';
    const promotionsProject = 'bench-promotions';
    for (const p of [project, promotionsProject]) {
      await seedCatalog(bench, p, 20_000);
      // One product with a quantity price: 3 or more cost less each.
      const admin = await bench.token({ project: p, permissions: ['pricingWrite'] });
      await fetch(`${bench.url}/${p}/pricing/v2/category/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify([{ sku: sku(3), category: 'default', prices: [{ price: '1.49', currency: 'EUR', tier: 'list' }, { price: '0.99', currency: 'EUR', tier: 'list', quantity: 3 }] }]),
      });
    }
    const promotions = await withPromotions(bench.url, promotionsProject, await bench.token({ project: promotionsProject, permissions: ['promotionsWrite'] }));

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

    const promotionsHeaders = { ...headers, authorization: `Bearer ${await bench.token({ project: promotionsProject, permissions: ['productsRead'] })}` };
    const promotionsUrl = `${bench.url}/${promotionsProject}/checkout/info`;
    // Without and with promotions in alternating turns: the drift of a shared machine weighs on both alike.
    const [full, withRules] = (await loadInTurns(
      [
        { url: `${bench.url}/${project}/checkout/info`, method: 'POST', headers, body, cpu: bench.cpu },
        { url: promotionsUrl, method: 'POST', headers: promotionsHeaders, body, cpu: bench.cpu },
      ],
      3,
    )) as [LoadResult, LoadResult];
    const probeWithRules = (await (await fetch(promotionsUrl, { method: 'POST', headers: promotionsHeaders, body })).json()) as { checkoutInfo: { lineItems: Array<{ type: string }> } };
    const promotionLines = probeWithRules.checkoutInfo.lineItems.filter((l) => l.type === 'promotion').length;
    const bareInProcess = await load({ url: `${bareUrl}/${project}/checkout/info`, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const bareOwn = await load({ url: `${ownUrl}/${project}/checkout/info`, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return [
      `checkout info, 10-item cart (${lineItems} line items) against 20000 products, 50 connections`,
      formatLoad('  full path (edge→NATS→worker→PG)', full),
      formatCpu(full.cpu!, full.requests, 'checkout info'),
      formatLoad('  bare route, in the bench process', bareInProcess),
      formatLoad('  bare route, in its own process', bareOwn),
      `  ratio ${pct(full, bareInProcess)} of the in-process bare route, ${pct(full, bareOwn)} of the own-process one`,
      `  goal ≥ 1500 req/s and p99 ≤ 30 ms: ${full.requestsPerSecond >= 1500 && full.p99 <= 30 && full.non2xx === 0 ? 'met' : 'NOT met'}`,
      `checkout info with an active promotion configuration of ${promotions.rules} rules (${promotions.holding} with conditions that hold; ${promotionLines} promotion lines)`,
      formatLoad('  with promotions', withRules),
      formatCpu(withRules.cpu!, withRules.requests, 'checkout info'),
      formatLoad('  without promotions (above)', full),
      `  ratio ${pct(withRules, full)} of the req/s without promotions; goal ≥ 75%: ${withRules.requestsPerSecond >= 0.75 * full.requestsPerSecond && withRules.non2xx === 0 ? 'met' : 'NOT met'}`,
    ];
  } finally {
    await bench.close();
  }
}

function pct(a: LoadResult, b: LoadResult): string {
  return `${((a.requestsPerSecond / b.requestsPerSecond) * 100).toFixed(1)}%`;
}

/**
 * A configuration as retailers write them: article promotions (the best one per cart), article
 * groups (the best one), and a few receipt promotions that all apply; 200 rules, 100 of them with
 * conditions that hold for the benchmark's cart (its SKUs, its total, now, its shop).
 */
export async function withPromotions(url: string, project: string, token: string): Promise<{ rules: number; holding: number }> {
  const inCart = [sku(20), sku(10), sku(3), sku(102), sku(104)];
  const elsewhere = (i: number) => [sku(5000 + i), sku(6000 + i)];
  const now = Date.now();
  const active = { type: 'isCurrentlyActive', args: { from: new Date(now - 86_400_000).toISOString(), to: new Date(now + 86_400_000).toISOString() } };
  const rule = (id: string, rankID: string, holds: boolean, i: number) => {
    const condition = holds
      ? { type: 'and', children: [active, { type: 'hasSKU', args: { oneOf: [inCart[i % inCart.length], ...elsewhere(i)].join(',') } }] }
      : { type: 'and', children: [active, { type: 'hasSKU', args: { oneOf: elsewhere(i).join(',') } }] };
    return { id, rankID, condition, actions: [{ type: 'addLineItemDiscount', args: { value: String(5 + (i % 20)), name: `Aktion ${id}` } }] };
  };
  const receipt = (id: string, holds: boolean, i: number) => ({
    id,
    rankID: 'receipt_promotion',
    condition: { type: 'totalGreaterThanOrEqual', args: { value: holds ? String(1 + i) : '100000' } },
    actions: [{ type: 'addCartDiscount', args: { absolute: 'true', value: '0.10', name: `Bon-Aktion ${id}` } }],
  });
  // Every second rule of each rank holds.
  const rules = [
    ...Array.from({ length: 110 }, (_, i) => rule(`article-${i}`, 'article_promotion', i % 2 === 0, i)),
    ...Array.from({ length: 80 }, (_, i) => rule(`group-${i}`, 'article_group', i % 2 === 0, i)),
    ...Array.from({ length: 10 }, (_, i) => receipt(`receipt-${i}`, i % 2 === 0, i)),
  ];
  const holding = 55 + 40 + 5;
  const body = {
    rounding: { mode: 'halfUp', precision: 0 },
    ranks: [
      { id: 'article_promotion', evaluationMode: 'selectBest' },
      { id: 'article_group', evaluationMode: 'selectBest' },
      { id: 'receipt_promotion', evaluationMode: 'applyAll' },
    ],
    groups: [{ id: 'bench', rules }],
  };
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${url}/${project}/promotions/configurations`, { method: 'POST', headers, body: JSON.stringify(body) });
  const { id } = (await created.json()) as { id: number };
  const activated = await fetch(`${url}/${project}/promotions/configurations/${id}/activate`, { method: 'POST', headers: { authorization: headers.authorization } });
  if (!created.ok || !activated.ok) throw new Error(`the promotion configuration could not be activated: ${created.status} ${activated.status}`);
  return { rules: rules.length, holding };
}
