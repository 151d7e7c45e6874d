import { formatCpu } from '../cpu.js';
import { createSender, expectStatus, runFlows, type FlowDefinition, type FlowResult } from '../flows.js';
import { startBench, type Bench } from '../harness.js';
import { seedCatalog, sku } from '../seed.js';

/**
 * Receipts (PDF) of 30-line orders through the full path (edge → NATS → receipts worker →
 * Postgres), as they are made: when first asked for, each order's receipt once.
 * - first generation at the real rate: BENCH_RECEIPT_RATE requests a second (default 28: a
 *   retailer of 2000 stores at 50 checkouts per store-hour at its peak, every receipt opened;
 *   operations.md "Capacity on paper"), each for an order whose receipt was never made: CPU per
 *   receipt and latency where the machine is not saturated;
 * - first generation at saturation: 16 connections in a closed loop until the fresh orders run out
 *   (issue 14's goal: ≥ 200 receipts/s, p99 ≤ 100 ms);
 * - stored receipts (made before) beside `GET /orders/{id}` of the same orders.
 */
const Connections = Number(process.env.BENCH_RECEIPT_CONNECTIONS ?? 16);
const Orders = Number(process.env.BENCH_RECEIPT_ORDERS ?? 2500);
const Rate = Number(process.env.BENCH_RECEIPT_RATE ?? 28);
const Project = 'bench-receipt';

/** 30 line items: 27 products (one weighed), three of them with a deposit line. */
const cart = JSON.stringify({
  shopID: 'bench-shop',
  session: 'bench',
  appUserID: 'bench-user',
  items: [
    { sku: sku(20), amount: 1, weight: 1250, weightUnit: 'g' },
    { sku: sku(10), amount: 2 },
    { sku: sku(30), amount: 1 },
    ...[101, 102, 103, 104, 105, 106, 107, 108, 109, 111, 112, 113, 114, 115, 116, 117, 118, 119, 121, 122, 123, 124, 125, 126].map((i, n) => ({ sku: sku(i), amount: 1 + (n % 3) })),
  ],
});

export async function receiptScenario(): Promise<string[]> {
  const threads = process.env.BENCH_RECEIPT_RENDER_THREADS;
  const bench = await startBench({ env: threads ? { RECEIPT_RENDER_THREADS: threads } : {} });
  try {
    await seedCatalog(bench, Project, 1000);
    const token = await bench.token({ project: Project, permissions: ['productsRead', 'setPaymentState', 'ordersRead'] });
    const auth = { authorization: `Bearer ${token}` };
    const started = performance.now();
    const ids = await makeOrders(bench, token, Orders);
    const seeding = (performance.now() - started) / 1000;
    const duration = Number(process.env.BENCH_DURATION ?? 10);
    let next = 0;
    const fresh = (name: string): FlowDefinition<{ id?: string }> => ({
      ...getFlow(name, () => ids[next++], (id) => `/${Project}/orders/${id}/receipt`, auth),
      exhausted: () => next >= ids.length,
    });

    const paced = await runFlows(bench.url, fresh('receipt, first generation at the real rate'), { concurrency: Connections, durationSeconds: duration, warmupSeconds: 2, flowsPerSecond: Rate, cpu: bench.cpu });
    const saturated = await runFlows(bench.url, fresh('receipt, first generation, saturated'), { concurrency: Connections, durationSeconds: duration, warmupSeconds: 1, cpu: bench.cpu });
    const exhausted = next >= ids.length ? `  (the fresh orders ran out after ${(saturated.flows / saturated.flowsPerSecond).toFixed(1)} s)` : '';
    const pick = () => ids[Math.floor(Math.random() * Math.min(next, ids.length))]!;
    const stored = await runFlows(bench.url, getFlow('receipt, stored', pick, (id) => `/${Project}/orders/${id}/receipt`, auth), { concurrency: Connections, durationSeconds: duration, cpu: bench.cpu });
    const orders = await runFlows(bench.url, getFlow('GET /orders/{id}', pick, (id) => `/${Project}/orders/${id}`, auth), { concurrency: Connections, durationSeconds: duration, cpu: bench.cpu });
    const size = (await fetch(`${bench.url}/${Project}/orders/${ids[0]}/receipt`, { headers: auth }).then((r) => r.arrayBuffer())).byteLength;

    const met = (r: FlowResult) => (r.flowsPerSecond >= 200 && r.steps[0]!.p99 <= 100 && r.failures === 0 ? 'met' : 'NOT met');
    return [
      `receipts of 30-line orders (PDF, ${size} bytes each), made when first asked for, ${threads ?? 'default'} render threads; ${ids.length} orders seeded through the API in ${seeding.toFixed(1)} s`,
      describe(`  first generation at ${Rate}/s`, paced),
      `  ${formatCpu(paced.cpu!, paced.flows, 'receipt')}`,
      describe('  first generation, saturated', saturated) + exhausted,
      `  ${formatCpu(saturated.cpu!, saturated.flows, 'receipt')}`,
      describe('  stored receipt (made before)', stored),
      `  ${formatCpu(stored.cpu!, stored.flows, 'receipt')}`,
      describe('  beside: GET /orders/{id}', orders),
      `  ${formatCpu(orders.cpu!, orders.flows, 'order')}`,
      `  goal ≥ 200 receipts/s and p99 ≤ 100 ms: first generation ${met(saturated)}, stored ${met(stored)}`,
    ];
  } finally {
    await bench.close();
  }
}

