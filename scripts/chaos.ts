import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import postgres from 'postgres';
import { startStandIn } from '../bench/fulfillment-stand-in.js';
import { signToken } from '../src/auth/tokens.js';
import type { Permission } from '../src/auth/permissions.js';
import { settle, verify } from './chaos-checks.js';
import { runClosings, runLoad, watchEdges, type ClientError } from './chaos-load.js';
import { startCluster, type Cluster, type NatsNode } from './cluster.js';

/**
 * `npm run chaos`: the cluster of `npm run cluster` under checkouts with a vending machine item
 * (a fulfillment stand-in in this process delivers), from several clients spread over both edges,
 * for CHAOS_SECONDS (180). At fixed times it kills the NATS node leading JOBS (and starts it again),
 * kills a worker, kills an edge, restarts Postgres (the embedded one; not a DATABASE_URL), and
 * restarts every process one after another with SIGTERM. Then it checks from Postgres, JetStream
 * and the stand-in that nothing was lost or done twice, prints per fault the client-visible errors
 * and the time to recover, and last one summary line.
 */
const Seconds = Number(process.env.CHAOS_SECONDS ?? 180);
const Clients = Number(process.env.CHAOS_CLIENTS ?? 8);
const Project = 'chaos-1';
/** A fault's window closes this long after the part it hit serves again. */
const SettleMs = 5000;
const say = (line: string) => process.stdout.write(`chaos: ${line}\n`);

interface Fault {
  name: string;
  /** When it starts, as a share of the run. */
  at: number;
  run(cluster: Cluster, mark: (note: string) => void): Promise<void>;
}

interface FaultRecord {
  name: string;
  startedAt: number;
  /** The part it hit serves again. */
  backAt: number;
  notes: string[];
}

const faults: Fault[] = [
  {
    name: 'NATS node leading JOBS killed (SIGKILL), started again 5 s later',
    at: 0.1,
    async run(cluster, mark) {
      const nc = await cluster.connectAs('admin', { maxReconnectAttempts: -1, reconnectTimeWait: 100 });
      try {
        const jsm = await jetstreamManager(nc);
        const leader = (await jsm.streams.info('JOBS')).cluster?.leader;
        const node = cluster.nats.find((n) => n.name === leader);
        if (!node) throw new Error(`no node leads JOBS (${leader})`);
        const killedAt = Date.now();
        await node.kill('SIGKILL');
        mark(`killed ${node.name}`);
        for (;;) {
          const now = await jsm.streams.info('JOBS').catch(() => undefined);
          if (now?.cluster?.leader && now.cluster.leader !== leader) {
            mark(`JOBS led by ${now.cluster.leader} ${secondsSince(killedAt)} s after the kill`);
            break;
          }
          await sleep(100);
        }
        await sleep(Math.max(0, killedAt + 5000 - Date.now()));
        await restartNode(node);
      } finally {
        await nc.close();
      }
    },
  },
  {
    name: 'worker process killed (SIGKILL), started again 3 s later',
    at: 0.25,
    async run(cluster, mark) {
      const worker = cluster.workers[1 % cluster.workers.length]!;
      await worker.kill('SIGKILL');
      mark(`killed ${worker.name}`);
      await sleep(3000);
      await worker.start();
    },
  },
  {
    name: 'edge killed (SIGKILL), started again 5 s later',
    at: 0.4,
    async run(cluster, mark) {
      const edge = cluster.edges[0]!;
      await edge.kill('SIGKILL');
      mark(`killed ${edge.name}`);
      await sleep(5000);
      await edge.start();
    },
  },
  {
    name: 'Postgres restarted (pg_ctl restart -m fast)',
    at: 0.55,
    async run(cluster, mark) {
      if (!cluster.postgres.embedded) return mark('skipped: DATABASE_URL is not this run\'s to restart');
      const started = Date.now();
      await cluster.postgres.embedded.restart();
      mark(`Postgres back after ${secondsSince(started)} s`);
    },
  },
  {
    name: 'rolling restart: every NATS node, worker and edge, one after another (SIGTERM, start, wait until it serves)',
    at: 0.7,
    async run(cluster, mark) {
      for (const node of cluster.nats) {
        await node.kill('SIGTERM');
        await restartNode(node);
      }
      const began = Date.now();
      for (const part of [...cluster.workers, ...cluster.edges]) {
        const started = Date.now();
        await part.kill('SIGTERM');
        await part.start();
        mark(`${part.name} +${((started - began) / 1000).toFixed(1)} s, ${secondsSince(started)} s`);
      }
    },
  },
];

