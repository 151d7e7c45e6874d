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
 * kills a worker, kills an edge, restarts Postgres (not a DATABASE_URL), fails Postgres over to
 * its synchronous standby (postgresFailover), and restarts every process one after another with
 * SIGTERM. Every sale is signed (the local signer). Then it checks from Postgres, JetStream
 * and the stand-in that nothing was lost or done twice, prints per fault the client-visible errors
 * and the time to recover, and last one summary line.
 */
const Seconds = Number(process.env.CHAOS_SECONDS ?? 180);
const Clients = Number(process.env.CHAOS_CLIENTS ?? 8);
const Project = 'chaos-1';
/** A fault's window closes this long after the part it hit serves again. */
const SettleMs = 5000;
/** The load runs at least this long after the last fault is over. */
const LoadAfterFaultsMs = 15_000;
const say = (line: string) => process.stdout.write(`chaos: ${line}\n`);

interface Fault {
  name: string;
  /** When it starts, as a share of the run. */
  at: number;
  /** Client errors must end within `seconds` of the fault's start, or of the moment it marks (`promotion`). */
  goal?: { seconds: number; from: 'start' | 'promotion' };
  run(cluster: Cluster, mark: (note: string) => void, moments: Moments): Promise<void>;
}

/** Moments a fault's goal counts from, as it marks them. */
interface Moments {
  promotion?: number;
  /** A stream taken was not there again with its consumers within a minute. */
  unhealed?: boolean;
}

interface FaultRecord {
  name: string;
  startedAt: number;
  /** The part it hit serves again. */
  backAt: number;
  notes: string[];
  moments: Moments;
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
    goal: { seconds: 1, from: 'start' },
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
      if (!cluster.postgres.restart) return mark('skipped: DATABASE_URL is not this run\'s to restart');
      const started = Date.now();
      await cluster.postgres.restart();
      mark(`Postgres back after ${secondsSince(started)} s`);
    },
  },
  {
    name: 'Postgres failover: the primary killed (SIGKILL), its synchronous standby promoted 2 s later, the old primary back as a standby 10 s after that',
    at: 0.62,
    goal: { seconds: 10, from: 'promotion' },
    run: postgresFailover,
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
  {
    name: '`JOBS` deleted (every pending job with it): the workers make it again and resend from Postgres what is not done',
    at: 0.82,
    run: (cluster, mark, moments) => takeStream(cluster, mark, moments, 'JOBS', 'delete'),
  },
  {
    name: '`EVENTS` purged: the events not yet read are gone; new ones flow',
    at: 0.9,
    run: (cluster, mark, moments) => takeStream(cluster, mark, moments, 'EVENTS', 'purge'),
  },
];

/**
 * A platform stream taken (by accident, an operator or an attack, issue 47): deleted or purged as
 * an admin would. Back once the stream exists with its consumers again (JOBS: the workers' job
 * consumers) and, for JOBS, nothing of it is pending in the workers' eyes: the verdict finds what
 * was lost or done twice.
 */
