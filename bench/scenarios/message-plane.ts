import { formatCpu, platformCpu } from '../cpu.js';
import { runFlowsAcross, type FlowResult } from '../flows.js';
import { formatLoad, loadInTurns, NatsSecurities, startBench, type Bench, type LoadOptions, type NatsSecurity } from '../harness.js';
import { shopGetTarget } from './runtimes.js';
import { seedCatalog } from '../seed.js';
import { checkoutFlow, describe } from './full-flow.js';

/**
 * What the message plane's door costs: the same service three times, side by side in one run, its
 * NATS without credentials (as before the door), with credentials (every process a user of its
 * role: the production default), and with credentials over TLS. Shop get (autocannon, 50
 * connections) and the full checkout flow, driven in alternating turns; CPU per operation of the
 * platform's processes, and how much one service's turns spread (the run's noise, which the
 * credentials' extra must stay within).
 */
const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);

export async function messagePlaneScenario(): Promise<string[]> {
  const benches: Array<{ security: NatsSecurity; bench: Bench }> = [];
  try {
    for (const security of NatsSecurities) benches.push({ security, bench: await startBench({ natsSecurity: security }) });
    const lines = ['message plane: the service with its NATS anonymous, with credentials, and with credentials over TLS, in alternating turns'];

    const shopTargets: LoadOptions[] = [];
    for (const { bench } of benches) shopTargets.push(await shopGetTarget(bench));
    const shops = await loadInTurns(shopTargets, 4);
    lines.push('shop get, 50 connections');
    shops.forEach((r, i) => lines.push(formatLoad(`  ${benches[i]!.security}`, r), formatCpu(r.cpu!, r.requests, 'request'), `    turns: ${spreadOf(r.turnCpuPerRequest)}`));
    lines.push(...ratios('shop get', shops.map((r) => platformCpu(r.cpu!) / r.requests), shops[0]!.turnCpuPerRequest));

    const flows = [];
    for (const { bench } of benches) {
      const project = 'bench-flow';
      await seedCatalog(bench, project, 20_000);
      const token = await bench.token({ project, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] });
      flows.push({ url: bench.url, flow: checkoutFlow(project, token), cpu: bench.cpu, between: () => bench.backgroundDone() });
    }
    const results = (await runFlowsAcross(flows, { concurrency: Concurrency, durationSeconds: Number(process.env.BENCH_DURATION ?? 10), turns: 4 })) as FlowResult[];
    lines.push(`full checkout flow, ${Concurrency} concurrent flows`);
    results.forEach((r, i) => lines.push(...describe(`  ${benches[i]!.security}`, r), `    turns: ${spreadOf(r.turnCpuPerFlow)}`));
    lines.push(...ratios('full flow', results.map((r) => platformCpu(r.cpu!) / r.flows), results[0]!.turnCpuPerFlow));
    return lines;
  } finally {
    for (const { bench } of benches) await bench.close();
  }
}

/** "0.231 0.244 0.229 0.250 ms (spread 8.9%)": each turn's CPU per operation and (max − min) / mean. */
function spreadOf(perTurn: readonly number[]): string {
  return `${perTurn.map((ms) => ms.toFixed(3)).join(' ')} ms (spread ${(spread(perTurn) * 100).toFixed(1)}%)`;
}

function spread(values: readonly number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return (Math.max(...values) - Math.min(...values)) / mean;
}

/** CPU per operation with credentials and with TLS over that without, beside the anonymous service's own spread. */
function ratios(name: string, perOperation: readonly number[], anonymousTurns: readonly number[]): string[] {
  const [anonymous, credentials, tls] = perOperation as [number, number, number];
  const extra = credentials / anonymous - 1;
  const noise = spread(anonymousTurns);
  return [
    `ratio ${name} credentials: ${(credentials / anonymous).toFixed(3)} (CPU per operation over anonymous; the anonymous turns spread ${(noise * 100).toFixed(1)}%: ${Math.abs(extra) <= noise ? 'within the noise' : 'outside the noise'})`,
    `ratio ${name} tls: ${(tls / anonymous).toFixed(3)} (credentials over TLS, over anonymous)`,
  ];
}

