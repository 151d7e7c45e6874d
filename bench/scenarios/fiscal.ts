import { runFlowsInTurns, type FlowResult } from '../flows.js';
import { startBench } from '../harness.js';
import { seedCatalog, type BenchFiscalization } from '../seed.js';
import { startStandInProcess } from '../stand-ins.js';
import { checkoutFlow, describe } from './full-flow.js';

/**
 * Issue 23's scenario: what signing every sale costs. The full checkout flow of the full-flow
 * scenario in three projects with the same catalog, differing only in how their sales are signed:
 * `none`, the `local` signer, and `fiskaly` against a stand-in of the SIGN DE v2 API answering each
 * call after 50 ms (a cloud TSE's round trip; in a process of its own at the lowest CPU priority,
 * stand-in-process.ts: a cloud TSE takes no CPU from the till, and its CPU here still counts as
 * the bench's). Driven in alternating turns; after each turn the signatures and receipts its sales
 * caused are waited for and counted as theirs (CPU per flow). Goals: local ≥ 90% of the flows/s
 * of none and every step's p99 ≤ 50 ms; fiskaly ≥ 85%.
 */
const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);
const TseDelayMs = 50;

export async function fiscalScenario(): Promise<string[]> {
  const fiskaly = await startStandInProcess('fiskaly');
  await fiskaly.set({ delayMs: TseDelayMs });
  const tss = fiskaly.info;
  const bench = await startBench({ benchPids: [fiskaly.pid] });
  try {
    const projects: Array<[string, BenchFiscalization]> = [
      ['bench-fiscal-none', { provider: 'none' }],
      ['bench-fiscal-local', { provider: 'local' }],
      ['bench-fiscal-fiskaly', { provider: 'fiskaly', tssId: tss.tssId, apiKey: tss.apiKey, apiSecret: tss.apiSecret, adminPin: tss.adminPin, baseUrl: tss.url }],
    ];
    const flows = [];
    for (const [project, fiscalization] of projects) {
      await seedCatalog(bench, project, 1000, fiscalization);
      const token = await bench.token({ project, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] });
      flows.push(checkoutFlow(project, token));
    }
    const duration = Number(process.env.BENCH_DURATION ?? 10);
    const [none, local, cloud] = (await runFlowsInTurns(bench.url, flows, {
      concurrency: Concurrency,
      durationSeconds: duration,
      turns: 4,
      between: () => bench.backgroundDone(),
      cpu: bench.cpu,
    })) as [FlowResult, FlowResult, FlowResult];
    const stats = await fiskaly.stats();
    const ratio = (r: FlowResult) => r.flowsPerSecond / none.flowsPerSecond;
    const worstP99 = (r: FlowResult) => Math.max(...r.steps.map((s) => s.p99));
    const pct = (r: FlowResult) => `${(ratio(r) * 100).toFixed(1)}%`;
    return [
      `fiscalization: the full checkout flow signed by no TSE, the local signer, and fiskaly (a stand-in answering after ${TseDelayMs} ms), ${Concurrency} concurrent flows, 4 turns each (in alternating order)`,
      ...describe('  provider none', none),
      ...describe('  provider local', local),
      ...describe('  provider fiskaly (stand-in)', cloud),
      `  local at ${pct(local)} of none's flows/s; goal ≥ 90% and every step's p99 ≤ 50 ms: ${ratio(local) >= 0.9 && worstP99(local) <= 50 && local.failures === 0 ? 'met' : 'NOT met'}`,
      `  fiskaly at ${pct(cloud)} of none's flows/s; goal ≥ 85%: ${ratio(cloud) >= 0.85 && cloud.failures === 0 ? 'met' : 'NOT met'}`,
      `  the stand-in signed ${stats.signatures} logs in ${stats.calls} calls, ${stats.revisionCalls} of them transaction revisions`,
    ];
  } finally {
    await bench.close();
    await fiskaly.stop();
  }
}
