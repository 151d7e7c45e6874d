import { setTimeout as sleep } from 'node:timers/promises';
import { platformCpu } from '../cpu.js';
import { comparedRate, runFlows, runFlowsInTurns, type FlowDefinition, type FlowResult } from '../flows.js';
import { startBench, type Bench } from '../harness.js';
import { seedCatalog } from '../seed.js';
import { startStandInProcess } from '../stand-ins.js';
import { checkoutFlow, describe } from './full-flow.js';

/**
 * Issue 41's scenario: the full checkout flow in two projects of one service, side by side in
 * alternating turns: one without webhooks, one with a webhook that receives every event of the
 * project, delivered to a local receiver (a process of its own at the lowest priority, as an
 * endpoint on another machine: its CPU is not the platform's) while the flows run. Between turns
 * the deliveries a turn caused finish and count as its CPU.
 *
 * Goals: the backlog stays bounded (the deliveries waiting, sampled through the run, and none left
 * a few seconds after a turn); p99 from an event's write to its 2xx ≤ 1 s; the CPU per flow of the
 * platform's processes with the webhook ≤ 1.15 × without (`ratio webhooks`), beside the CPU per
 * delivery.
 */
const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);

export async function webhooksScenario(): Promise<string[]> {
  const receiver = await startStandInProcess('webhook');
  let bench: Bench | undefined;
  try {
    bench = await startBench({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, benchPids: [receiver.pid] });
    const plain = 'bench-flow';
    const hooked = 'bench-hooks';
    for (const project of [plain, hooked]) await seedCatalog(bench, project, 20_000);
    const owner = await bench.token({ project: hooked, permissions: ['projectsWrite'] });
    const made = await fetch(`${bench.url}/${hooked}/integrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench receiver', kind: 'webhook', url: receiver.info.url }),
    });
    if (made.status !== 201) throw new Error(`the webhook could not be made: ${made.status} ${await made.text()}`);
    const flows = await Promise.all([plain, hooked].map(async (project) => checkoutFlow(project, await bench!.token({ project, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] }))));

    const backlog = sampleBacklog(bench.natsMonitorUrl);
    const current = bench;
    // Between turns: what the sales left done and their deliveries made, so that each turn's CPU holds what it caused.
    const between = async () => {
      await current.backgroundDone();
      await backlog.drained();
    };
    // Warmed up first, the receiver's counts started after: they are the measured flows' alone.
    for (const flow of flows) await runFlows(bench.url, flow, { concurrency: Concurrency, durationSeconds: 2, warmupSeconds: 0 });
    await between();
    // Both at one rate (flows.ts, comparedRate).
    const rate = await comparedRate(bench.url, flows as FlowDefinition<unknown>[], Concurrency);
    await between();
    await receiver.set({ reset: true });
    const jobsBefore = backlog.jobsDelivered();
    const [without, withHooks] = (await runFlowsInTurns(bench.url, flows, {
      concurrency: Concurrency,
      durationSeconds: Number(process.env.BENCH_DURATION ?? 10),
      warmupSeconds: 0,
      turns: 4,
      between,
      cpu: bench.cpu,
      flowsPerSecond: rate,
    })) as [FlowResult, FlowResult];
    backlog.stop();
    const received = await receiver.stats();
    const perFlow = (r: FlowResult) => platformCpu(r.cpu!) / r.flows;
    const deliveriesPerFlow = received.received / withHooks.flows;
    const jobs = backlog.jobsDelivered() - jobsBefore;
    const ratio = perFlow(withHooks) / perFlow(without);
    const perDelivery = (perFlow(withHooks) - perFlow(without)) / deliveriesPerFlow;
    return [
      `webhooks: the full checkout flow at ${rate} flows/s, ${Concurrency} concurrent flows at most, without and with a webhook that receives every event (a local receiver), in alternating turns`,
      ...describe('  without webhooks', without),
      `    turns: ${turnsOf(without)}`,
      ...describe('  with a webhook', withHooks),
      `    turns: ${turnsOf(withHooks)}`,
      `  deliveries: ${received.received} received (${received.distinct} distinct events), about ${deliveriesPerFlow.toFixed(1)} a flow; from the event's write to its 2xx: p50 ${received.p50Ms} ms, p99 ${received.p99Ms} ms, max ${received.maxMs} ms; goal p99 ≤ 1000 ms: ${received.p99Ms <= 1000 ? 'met' : 'NOT met'}`,
      `  backlog: at most ${backlog.max()} deliveries waiting at a sample (every 250 ms), none left ${backlog.drainSeconds().toFixed(1)} s after a turn at the most: ${backlog.max() < Concurrency * 100 ? 'bounded' : 'NOT bounded'}`,
      `  jobs: ${jobs} handed to the senders, about ${(received.received / Math.max(1, jobs)).toFixed(1)} deliveries a job`,
      `  CPU per delivery: ${perDelivery.toFixed(3)} ms (the platform's processes)`,
      `ratio webhooks: ${ratio.toFixed(3)} (CPU per flow with the webhook over without; goal ≤ 1.15: ${ratio <= 1.15 ? 'met' : 'NOT met'})`,
    ];
  } finally {
    await bench?.close();
    await receiver.stop();
  }
}

/** Each measured turn's CPU per flow, all processes but the bench's: how much the run drifted. */
function turnsOf(r: FlowResult): string {
  return `${r.turnCpuPerFlow.map((ms) => ms.toFixed(1)).join(' ')} ms a flow`;
}

/**
 * The webhook deliveries waiting (not yet delivered, or delivered and not yet acknowledged), read
 * from the nats-server's monitoring (/jsz) every 250 ms: the largest seen, and how long the backlog
 * took to drain after each turn.
 */
function sampleBacklog(monitorUrl: string) {
  let max = 0;
  let running = true;
  let longestDrainMs = 0;
  let delivered = 0;
  const read = async (): Promise<number> => {
    const jsz = (await (await fetch(`${monitorUrl}/jsz?accounts=true&streams=true&consumers=true`)).json()) as {
      account_details?: Array<{ stream_detail?: Array<{ name: string; consumer_detail?: Array<{ name: string; num_pending: number; num_ack_pending: number; delivered: { consumer_seq: number } }> }> }>;
    };
    const consumer = (jsz.account_details ?? [])
      .flatMap((a) => a.stream_detail ?? [])
      .filter((s) => s.name === 'JOBS')
      .flatMap((s) => s.consumer_detail ?? [])
      .find((c) => c.name === 'webhooks');
    delivered = consumer?.delivered.consumer_seq ?? delivered;
    return consumer ? consumer.num_pending + consumer.num_ack_pending : 0;
  };
  const loop = (async () => {
    while (running) {
      max = Math.max(max, await read().catch(() => 0));
      await sleep(250);
    }
  })();
  return {
    max: () => max,
    /** Delivery jobs handed to the senders so far (each job once, and again when it comes back). */
    jobsDelivered: () => delivered,
    drainSeconds: () => longestDrainMs / 1000,
    async drained() {
      const started = Date.now();
      while ((await read().catch(() => 0)) > 0 && Date.now() - started < 60_000) await sleep(50);
      longestDrainMs = Math.max(longestDrainMs, Date.now() - started);
    },
    stop() {
      running = false;
      void loop;
    },
  };
}