async function takeStream(cluster: Cluster, mark: (note: string) => void, moments: Moments, stream: 'JOBS' | 'EVENTS', how: 'delete' | 'purge'): Promise<void> {
  const nc = await cluster.connectAs('admin', { maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  try {
    const jsm = await jetstreamManager(nc);
    const before = await jsm.streams.info(stream);
    const consumers = (await jsm.consumers.list(stream).next()).map((c) => c.name);
    const takenAt = Date.now();
    if (how === 'delete') await jsm.streams.delete(stream);
    else await jsm.streams.purge(stream);
    mark(`${how === 'delete' ? 'deleted' : 'purged'} ${stream} (${before.state.messages} messages, ${consumers.length} consumers)`);
    for (;;) {
      const back = await jsm.consumers.list(stream).next().then((list) => list.map((c) => c.name), () => undefined);
      if (back && consumers.every((c) => back.includes(c))) {
        mark(`${stream} and its ${consumers.length} consumers there again ${secondsSince(takenAt)} s after`);
        break;
      }
      if (Date.now() - takenAt > 60_000) {
        mark(`${stream} not healed within 60 s`);
        moments.unhealed = true;
        break;
      }
      await sleep(100);
    }
  } finally {
    await nc.close();
  }
}

/**
 * Postgres fails over as a failover manager (Patroni, a managed Postgres) does it: the primary is
 * lost (SIGKILL to it and its backends), the synchronous standby promoted 2 s later (it has every
 * commit a client was told of), and the lost primary started again 10 s after that as a standby of
 * the new one (pg_rewind), which then waits for it on every commit again.
 */
async function postgresFailover(cluster: Cluster, mark: (note: string) => void, moments: Moments): Promise<void> {
  const pair = cluster.postgres.pair;
  if (!pair) return mark('skipped: no standby (DATABASE_URL, or no PostgreSQL binaries for a pair)');
  const lost = pair.primary();
  const killedAt = Date.now();
  await lost.crash();
  mark(`killed ${lost.name}`);
  await sleep(Math.max(0, killedAt + 2000 - Date.now()));
  await pair.promote();
  moments.promotion = Date.now();
  mark(`${pair.primary().name} promoted ${secondsSince(killedAt)} s after the kill`);
  await sleep(10_000);
  const rejoinedAt = Date.now();
  const { how } = await pair.rejoin();
  mark(`${lost.name} a synchronous standby again by ${how} in ${secondsSince(rejoinedAt)} s`);
}

interface Goal {
  met: boolean;
  line: string;
}

/** Whether a fault's client errors ended within its goal (from its start, or the moment it marked). */
function goalOf(record: FaultRecord, errors: readonly ClientError[]): Goal | undefined {
  const goal = faults.find((f) => f.name === record.name)?.goal;
  if (!goal) return undefined;
  const from = goal.from === 'promotion' ? record.moments.promotion : record.startedAt;
  if (from === undefined) return { met: true, line: `${record.name}: not measured (${record.notes.join('; ')})` };
  const last = errors.reduce((t, e) => Math.max(t, e.at), from);
  const after = (last - from) / 1000;
  return { met: after <= goal.seconds, line: `client errors ended ${after.toFixed(1)} s after the ${goal.from === 'promotion' ? 'promotion' : 'fault'} (goal ${goal.seconds} s): ${after <= goal.seconds ? 'met' : 'MISSED'} — ${record.name}` };
}

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
  await call('PUT', '/settings', JSON.stringify({ currency: 'EUR', taxRates: { normal: '19' }, paymentMethods: ['cash'], fiscalization: { provider: 'local' } }));
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
    env: { FULFILLMENT_URL: standIn.url, FULFILLMENT_RETRY_SCHEDULE_MS: '500,1000,2000,5000', FISCAL_RETRY_SCHEDULE_MS: '500,1000,2000,5000', SHUTDOWN_DELAY_MS: '1000' },
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
    let faultsDoneAt: number | undefined = undefined;
    const options = {
      edges: balancer.edges,
      project: Project,
      tokens: { app: await token(['productsRead', 'checkoutRead', 'ordersRead']), pos: await token(['updatePricingCheckoutProcess']) },
      clients: Clients,
      idempotencyKeys,
      // The load goes on a while after the last fault, so that what comes after it is checked too (new events after the EVENTS purge).
      until: () => faultsDoneAt !== undefined && Date.now() > Math.max(startedAt + Seconds * 1000, faultsDoneAt + LoadAfterFaultsMs),
      onError: (e: ClientError) => errors.push(e),
    };
    const load = runLoad(options);
    const closings = runClosings({ ...options, token: await token(['closingsWrite']), everyMs: 15_000 });

    const records: FaultRecord[] = [];
    for (const fault of faults) {
      // At its time, but never inside the window of the one before (it would hide whose errors are whose).
      const previous = records.at(-1);
      await sleep(Math.max(0, startedAt + fault.at * Seconds * 1000 - Date.now(), previous ? previous.backAt + SettleMs - Date.now() : 0));
      const record: FaultRecord = { name: fault.name, startedAt: Date.now(), backAt: 0, notes: [], moments: {} };
      say(`+${secondsSince(startedAt)} s: ${fault.name}`);
      await fault.run(cluster, (note) => record.notes.push(note), record.moments);
      record.backAt = Date.now();
      records.push(record);
    }
    faultsDoneAt = Date.now();
    const flows = await load;
    const closingCount = await closings;
    const loadSeconds = (Date.now() - startedAt) / 1000;
    const settledMs = await settle(sql, Project);
    const verdict = await verify({ sql, nc, project: Project, flows, applied: standIn.applied, eventsPurgedAt: records.find((r) => r.name.startsWith('`EVENTS` purged'))?.startedAt });

    process.stdout.write('\n');
    const inWindow = new Set<ClientError>();
    const goals: Goal[] = [];
    const since = (t: number, from: number) => `+${((t - from) / 1000).toFixed(1)} s`;
    for (const r of records) {
      // An error belongs to the fault whose window its request was under way in (sent before the
      // window closed, failed after it opened: a request the killed part held fails at the kill).
      const mine = errors.filter((e) => !inWindow.has(e) && e.at >= r.startedAt && e.sentAt <= r.backAt + SettleMs);
      mine.forEach((e) => inWindow.add(e));
      const last = mine.reduce((t, e) => Math.max(t, e.at), r.startedAt);
      const window = mine.length ? `${mine.length} client errors from ${since(Math.min(...mine.map((e) => e.at)), r.startedAt)} to ${since(last, r.startedAt)}` : 'no client error';
      say(`${r.name}: ${window}; recovered after ${((last - r.startedAt) / 1000).toFixed(1)} s; back in ${((r.backAt - r.startedAt) / 1000).toFixed(1)} s${r.notes.length ? ` (${r.notes.join('; ')})` : ''}`);
      const goal = goalOf(r, mine);
      if (goal) goals.push(goal);
      for (const [what, group] of groupBy(mine, (e) => `${e.what.slice(0, 90)}`)) {
        say(`    ${group.length} × ${what} (${since(group[0]!.at, r.startedAt)} .. ${since(group.at(-1)!.at, r.startedAt)}; ${[...new Set(group.map((e) => e.step))].join(', ')})`);
      }
    }
    const outside = errors.filter((e) => !inWindow.has(e));
    for (const e of outside.slice(0, 10)) say(`error outside the fault windows: +${((e.at - startedAt) / 1000).toFixed(1)} s ${e.step} at ${e.edge}: ${e.what}`);
    for (const line of [...verdict.lost.slice(0, 10), ...verdict.doubled.slice(0, 10)]) say(line);
    const paid = flows.filter((f) => f.paid).length;
    say(`${paid} paid flows (${flows.filter((f) => f.byPost).length} created by POST with Idempotency-Key), ${(flows.length / loadSeconds).toFixed(1)} flows/s, ${closingCount} closing jobs; settled ${(settledMs / 1000).toFixed(1)} s after the load; ${verdict.notes.join('; ')}`);
    const fiveHundreds = errors.filter((e) => e.what.startsWith('500'));
    for (const g of goals) say(`goal: ${g.line}`);
    const unhealed = records.filter((r) => r.moments.unhealed);
    for (const r of unhealed) say(`not healed: ${r.name}`);
    // Met only when nothing was lost or done twice, no client saw an error outside a fault's window, nothing answered 500, every stream healed and every fault's goal held.
    const met = goals.every((g) => g.met) && fiveHundreds.length === 0 && verdict.lost.length === 0 && verdict.doubled.length === 0 && outside.length === 0 && unhealed.length === 0;
    process.stdout.write(
      `chaos: ${flows.length} flows, ${verdict.lost.length} lost, ${verdict.doubled.length} doubled, ${outside.length} client errors outside fault windows, ${fiveHundreds.length} answered 500; goals ${met ? 'met' : 'missed'}\n`,
    );
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