/** Starts a node again and waits until its JetStream is current (its /healthz), as an operator's rolling restart does. */
async function restartNode(node: NatsNode): Promise<void> {
  await node.start();
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
    const health = await fetch(`http://127.0.0.1:${node.monitorPort}/healthz`).catch(() => undefined);
    if (health?.status === 200) return;
  }
  throw new Error(`${node.name} did not become healthy within 60 s`);
}

const secondsSince = (t: number) => ((Date.now() - t) / 1000).toFixed(1);

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

async function seed(url: string, token: (permissions: Permission[]) => Promise<string>): Promise<void> {
  const admin = await token(['productsWrite', 'pricingWrite', 'shopsWrite', 'projectsWrite']);
  const call = async (method: string, path: string, body: string, type = 'application/json') => {
    const res = await fetch(`${url}/${Project}${path}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': type }, body });
    if (!res.ok) throw new Error(`seeding ${path}: ${res.status} ${await res.text()}`);
  };
  await call('PUT', '/settings', JSON.stringify({ currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'], fiscalization: { provider: 'none', reason: 'chaos run' } }));
  await call('POST', '/shops', JSON.stringify({ id: 's1', name: 'Bahnhof' }));
  const products = [
    { sku: 'WATER', name: 'Wasser', taxCategory: 'normal' },
    { sku: 'COLA', name: 'Cola', taxCategory: 'normal', fulfillmentType: 'vending-machine' },
  ];
  const ndjson = (items: object[]) => items.map((i) => JSON.stringify(i)).join('\n');
  await call('POST', '/products/_batch', ndjson(products), 'application/x-ndjson');
  await call('POST', '/pricing/v2/category/batch', ndjson(products.map((p) => ({ sku: p.sku, category: 'default', prices: [{ price: '1.50', currency: 'EUR', tier: 'list' }] }))), 'application/x-ndjson');
}

async function main(): Promise<void> {
  const standIn = await startStandIn();
  say(`starting the cluster (3 NATS nodes, 3 workers, 2 edges), ${Clients} clients for ${Seconds} s`);
  const cluster = await startCluster({
    databaseUrl: process.env.DATABASE_URL || undefined,
    // CHAOS_DIR keeps the cluster's stores and logs after the run (else a temp dir, removed).
    dir: process.env.CHAOS_DIR || undefined,
    // Deliveries that failed during a fault are tried again within seconds, so that the run can wait for all of them.
    // A stopping edge answers /health/ready 503 for a second before it refuses connections: four of
    // the clients' readiness probes (every 250 ms), as docs/operations.md tells operators to set it for their balancer.
    env: { FULFILLMENT_URL: standIn.url, FULFILLMENT_RETRY_SCHEDULE_MS: '500,1000,2000,5000', SHUTDOWN_DELAY_MS: '1000' },
    say,
  });
  running = cluster;
  const nc = await cluster.connectAs('admin', { maxReconnectAttempts: -1 });
  const sql = postgres(cluster.postgres.url, { max: 2, onnotice: () => {} });
  const balancer = watchEdges(cluster.edges.map((e) => ({ name: e.name, url: e.url! })));
  try {
    const token = (permissions: Permission[]) =>
      signToken({ project: Project, permissions, ttl: '2h' }, { secret: cluster.jwtSecret, issuer: 'checkout-platform', audience: 'checkout-platform' });
    await seed(cluster.edges[0]!.url!, token);
    const openapi = await (await fetch(`${cluster.edges[0]!.url}/openapi.json`)).text();
    const idempotencyKeys = openapi.toLowerCase().includes('idempotency-key');

    const errors: ClientError[] = [];
    const startedAt = Date.now();
    let faultsDone = false;
    const options = {
      edges: balancer.edges,
      project: Project,
      tokens: { app: await token(['productsRead', 'checkoutRead', 'ordersRead']), pos: await token(['updatePricingCheckoutProcess']) },
      clients: Clients,
      idempotencyKeys,
      until: () => faultsDone && Date.now() > startedAt + Seconds * 1000,
      onError: (e: ClientError) => errors.push(e),
    };
    const load = runLoad(options);
    const closings = runClosings({ ...options, token: await token(['closingsWrite']), everyMs: 15_000 });

    const records: FaultRecord[] = [];
    for (const fault of faults) {
      // At its time, but never inside the window of the one before (it would hide whose errors are whose).
      const previous = records.at(-1);
      await sleep(Math.max(0, startedAt + fault.at * Seconds * 1000 - Date.now(), previous ? previous.backAt + SettleMs - Date.now() : 0));
      const record: FaultRecord = { name: fault.name, startedAt: Date.now(), backAt: 0, notes: [] };
      say(`+${secondsSince(startedAt)} s: ${fault.name}`);
      await fault.run(cluster, (note) => record.notes.push(note));
      record.backAt = Date.now();
      records.push(record);
    }
    faultsDone = true;
    const flows = await load;
    const closingCount = await closings;
    const loadSeconds = (Date.now() - startedAt) / 1000;
    const settledMs = await settle(sql, Project);
    const verdict = await verify({ sql, nc, project: Project, flows, applied: standIn.applied });

    process.stdout.write('\n');
    const inWindow = new Set<ClientError>();
    const since = (t: number, from: number) => `+${((t - from) / 1000).toFixed(1)} s`;
    for (const r of records) {
      // An error belongs to the fault whose window its request was under way in (sent before the
      // window closed, failed after it opened: a request the killed part held fails at the kill).
      const mine = errors.filter((e) => !inWindow.has(e) && e.at >= r.startedAt && e.sentAt <= r.backAt + SettleMs);
      mine.forEach((e) => inWindow.add(e));
      const last = mine.reduce((t, e) => Math.max(t, e.at), r.startedAt);
      const window = mine.length ? `${mine.length} client errors from ${since(Math.min(...mine.map((e) => e.at)), r.startedAt)} to ${since(last, r.startedAt)}` : 'no client error';
      say(`${r.name}: ${window}; recovered after ${((last - r.startedAt) / 1000).toFixed(1)} s; back in ${((r.backAt - r.startedAt) / 1000).toFixed(1)} s${r.notes.length ? ` (${r.notes.join('; ')})` : ''}`);
      for (const [what, group] of groupBy(mine, (e) => `${e.what.slice(0, 90)}`)) {
        say(`    ${group.length} × ${what} (${since(group[0]!.at, r.startedAt)} .. ${since(group.at(-1)!.at, r.startedAt)}; ${[...new Set(group.map((e) => e.step))].join(', ')})`);
      }
    }
    const outside = errors.filter((e) => !inWindow.has(e));
    for (const e of outside.slice(0, 10)) say(`error outside the fault windows: +${((e.at - startedAt) / 1000).toFixed(1)} s ${e.step} at ${e.edge}: ${e.what}`);
    for (const line of [...verdict.lost.slice(0, 10), ...verdict.doubled.slice(0, 10)]) say(line);
    const paid = flows.filter((f) => f.paid).length;
    say(`${paid} paid flows (${flows.filter((f) => f.byPost).length} created by POST with Idempotency-Key), ${(flows.length / loadSeconds).toFixed(1)} flows/s, ${closingCount} closing jobs; settled ${(settledMs / 1000).toFixed(1)} s after the load; ${verdict.notes.join('; ')}`);
    process.stdout.write(`chaos: ${flows.length} flows, ${verdict.lost.length} lost, ${verdict.doubled.length} doubled, ${outside.length} client errors outside fault windows\n`);
  } finally {
    balancer.stop();
    await nc.close();
    await sql.end();
    await cluster.stop();
    standIn.server.close();
  }
}

/** The cluster once started, for a signal to stop it. */
let running: Cluster | undefined;
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    say(`${signal}: stopping the cluster`);
    void (running?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}
main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
