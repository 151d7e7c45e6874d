import postgres from 'postgres';
import { freePort } from '../../src/infra/processes.js';
import { comparedRate, runFlows, type FlowDefinition } from '../flows.js';
import { startBench, type Bench } from '../harness.js';
import { addSpent, noResources, perOperation, platformCpuMs, resourceSampler, spentBetween, statisticsReported, type ResourceSample } from '../resources.js';
import { seedCatalog, type BenchFiscalization } from '../seed.js';
import { startStandInProcess } from '../stand-ins.js';
import { withPromotions } from './checkout-info.js';
import { settleFulfillments } from './fulfillment.js';
import { checkoutFlow } from './full-flow.js';

/**
 * Issue 40's scenario: what a sale costs in resources, per operation, for each kind of flow: CPU of
 * the edge, the workers, Postgres and nats-server (the stand-ins' apart, not in `cpu`), Postgres
 * transactions, rows and WAL written, NATS messages (resources.ts). The service runs split (one
 * ROLE=edge and one ROLE=workers process). The flows take turns (4 each, every other round in
 * reverse), each turn's background work (receipts, signatures, fulfillment calls) settled and
 * counted as its flows'. Then the ratios the goals name, of CPU per operation.
 *
 * - checkout-info, checkout-info-promotions: the full-flow scenario's 10-item cart priced, without
 *   and with an active promotion configuration of 200 rules (checkout-info.ts);
 * - full-flow: the full-flow scenario's flow, its sale not signed (`none`);
 * - full-flow-local, full-flow-fiskaly: signed by the local signer, by fiskaly (a stand-in answering
 *   each call after 50 ms, in a process of its own);
 * - full-flow-vending: the full flow with one vending machine item more (the fulfillment stand-in
 *   answering at once).
 */
const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);
const Turns = 4;
const TseDelayMs = 50;
const CatalogSize = 20_000;

interface CostFlow {
  name: string;
  /** The flows a ratio compares are of one group, and run at one rate (comparedRate). */
  group: 'checkout-info' | 'full-flow';
  flow: FlowDefinition<unknown>;
}

export async function costScenario(): Promise<string[]> {
  const fiskaly = await startStandInProcess('fiskaly');
  await fiskaly.set({ delayMs: TseDelayMs });
  const fulfillment = await startStandInProcess('fulfillment');
  const bench = await startBench({ topology: 'split', env: { FULFILLMENT_URL: fulfillment.info.url }, benchPids: [fiskaly.pid, fulfillment.pid] });
  const sql = postgres(bench.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const flows = await costFlows(bench, fiskaly.info);
    const sample = resourceSampler(bench, sql, [fiskaly.pid, fulfillment.pid]);
    const settle = async () => {
      await settleFulfillments(sql);
      await bench.backgroundDone();
    };
    const seconds = Number(process.env.BENCH_DURATION ?? 10) / Turns;
    for (const { flow } of flows) await runFlows(bench.url, flow, { concurrency: Concurrency, durationSeconds: 2, warmupSeconds: 0 });
    await settle();
    // The flows a ratio compares run at one rate (flows.ts, comparedRate).
    const rates = new Map<CostFlow['group'], number>();
    for (const group of new Set(flows.map((f) => f.group))) {
      rates.set(group, await comparedRate(bench.url, flows.filter((f) => f.group === group).map((f) => f.flow), Concurrency));
    }
    await settle();

    const spent = flows.map(() => noResources());
    const operations = flows.map(() => 0);
    for (let turn = 0; turn < Turns; turn++) {
      const order = turn % 2 === 0 ? [...flows.keys()] : [...flows.keys()].reverse();
      for (const index of order) {
        const before = await sample();
        const { flow, group } = flows[index]!;
        const result = await runFlows(bench.url, flow, { concurrency: Concurrency, durationSeconds: seconds, warmupSeconds: 0, flowsPerSecond: rates.get(group) });
        if (result.failures) throw new Error(`${flows[index]!.name}: ${result.failures} flows failed, the first: ${result.firstFailure}`);
        await settle();
        await statisticsReported();
        addSpent(spent[index]!, spentBetween(before, await sample()));
        operations[index]! += result.flows;
      }
    }
    const costs = new Map(flows.map(({ name }, i) => [name, perOperation(spent[i]!, operations[i]!)]));
    const cpu = (name: string) => platformCpuMs(costs.get(name)!);
    const ratio = (name: string, over: string, of: string, goal: number) => {
      const x = cpu(of) / cpu(over);
      return `ratio ${name}: ${x.toFixed(3)} (CPU of ${of} over ${over}; goal ≤ ${goal}: ${x <= goal ? 'met' : 'NOT met'})`;
    };
    const hosts = await twoHostsComparison(bench, sql, fulfillment.info.url, rates.get('full-flow')!, seconds);
    return [
      `cost: what an operation costs, means over ${Turns} turns each (in alternating order), ${Concurrency} concurrent clients at most, the flows a ratio compares at one rate (${[...rates].map(([group, rate]) => `${group} ${rate}/s`).join(', ')}); one edge and one worker process`,
      ...flows.map(({ name }, i) => `${line(name, costs.get(name)!)}  [${operations[i]} operations]`),
      `  (cpu: the platform's processes; the stand-ins' CPU apart: ${flows.map(({ name }) => `${name} ${ms(costs.get(name)!.standIns)}`).join(', ')} ms)`,
      ...goalLines(costs),
      ratio('signed-local', 'full-flow', 'full-flow-local', 1.1),
      ratio('signed-fiskaly', 'full-flow', 'full-flow-fiskaly', 1.15),
      ratio('vending', 'full-flow', 'full-flow-vending', 1.15),
      ratio('promotions', 'checkout-info', 'checkout-info-promotions', 1.35),
      ...hosts,
    ];
  } finally {
    await sql.end();
    await bench.close();
    await fiskaly.stop();
    await fulfillment.stop();
  }
}

