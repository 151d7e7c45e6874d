import postgres from 'postgres';
import { fixtureProduct } from '../fixtures.js';
import { createSender, expectStatus, runFlows, type FlowDefinition } from '../flows.js';
import { startBench, type Bench } from '../harness.js';
import { perOperation, resourceSampler, spentBetween, statisticsReported } from '../resources.js';
import { seedCatalog, type BenchFiscalization } from '../seed.js';
import { checkoutFlow } from './full-flow.js';

/**
 * Issue 24's capacity on paper. The service runs split as operators scale it: one edge process and
 * one worker process. For each operation (a checkout info, a full checkout flow with and without a
 * TSE signature, an import of 1000 products) it measures what one costs each part: CPU milliseconds
 * of the edge, the workers, Postgres and nats-server (from /proc), Postgres transactions, rows and
 * WAL written (pg_stat_database, the WAL position), NATS messages (nats-server's /varz). Then it
 * sizes a retailer with 2000 stores at 50 checkouts per store-hour at peak from those figures, and
 * says which part saturates first. docs/operations.md ("Capacity on paper") quotes a run of it.
 */
const Concurrency = Number(process.env.BENCH_FLOW_CONCURRENCY ?? 16);
const Stores = 2000;
const CheckoutsPerStoreHour = 50;
/** Checkout infos an app asks for per sale (the cart priced once, then again after a change). */
const InfosPerSale = 2;
/** A process kept at this share of its core at peak leaves room for spikes and a lost peer. */
const TargetUtilization = 0.6;

interface Cost {
  operations: number;
  cpuMs: { edge: number; workers: number; postgres: number; nats: number };
  transactions: number;
  rowsWritten: number;
  walBytes: number;
  natsMessages: number;
  perSecond: number;
}

export async function capacityScenario(): Promise<string[]> {
  const bench = await startBench({ topology: 'split' });
  const sql = postgres(bench.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const duration = Number(process.env.BENCH_DURATION ?? 10);
    const projects: Array<[string, BenchFiscalization]> = [['cap-none', { provider: 'none' }], ['cap-local', { provider: 'local' }]];
    for (const [project, fiscalization] of projects) await seedCatalog(bench, project, 20_000, fiscalization);
    const tokenOf = (project: string) => bench.token({ project, permissions: ['productsRead', 'updatePricingCheckoutProcess', 'ordersRead'] });

    // Warmed up before the measures (caches, JIT, connections): a measure counts only what its operations cost.
    for (const project of ['cap-none', 'cap-local']) await runFlows(bench.url, checkoutFlow(project, await tokenOf(project)), { concurrency: Concurrency, durationSeconds: 2, warmupSeconds: 0, between: () => bench.backgroundDone() });
    const info = await measure(bench, sql, async () => {
      const [infoStep] = checkoutFlow('cap-none', await tokenOf('cap-none')).steps;
      const flow: FlowDefinition<object> = { start: () => ({}), steps: [infoStep!] };
      return (await runFlows(bench.url, flow, { concurrency: Concurrency, durationSeconds: duration, warmupSeconds: 0, between: () => bench.backgroundDone() })).flows;
    });
    const sale = await measure(bench, sql, async () =>
      (await runFlows(bench.url, checkoutFlow('cap-none', await tokenOf('cap-none')), { concurrency: Concurrency, durationSeconds: duration, warmupSeconds: 0, between: () => bench.backgroundDone() })).flows);
    const signedSale = await measure(bench, sql, async () =>
      (await runFlows(bench.url, checkoutFlow('cap-local', await tokenOf('cap-local')), { concurrency: Concurrency, durationSeconds: duration, warmupSeconds: 0, between: () => bench.backgroundDone() })).flows);
    const imports = await measure(bench, sql, () => importThousands(bench, 20));

    const peakSales = (Stores * CheckoutsPerStoreHour) / 3600;
    const cores = (part: keyof Cost['cpuMs']) => (peakSales * (signedSale.cpuMs[part] + InfosPerSale * info.cpuMs[part])) / 1000;
    const processes = (part: 'edge' | 'workers') => Math.max(2, Math.ceil(cores(part) / TargetUtilization));
    const perSale = (field: 'transactions' | 'rowsWritten' | 'walBytes' | 'natsMessages') => signedSale[field] + InfosPerSale * info[field];
    const partCeiling = (part: keyof Cost['cpuMs']) => 1000 / (signedSale.cpuMs[part] + InfosPerSale * info.cpuMs[part]);

    return [
      `capacity: one edge process and one worker process (ROLE=edge, ROLE=workers), ${Concurrency} concurrent clients; per operation:`,
      `  ${'operation'.padEnd(34)} ${'ops/s'.padStart(6)} ${'edge'.padStart(7)} ${'workers'.padStart(8)} ${'postgres'.padStart(9)} ${'nats'.padStart(6)}   ${'pg tx'.padStart(6)} ${'rows'.padStart(6)} ${'WAL'.padStart(8)} ${'NATS msgs'.padStart(10)}`,
      row('checkout info', info),
      row('full flow, no TSE', sale),
      row('full flow, signed (local TSE)', signedSale),
      row('import of 1000 products', imports),
      '  (CPU in ms per operation; WAL in bytes; NATS messages counted in and out of nats-server)',
      `sizing: ${Stores} stores × ${CheckoutsPerStoreHour} checkouts per store-hour = ${peakSales.toFixed(1)} sales/s at peak, each a signed full flow and ${InfosPerSale} checkout infos`,
      `  edge CPU ${cores('edge').toFixed(2)} cores → ${processes('edge')} edge processes at ≤ ${TargetUtilization * 100}% (2 at least, for failover)`,
      `  worker CPU ${cores('workers').toFixed(2)} cores → ${processes('workers')} worker processes at ≤ ${TargetUtilization * 100}%`,
      `  Postgres ${cores('postgres').toFixed(2)} cores, ${(peakSales * perSale('transactions')).toFixed(0)} transactions/s, ${(peakSales * perSale('rowsWritten')).toFixed(0)} rows/s, ${((peakSales * perSale('walBytes')) / 1e6).toFixed(2)} MB WAL/s`,
      `  NATS ${cores('nats').toFixed(2)} cores (one node's share; R3 streams write each job and event on three), ${(peakSales * perSale('natsMessages')).toFixed(0)} messages/s: 3 nodes`,
      `  one core of each part carries this many sales/s: edge ${partCeiling('edge').toFixed(0)}, workers ${partCeiling('workers').toFixed(0)}, postgres ${partCeiling('postgres').toFixed(0)}, nats ${partCeiling('nats').toFixed(0)}`,
    ];
  } finally {
    await sql.end();
    await bench.close();
  }
}

