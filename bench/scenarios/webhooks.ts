import { setTimeout as sleep } from 'node:timers/promises';
import { platformCpu } from '../cpu.js';
import { comparedRate, runFlows, runFlowsAcross, type FlowDefinition, type FlowResult } from '../flows.js';
import { startBench, type Bench } from '../harness.js';
import { seedCatalog } from '../seed.js';
import { startStandInProcess } from '../stand-ins.js';
import { checkoutFlow, describe } from './full-flow.js';

/**
 * Issue 41's scenario: the full checkout flow in three projects of one service, side by side in
 * alternating turns: one without webhooks, one with a webhook on plain http and one with a webhook
 * on https, each receiving every event of its project, delivered to a local receiver (a process of
 * its own at the lowest priority, as an endpoint on another machine: its CPU is not the platform's)
 * while the flows run. Between turns the deliveries a turn caused finish and count as its CPU.
 *
 * Goals: the backlog stays bounded (the deliveries waiting, sampled through the run, and none left
 * a few seconds after a turn); p99 from an event's write to its 2xx ≤ 1 s; the CPU per flow of the
 * platform's processes with the webhook ≤ 1.15 × without (`ratio webhooks`, on http; https beside
 * it), beside the CPU per delivery.
 */
const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);
/** The services compared side by side (one here; docs/benchmarks.md has the run that compared the webhook sender's two HTTP clients so). */
const Clients = ['undici'];
const Kinds = ['none', 'http', 'https'] as const;

export async function webhooksScenario(): Promise<string[]> {
  const receiver = await startStandInProcess('webhook');
  const benches: Bench[] = [];
  try {
    const services = [];
    for (const client of Clients) {
      const bench = await startBench({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: receiver.info.caFile }, benchPids: [receiver.pid] });
      benches.push(bench);
      const projects = { none: 'bench-flow', http: 'bench-hooks', https: 'bench-hooks-tls' };
      for (const project of Object.values(projects)) await seedCatalog(bench, project, 20_000);
      for (const kind of ['http', 'https'] as const) {
        const owner = await bench.token({ project: projects[kind], permissions: ['projectsWrite'] });
        const made = await fetch(`${bench.url}/${projects[kind]}/integrations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `bench receiver (${kind})`, kind: 'webhook', url: kind === 'http' ? receiver.info.url : receiver.info.tlsUrl }),
        });
        if (made.status !== 201) throw new Error(`the webhook could not be made: ${made.status} ${await made.text()}`);
      }
      const flows = await Promise.all(Kinds.map(async (kind) => checkoutFlow(projects[kind], await bench.token({ project: projects[kind], permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] }))));
      const backlog = sampleBacklog(bench.natsMonitorUrl);
      // Between turns: what the sales left done and their deliveries made, so that each turn's CPU holds what it caused.
      const between = async () => {
        await bench.backgroundDone();
        await backlog.drained();
      };
      services.push({ client, bench, flows, backlog, between });
    }
    // Warmed up first, the receiver's counts started after: they are the measured flows' alone.
    for (const service of services) {
      for (const flow of service.flows) await runFlows(service.bench.url, flow, { concurrency: Concurrency, durationSeconds: 2, warmupSeconds: 0 });
      await service.between();
    }
    // All at one rate (flows.ts, comparedRate): the slowest flow of every service sets it.
    let rate = Infinity;
    for (const service of services) rate = Math.min(rate, await comparedRate(service.bench.url, service.flows as FlowDefinition<unknown>[], Concurrency));
    for (const service of services) await service.between();
    await receiver.set({ reset: true });
    const jobsBefore = services.map((s) => s.backlog.jobsDelivered());
    const targets = services.flatMap((service) => service.flows.map((flow) => ({ url: service.bench.url, flow: flow as FlowDefinition<unknown>, cpu: service.bench.cpu, between: service.between })));
    const results = await runFlowsAcross(targets, { concurrency: Concurrency, durationSeconds: Number(process.env.BENCH_DURATION ?? 10), warmupSeconds: 0, turns: 4, flowsPerSecond: rate });
    for (const service of services) service.backlog.stop();
    const received = await receiver.stats();
    const perFlow = (r: FlowResult) => platformCpu(r.cpu!) / r.flows;
    const hookedFlows = results.filter((_, i) => i % Kinds.length !== 0).reduce((sum, r) => sum + r.flows, 0);
    const deliveriesPerFlow = received.received / hookedFlows;
    const lines = [
      `webhooks: the full checkout flow at ${rate} flows/s, ${Concurrency} concurrent flows at most, without a webhook and with one that receives every event (a local receiver) on http and on https, in alternating turns`,
      `  deliveries: ${received.received} received (${received.distinct} distinct events), about ${deliveriesPerFlow.toFixed(1)} a flow; from the event's write to its 2xx: p50 ${received.p50Ms} ms, p99 ${received.p99Ms} ms, max ${received.maxMs} ms; goal p99 ≤ 1000 ms: ${received.p99Ms <= 1000 ? 'met' : 'NOT met'}`,
    ];
    const perDelivery: Record<string, number> = {};
    for (const [s, service] of services.entries()) {
      const [without, http, https] = results.slice(s * Kinds.length, (s + 1) * Kinds.length) as [FlowResult, FlowResult, FlowResult];
      const jobs = service.backlog.jobsDelivered() - jobsBefore[s]!;
      lines.push(`  client ${service.client}:`, ...describe('    without webhooks', without), `      turns: ${turnsOf(without)}`);
      for (const [kind, result] of [['http', http], ['https', https]] as const) {
        const ratio = perFlow(result) / perFlow(without);
        perDelivery[`${service.client} ${kind}`] = (perFlow(result) - perFlow(without)) / deliveriesPerFlow;
        lines.push(
          ...describe(`    with a webhook on ${kind}`, result),
          `      turns: ${turnsOf(result)}`,
          `      CPU per delivery: ${perDelivery[`${service.client} ${kind}`]!.toFixed(3)} ms (the platform's processes)`,
          `      ratio webhooks${kind === 'https' ? ' https' : ''} ${service.client}: ${ratio.toFixed(3)} (CPU per flow with the webhook over without${kind === 'http' ? `; goal ≤ 1.15: ${ratio <= 1.15 ? 'met' : 'NOT met'}` : ''})`,
        );
      }
      lines.push(
        `    backlog: at most ${service.backlog.max()} deliveries waiting at a sample (every 250 ms), none left ${service.backlog.drainSeconds().toFixed(1)} s after a turn at the most: ${service.backlog.max() < Concurrency * 100 ? 'bounded' : 'NOT bounded'}`,
        `    jobs: ${jobs} handed to the senders`,
      );
    }
    return lines;
  } finally {
    for (const bench of benches) await bench.close();
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