/**
 * What naming a primary and its standby in DATABASE_URL costs (`h1,h2/db?target_session_attrs=read-write`,
 * the standby a host nobody listens on: it is never reached while the primary answers), against one
 * host: a second service on the same Postgres runs the full flow in turns with the first, at the
 * full flows' rate. Both have the retry of work cut off by a lost connection (it is always there).
 */
async function twoHostsComparison(bench: Bench, sql: postgres.Sql, fulfillmentUrl: string, rate: number, seconds: number): Promise<string[]> {
  const twoHosts = await startBench({ topology: 'split', env: { FULFILLMENT_URL: fulfillmentUrl }, secondHost: `127.0.0.1:${await freePort()}` });
  try {
    const twoSql = postgres(twoHosts.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await seedCatalog(twoHosts, 'cost-none', CatalogSize, { provider: 'none' });
      const sides = [
        { name: 'full-flow (one host)', bench, sample: resourceSampler(bench, sql), flow: checkoutFlow('cost-none', await bench.token({ project: 'cost-none', permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] })) },
        { name: 'full-flow (two hosts)', bench: twoHosts, sample: resourceSampler(twoHosts, twoSql), flow: checkoutFlow('cost-none', await twoHosts.token({ project: 'cost-none', permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] })) },
      ];
      await runFlows(twoHosts.url, sides[1]!.flow as FlowDefinition<unknown>, { concurrency: Concurrency, durationSeconds: 2, warmupSeconds: 0 });
      await twoHosts.backgroundDone();
      const spent = sides.map(() => noResources());
      const operations = sides.map(() => 0);
      for (let turn = 0; turn < Turns; turn++) {
        for (const index of turn % 2 === 0 ? [0, 1] : [1, 0]) {
          const side = sides[index]!;
          const before = await side.sample();
          const result = await runFlows(side.bench.url, side.flow as FlowDefinition<unknown>, { concurrency: Concurrency, durationSeconds: seconds, warmupSeconds: 0, flowsPerSecond: rate });
          if (result.failures) throw new Error(`${side.name}: ${result.failures} flows failed, the first: ${result.firstFailure}`);
          await side.bench.backgroundDone();
          await statisticsReported();
          addSpent(spent[index]!, spentBetween(before, await side.sample()));
          operations[index]! += result.flows;
        }
      }
      const costs = sides.map((side, i) => perOperation(spent[i]!, operations[i]!));
      const x = platformCpuMs(costs[1]!) / platformCpuMs(costs[0]!);
      return [
        ...sides.map((side, i) => `${line(side.name, costs[i]!)}  [${operations[i]} operations]`),
        `ratio two-hosts: ${x.toFixed(3)} (CPU of full-flow with DATABASE_URL naming a primary and a standby over one host; goal ≤ 1.05: ${x <= 1.05 ? 'met' : 'NOT met'})`,
      ];
    } finally {
      await twoSql.end();
    }
  } finally {
    await twoHosts.close();
  }
}