/** Runs a phase (which returns how many operations it did) and what it cost each part, per operation. */
async function measure(bench: Bench, sql: postgres.Sql, phase: () => Promise<number>): Promise<Cost> {
  const sample = resourceSampler(bench, sql);
  const before = await sample();
  const started = performance.now();
  const operations = await phase();
  const seconds = (performance.now() - started) / 1000;
  await statisticsReported();
  const cost = perOperation(spentBetween(before, await sample()), operations);
  return {
    operations,
    perSecond: operations / seconds,
    cpuMs: { edge: cost.edge, workers: cost.workers, postgres: cost.postgres, nats: cost.nats },
    transactions: cost.transactions,
    rowsWritten: cost.rows,
    walBytes: cost.walBytes,
    natsMessages: cost.natsMessages,
  };
}

/** `count` imports of 1000 new products each, one after another; answers how many imports. */
async function importThousands(bench: Bench, count: number): Promise<number> {
  const token = await bench.token({ project: 'cap-import', permissions: ['productsWrite'] });
  const { send, close } = createSender(bench.url, 1);
  try {
    for (let batch = 0; batch < count; batch++) {
      const body = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ ...fixtureProduct(batch * 1000 + i + 1), sku: `CAP-${batch}-${i}` })).join('\n');
      const answer = expectStatus(await send('POST', '/cap-import/products/_batch', body, { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }), 200, 'import');
      if (answer.body.includes('"status":"error"')) throw new Error(`import refused items: ${answer.body.slice(0, 300)}`);
    }
    return count;
  } finally {
    close();
  }
}

function row(name: string, c: Cost): string {
  const ms = (v: number) => v.toFixed(v < 10 ? 2 : 1);
  return `  ${name.padEnd(34)} ${c.perSecond.toFixed(0).padStart(6)} ${ms(c.cpuMs.edge).padStart(7)} ${ms(c.cpuMs.workers).padStart(8)} ${ms(c.cpuMs.postgres).padStart(9)} ${ms(c.cpuMs.nats).padStart(6)}   ${c.transactions.toFixed(1).padStart(6)} ${c.rowsWritten.toFixed(0).padStart(6)} ${c.walBytes.toFixed(0).padStart(8)} ${c.natsMessages.toFixed(1).padStart(10)}`;
}
