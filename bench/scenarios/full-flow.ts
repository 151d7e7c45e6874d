import Fastify, { type FastifyReply } from 'fastify';
import { fixtureProduct } from '../fixtures.js';
import { formatCpu } from '../cpu.js';
import { createSender, expectStatus, runFlows, type FlowDefinition, type FlowResult } from '../flows.js';
import { startBench } from '../harness.js';
import { instoreCode, seedCatalog, sku } from '../seed.js';

/**
 * Issue 5's scenario: the whole checkout of a customer at a PoS, as one flow: checkout info (the
 * 10-item cart of the checkout-info scenario against 20000 products) → create the process → the PoS
 * takes it (processing) → the PoS reports it paid (successful) → the order is readable. Concurrent
 * flows in a closed loop; flows/s and p50/p99 per step, beside the same flow against a bare Fastify
 * server answering each step's JSON in the same run. Goal: ≥ 200 flows/s, every step's p99 ≤ 50 ms.
 */
interface Flow {
  signed?: string;
  id?: string;
}

const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);
const MergePatch = 'application/merge-patch+json';

/** The body of the flow's checkout info: the 10-item cart of the checkout-info scenario, and `extraItems`. */
export function checkoutCart(extraItems: readonly object[] = []): string {
  return JSON.stringify({
    shopID: 'bench-shop',
    session: 'bench',
    items: [
      { sku: sku(20), scannedCode: '10020', amount: 1, weight: 1250, weightUnit: 'g' },
      { scannedCode: instoreCode(3, 10_040, 480), amount: 1 },
      { scannedCode: fixtureProduct(10).codes[0]!.code, amount: 2 },
      { sku: sku(3), amount: 3 },
      { scannedCode: instoreCode(1, 10_060, 399), amount: 1 },
      ...[101, 102, 103, 104, 105].map((i) => ({ sku: sku(i), amount: 1 })),
      ...extraItems,
    ],
  });
}

/** `extraItems`: cart items added to the 10 of the standard cart (such as a vending machine's product). */
export function checkoutFlow(project: string, token: string, extraItems: readonly object[] = []): FlowDefinition<Flow> {
  const json = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const patch = { authorization: `Bearer ${token}`, 'content-type': MergePatch };
  const cart = checkoutCart(extraItems);
  return {
    start: () => ({}),
    steps: [
      {
        name: 'checkout info',
        async run(send, flow) {
          flow.signed = expectStatus(await send('POST', `/${project}/checkout/info`, cart, json), 200, 'checkout info').body;
        },
      },
      {
        name: 'create process',
        async run(send, flow) {
          const created = expectStatus(await send('POST', `/${project}/checkout/process`, `{"signedCheckoutInfo":${flow.signed},"paymentMethod":"cash"}`, json), 201, 'create');
          flow.id = (JSON.parse(created.body) as { id: string }).id;
        },
      },
      {
        name: 'PoS processing',
        async run(send, flow) {
          expectStatus(await send('PATCH', `/${project}/pos/checkout/id/${flow.id}`, '{"state":"processing","processedBy":"bench-pos"}', patch), 200, 'processing');
        },
      },
      {
        name: 'PoS successful',
        async run(send, flow) {
          expectStatus(await send('PATCH', `/${project}/pos/checkout/id/${flow.id}`, '{"state":"successful"}', patch), 200, 'successful');
        },
      },
      {
        name: 'order readable',
        async run(send, flow) {
          expectStatus(await send('GET', `/${project}/orders/${flow.id}`, undefined, { authorization: `Bearer ${token}` }), 200, 'order');
        },
      },
    ],
  };
}

export async function fullFlowScenario(): Promise<string[]> {
  const bench = await startBench();
  const bare = Fastify({ logger: false });
  try {
    const project = 'bench-flow';
    await seedCatalog(bench, project, 20_000);
    const token = await bench.token({ project, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] });
    const flow = checkoutFlow(project, token);
    const duration = Number(process.env.BENCH_DURATION ?? 10);

    // One flow by hand: its answers are what the bare server serves.
    const answers: string[] = [];
    const probe = createSender(bench.url, 1);
    const context = flow.start();
    for (const step of flow.steps) {
      await step.run(async (method, path, body, headers) => {
        const response = await probe.send(method, path, body, headers);
        answers.push(response.body);
        return response;
      }, context);
    }
    probe.close();
    const [info, created, processing, successful, order] = answers as [string, string, string, string, string];
    const reply = (status: number, body: string) => async (_request: unknown, res: FastifyReply) => res.code(status).type('application/json').send(body);
    bare.addContentTypeParser(MergePatch, { parseAs: 'string' }, bare.getDefaultJsonParser('error', 'error'));
    bare.post('/:project/checkout/info', reply(200, info));
    bare.post('/:project/checkout/process', reply(201, created));
    let patches = 0;
    bare.patch('/:project/pos/checkout/id/:id', async (_request, res) => res.type('application/json').send(patches++ % 2 === 0 ? processing : successful));
    bare.get('/:project/orders/:id', reply(200, order));
    const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });

    const full = await runFlows(bench.url, flow, { concurrency: Concurrency, durationSeconds: duration, between: () => bench.backgroundDone(), cpu: bench.cpu });
    const baseline = await runFlows(bareUrl, flow, { concurrency: Concurrency, durationSeconds: duration });
    const worstP99 = Math.max(...full.steps.map((s) => s.p99));
    return [
      `full checkout flow (info → process → PoS processing → PoS successful → order), ${Concurrency} concurrent flows, 20000 products`,
      ...describe('  full path', full),
      ...describe('  bare routes, in the bench process', baseline),
      `  ratio ${((full.flowsPerSecond / baseline.flowsPerSecond) * 100).toFixed(1)}% of the bare routes' flows/s`,
      `  goal ≥ 200 flows/s and every step's p99 ≤ 50 ms: ${full.flowsPerSecond >= 200 && worstP99 <= 50 && full.failures === 0 ? 'met' : 'NOT met'}`,
    ];
  } finally {
    await bare.close();
    await bench.close();
  }
}

/** A flow's figures: flows/s, each step's p50 and p99, and what a flow cost when its CPU was measured. */
export function describe(name: string, r: FlowResult): string[] {
  const failures = r.failures ? `  (${r.failures} failed flows; first: ${r.firstFailure})` : '';
  return [
    `${name.padEnd(36)} ${r.flowsPerSecond.toFixed(0).padStart(6)} flows/s (${r.flows} flows${turns(r)})${failures}`,
    ...r.steps.map((s) => `    ${s.name.padEnd(32)} p50 ${s.p50.toFixed(1).padStart(5)} ms   p99 ${s.p99.toFixed(1).padStart(5)} ms`),
    ...(r.cpu ? [`  ${formatCpu(r.cpu, r.flows, 'flow')}`] : []),
  ];
}

/** A flow's turns when it ran in more than one: "; turns 224 172 179" (flows/s, in the order they ran). */
function turns(r: FlowResult): string {
  return r.turnFlowsPerSecond.length > 1 ? `; turns ${r.turnFlowsPerSecond.map((f) => f.toFixed(0)).join(' ')}` : '';
}