/** The projects (the same catalog each) and their flows. */
async function costFlows(bench: Bench, tss: { tssId: string; apiKey: string; apiSecret: string; adminPin: string; url: string }): Promise<CostFlow[]> {
  const projects: Array<[string, BenchFiscalization]> = [
    ['cost-none', { provider: 'none' }],
    ['cost-promotions', { provider: 'none' }],
    ['cost-local', { provider: 'local' }],
    ['cost-fiskaly', { provider: 'fiskaly', tssId: tss.tssId, apiKey: tss.apiKey, apiSecret: tss.apiSecret, adminPin: tss.adminPin, baseUrl: tss.url }],
  ];
  for (const [project, fiscalization] of projects) await seedCatalog(bench, project, CatalogSize, fiscalization);
  await withPromotions(bench.url, 'cost-promotions', await bench.token({ project: 'cost-promotions', permissions: ['promotionsWrite'] }));
  await vendingProduct(bench, 'cost-none');
  const token = (project: string) => bench.token({ project, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] });
  const infoOnly = (flow: FlowDefinition<unknown>): FlowDefinition<unknown> => ({ start: flow.start, steps: flow.steps.slice(0, 1) });
  return [
    { name: 'checkout-info', group: 'checkout-info', flow: infoOnly(checkoutFlow('cost-none', await token('cost-none')) as FlowDefinition<unknown>) },
    { name: 'checkout-info-promotions', group: 'checkout-info', flow: infoOnly(checkoutFlow('cost-promotions', await token('cost-promotions')) as FlowDefinition<unknown>) },
    { name: 'full-flow', group: 'full-flow', flow: checkoutFlow('cost-none', await token('cost-none')) as FlowDefinition<unknown> },
    { name: 'full-flow-local', group: 'full-flow', flow: checkoutFlow('cost-local', await token('cost-local')) as FlowDefinition<unknown> },
    { name: 'full-flow-fiskaly', group: 'full-flow', flow: checkoutFlow('cost-fiskaly', await token('cost-fiskaly')) as FlowDefinition<unknown> },
    { name: 'full-flow-vending', group: 'full-flow', flow: checkoutFlow('cost-none', await token('cost-none'), [{ sku: 'VEND-1', amount: 1 }]) as FlowDefinition<unknown> },
  ];
}

/** A product handed out by a vending machine (reserved when the process is created, delivered once paid). */
async function vendingProduct(bench: Bench, project: string): Promise<void> {
  const writer = await bench.token({ project, permissions: ['productsWrite', 'pricingWrite'] });
  const post = async (path: string, body: object) => {
    const res = await fetch(`${bench.url}/${project}${path}`, { method: 'POST', headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  };
  await post('/products', { sku: 'VEND-1', name: 'Cola 0,5 l', taxCategory: 'normal', fulfillmentType: 'vending-machine' });
  await post('/pricing/v2/category/batch', [{ sku: 'VEND-1', category: 'default', prices: [{ price: '2.20', currency: 'EUR', tier: 'list' }] }]);
}

function ms(value: number): string {
  return value.toFixed(value < 10 ? 2 : 1);
}

/** `cost <scenario>: cpu <ms> ms (edge <ms>, workers <ms>, postgres <ms>, nats <ms>), pg_tx <n>, rows <n>, wal <n> KB, nats_msgs <n>` */
function line(name: string, c: ResourceSample): string {
  return `cost ${name}: cpu ${ms(platformCpuMs(c))} ms (edge ${ms(c.edge)}, workers ${ms(c.workers)}, postgres ${ms(c.postgres)}, nats ${ms(c.nats)}), pg_tx ${c.transactions.toFixed(1)}, rows ${c.rows.toFixed(1)}, wal ${(c.walBytes / 1024).toFixed(1)} KB, nats_msgs ${c.natsMessages.toFixed(1)}`;
}

/** The resource goals of issue 40, each said met or not. */
function goalLines(costs: Map<string, ResourceSample>): string[] {
  const check = (name: string, goals: Partial<Record<'transactions' | 'rows' | 'walKB' | 'natsMessages', number>>) => {
    const c = costs.get(name)!;
    const value = { transactions: c.transactions, rows: c.rows, walKB: c.walBytes / 1024, natsMessages: c.natsMessages };
    const label = { transactions: 'pg_tx', rows: 'rows', walKB: 'wal KB', natsMessages: 'nats_msgs' };
    const parts = (Object.keys(goals) as Array<keyof typeof goals>).map((key) => `${label[key]} ${value[key].toFixed(1)} ≤ ${goals[key]}: ${value[key] <= goals[key]! ? 'met' : 'NOT met'}`);
    return `  goals ${name}: ${parts.join(', ')}`;
  };
  return [check('full-flow-local', { transactions: 8, rows: 35, walKB: 40, natsMessages: 30 }), check('full-flow', { transactions: 6, natsMessages: 22 })];
}