function getFlow(name: string, nextId: () => string | undefined, path: (id: string) => string, headers: Record<string, string>): FlowDefinition<{ id?: string }> {
  return {
    start: () => ({ id: nextId() }),
    steps: [
      {
        name,
        async run(send, flow) {
          // A first-generation flow stops when its orders run out (exhausted), before this.
          if (!flow.id) throw new Error('no order left');
          expectStatus(await send('GET', path(flow.id), undefined, headers), 200, name);
        },
      },
    ],
  };
}

/** Paid orders of the 30-line cart, made as an app and a payment system make them, 16 at a time. */
async function makeOrders(bench: Bench, token: string, count: number): Promise<string[]> {
  const { send, close } = createSender(bench.url, 16);
  const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const ids: string[] = [];
  let started = 0;
  const one = async () => {
    const info = expectStatus(await send('POST', `/${Project}/checkout/info`, cart, json), 200, 'checkout info').body;
    const lines = (JSON.parse(info) as { checkoutInfo: { lineItems: unknown[] } }).checkoutInfo.lineItems.length;
    if (lines !== 30) throw new Error(`the cart makes ${lines} line items, not 30`);
    const created = expectStatus(await send('POST', `/${Project}/checkout/process`, `{"signedCheckoutInfo":${info},"paymentMethod":"cash"}`, json), 201, 'create');
    const id = (JSON.parse(created.body) as { id: string }).id;
    const path = `/${Project}/checkout/process/${id}`;
    expectStatus(await send('PATCH', path, '{"paymentState":"processing"}', json), 200, 'processing');
    const result = JSON.stringify({ paymentState: 'successful', paymentResult: { pan: '4111111111111111', aid: 'B3NCH1', time: new Date().toISOString() } });
    expectStatus(await send('PATCH', path, result, json), 200, 'successful');
    ids.push(id);
  };
  try {
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (started < count) {
          started++;
          await one();
        }
      }),
    );
  } finally {
    close();
  }
  return ids;
}

function describe(name: string, r: FlowResult): string {
  const failures = r.failures ? `  (${r.failures} failed; first: ${r.firstFailure})` : '';
  const s = r.steps[0]!;
  return `${name.padEnd(36)} ${r.flowsPerSecond.toFixed(0).padStart(6)} req/s (${r.flows})   p50 ${s.p50.toFixed(1).padStart(5)} ms   p99 ${s.p99.toFixed(1).padStart(5)} ms${failures}`;
}
