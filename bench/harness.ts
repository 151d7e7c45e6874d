import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import postgres from 'postgres';
import { signToken, type TokenRequest } from '../src/auth/tokens.js';
import { startNatsServer } from '../src/infra/nats.js';
import { prepareSpawnedTrust } from '../src/infra/nats-auth/spawned.js';
import { createKeyRing, parseKey } from '../src/secrets/key-ring.js';
import { makeTlsFiles } from '../test/support/tls.js';
import { freePort } from '../src/infra/processes.js';
import { projectRoot } from '../src/infra/project-root.js';
import { createLogger } from '../src/logger.js';
import { addCpuSpent, cpuWatch, emptyCpuTimes, parentPid, platformCpu, type CpuTimes, type CpuWatch } from './cpu.js';

/**
 * What every scenario stands on: a fresh database on BENCH_DATABASE_URL's server, a nats-server of
 * its own, and the service started as operators start it (dist/service/main.js) in its own process.
 */
export const AdminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const Secret = 'bench-secret-that-is-long-enough-for-hs256-0123456789';
const quiet = createLogger({ level: 'silent' });

export interface Bench {
  url: string;
  databaseUrl: string;
  /** The service's process ids (one, or edge and workers). */
  pids: number[];
  /** The bench's nats-server monitoring (/varz counts its messages). */
  natsMonitorUrl: string;
  /** How a plain client reaches the bench's nats-server as the service does (its creds and CA), and as an operator (admin). */
  nats: { url: string; creds?: string; adminCreds?: string; caFile?: string; storeDir: string };
  /** The bench's Postgres server's postmaster, when known (its CPU and its children's is Postgres's). */
  postmasterPid?: number;
  /** CPU time of the service, Postgres, the bench's nats-server and the bench itself (cpu.ts). */
  cpu: CpuWatch;
  token(request: Omit<TokenRequest, 'ttl'>): Promise<string>;
  /** A process of its own serving `body` on a bare Fastify route: the strict baseline. */
  bareServer(method: string, route: string, body: unknown): Promise<string>;
  /** A process of its own serving fixed answers on several bare Fastify routes (bare-server.ts), and its pid. */
  bareRoutes(routes: readonly BareRoute[]): Promise<{ url: string; pid: number }>;
  /** The same bare route inside this (the bench's) process, beside autocannon: the issues' baseline. */
  bareServerInProcess(method: string, route: string, body: unknown): Promise<string>;
  /**
   * Waits until the background work an earlier phase left is done (receipts of its final orders,
   * made ahead while the service is not busy), so that it does not load the next phase.
   */
  backgroundDone(): Promise<void>;
  /** Stops the service's processes and keeps the rest (its database and nats-server) for what is measured next. */
  stopService(): Promise<void>;
  close(): Promise<void>;
}

export interface BenchOptions {
  /** Environment for the service processes. */
  env?: Record<string, string>;
  /**
   * `single`: one process with ROLE=all, as `npm start`. `split`: ROLE=edge and ROLE=workers as two
   * processes, the shape operators scale out with.
   */
  topology?: 'single' | 'split';
  /** Processes the bench runs beside the service (stand-ins of outside services): their CPU is the bench's. */
  benchPids?: number[];
  /** The node binary the service runs on (default: the bench's own, process.execPath). */
  node?: string;
  /**
   * How the service reaches its nats-server: `credentials` (the default, as in production: the
   * platform's NATS trust, every process a user of its role), `tls` (credentials over TLS), or
   * `anonymous` (no credentials: NATS_ALLOW_ANONYMOUS, as before the message plane had a door).
   */
  natsSecurity?: NatsSecurity;
  /**
   * A second host for the service's DATABASE_URL (`host:port`), after the bench's Postgres, as a
   * primary and its standby are named (`target_session_attrs=read-write`); unset: one host.
   */
  secondHost?: string;
}

/** A bare route's fixed answer: `bodies` are sent in turn (a PATCH answered `processing`, then `successful`). */
export interface BareRoute {
  method: string;
  route: string;
  status: number;
  bodies: readonly string[];
}

export const NatsSecurities = ['anonymous', 'credentials', 'tls'] as const;
export type NatsSecurity = (typeof NatsSecurities)[number];

/** The key the bench's services seal secrets with. */
const BenchSecretsKey = Buffer.alloc(32, 9).toString('base64');

export async function startBench(options: BenchOptions = {}): Promise<Bench> {
  const env = options.env ?? {};
  const cleanups: Array<() => Promise<unknown>> = [];
  const dir = await mkdtemp(path.join(tmpdir(), 'cp-bench-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));

  const database = `cp_bench_${randomBytes(4).toString('hex')}`;
  const admin = postgres(AdminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${database}`);
  // The server's postmaster (the parent of this connection's backend): only its processes count as Postgres's CPU.
  const [{ pid: backendPid } = { pid: 0 }] = await admin<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const parent = await parentPid(backendPid);
  const postmasterPid = parent !== undefined && (await readFile(`/proc/${parent}/comm`, 'utf8').catch(() => '')).trim() === 'postgres' ? parent : undefined;
  cleanups.push(async () => {
    await admin.unsafe(`drop database if exists ${database} with (force)`);
    await admin.end();
  });
  const url = new URL(AdminUrl);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();
  const serviceDatabaseUrl = options.secondHost ? `${databaseUrl.replace(`@${url.host}/`, `@${url.host},${options.secondHost}/`)}?target_session_attrs=read-write` : databaseUrl;

  const natsStoreDir = path.join(dir, 'nats');
  const natsMonitorPort = await freePort();
  const security = options.natsSecurity ?? 'credentials';
  const tls = security === 'tls' ? await makeTlsFiles(dir) : undefined;
  const trust = security === 'anonymous' ? undefined : await prepareSpawnedTrust(dir, createKeyRing(parseKey(BenchSecretsKey)), { tls });
  const nats = await startNatsServer({ storeDir: natsStoreDir, log: quiet, monitorPort: natsMonitorPort, configFile: trust?.configFile });
  const natsEnv: Record<string, string> = trust
    ? { NATS_CREDS: trust.folder.creds.service, NATS_ISSUER: trust.folder.issuerFile, ...(tls ? { NATS_TLS_CA: tls.caFile } : {}) }
    : { NATS_ALLOW_ANONYMOUS: 'true' };
  cleanups.push(() => nats.stop());

  const port = await freePort();
  const serviceEnv = {
    DATABASE_URL: serviceDatabaseUrl,
    NATS_URL: nats.url,
    ...natsEnv,
    SECRETS_KEY: BenchSecretsKey,
    JWT_SECRET: Secret,
    CHECKOUT_SIGNING_SECRET: `checkout-${Secret}`,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    ...env,
  };
  // Split: the workers first, then the edge (Bench.pids in that order).
  const service = (role: Record<string, string>) => spawnNode('dist/service/main.js', [], { ...serviceEnv, ...role }, options.node);
  // Split: each process as a user of its own role.
  const roleCreds = (role: 'workers' | 'edge'): Record<string, string> => (trust ? { NATS_CREDS: trust.folder.creds[role] } : {});
  const processes = options.topology === 'split' ? [service({ ROLE: 'workers', ...roleCreds('workers') }), service({ ROLE: 'edge', ...roleCreds('edge') })] : [service({})];
  for (const child of processes) cleanups.push(() => stopProcess(child));
  const base = `http://127.0.0.1:${port}`;
  const receiptsAhead = env.RECEIPTS_AHEAD === 'true';
  await waitUntilHealthy(base, processes);

  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  const bareRoutes = async (routes: readonly BareRoute[]) => {
    const file = path.join(dir, `bare-${randomBytes(4).toString('hex')}.json`);
    await writeFile(file, JSON.stringify(routes));
    const barePort = await freePort();
    const bare = spawnNode('dist/bench/bare-server.js', [String(barePort), file], {});
    cleanups.push(() => stopProcess(bare));
    await waitForLine(bare, 'ready');
    return { url: `http://127.0.0.1:${barePort}`, pid: bare.pid ?? 0 };
  };
  /** When backgroundDone last found the work the flows left done. */
  let settledAt = new Date(0);
  return {
    url: base,
    databaseUrl,
    pids: processes.map((p) => p.pid ?? 0),
    natsMonitorUrl: `http://127.0.0.1:${natsMonitorPort}`,
    nats: { url: nats.url, creds: trust?.folder.creds.service, adminCreds: trust?.folder.creds.admin, caFile: tls?.caFile, storeDir: natsStoreDir },
    postmasterPid,
    cpu: cpuWatch({ servicePids: processes.map((p) => p.pid ?? 0), natsStoreDir, benchPids: options.benchPids, postmasterPid }),
    token: (request) => signToken({ ...request, ttl: '2h' }, { secret: Secret, issuer: 'checkout-platform', audience: 'checkout-platform' }),
    bareServer: async (method, route, body) => (await bareRoutes([{ method, route, status: 200, bodies: [JSON.stringify(body)] }])).url,
    bareRoutes,
    stopService: async () => {
      await Promise.all(processes.map(stopProcess));
    },
    async backgroundDone() {
      const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      try {
        for (const started = Date.now(); Date.now() - started < 120_000; await sleep(250)) {
          // The work sales leave behind: every event and job published (the outbox empty), every
          // signature recorded, and with RECEIPTS_AHEAD every final order's receipt made. Only the
          // orders finalized since the last phase settled (and a margin for sales still committing
          // then): asked of every order, each poll scanned them all, and its CPU, counted as the
          // phase's, grew with the run (12 ms at 3500 orders, 80 at 50 000).
          const [row] = await sql<{ pending: boolean; at: Date }[]>`
            select now() as at, exists (select from outbox) or exists (
              select from orders o left join fiscal_transactions t on o.fiscal_pending and t.project = o.project and t.process_id = o.id
              where o.finalized_at >= ${settledAt}::timestamptz - interval '5 seconds'
                and ((o.fiscal_pending and t.finish_log is null)
                     or (${receiptsAhead} and o.state = 'final' and not exists (select from receipts r where r.project = o.project and r.order_id = o.id)))) as pending`;
          if (!row!.pending) {
            settledAt = row!.at;
            return;
          }
        }
        throw new Error('the work sales left (events, signatures, receipts) still under way two minutes after the phase');
      } finally {
        await sql.end();
      }
    },
    async bareServerInProcess(method, route, body) {
      const app = Fastify({ logger: false });
      app.route({ method: method as 'GET', url: route, handler: async () => body });
      cleanups.push(() => app.close());
      return app.listen({ host: '127.0.0.1', port: 0 });
    },
    close,
  };
}

/** The service's node flags (as `npm start` has them), plus BENCH_NODE_FLAGS (such as `--cpu-prof --cpu-prof-dir=/tmp/prof`) to look inside a run. */
const ServiceFlags = ['--max-semi-space-size=32', ...(process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? [])];

const lastLines = new WeakMap<ChildProcess, string[]>();

function spawnNode(entry: string, args: string[], env: Record<string, string>, node = process.execPath): ChildProcess {
  const child = spawn(node, [...ServiceFlags, path.join(projectRoot(), entry), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout?.setEncoding('utf8');
  // The last lines it printed, for the error when it exits before it is healthy.
  const tail: string[] = [];
  child.stdout?.on('data', (chunk: string) => tail.push(...chunk.split('\n').filter(Boolean)) && tail.splice(0, Math.max(0, tail.length - 10)));
  lastLines.set(child, tail);
  return child;
}

async function waitForLine(child: ChildProcess, text: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: string) => chunk.includes(text) && resolve());
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before it was ready`)));
  });
}

async function waitUntilHealthy(base: string, children: ChildProcess[]): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const exited = children.find((c) => c.exitCode !== null);
    if (exited) throw new Error(`a service process exited (${exited.exitCode}); its last lines:\n${lastLines.get(exited)?.join('\n') ?? ''}`);
    const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false);
    if (ok) return;
    await sleep(100);
  }
  throw new Error('the service did not become healthy');
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** CPU time spent in the measured turns, when the load was given a CpuWatch. */
  cpu?: CpuTimes;
  /** CPU ms per request of each measured turn, all processes but the bench's, when measured (how much the cost drifted). */
  turnCpuPerRequest: number[];
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH';
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  /** Requests per second over all connections (autocannon's overallRate); unset: as fast as answers come. */
  overallRate?: number;
  durationSeconds?: number;
  /** Measure the CPU time of the measured turns (not the warm-up). */
  cpu?: CpuWatch;
}

/** Drives a URL with autocannon: a short warm-up, then the measured run. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const [result] = await loadInTurns([options], 1);
  return result!;
}

/**
 * Loads compared with each other, driven in turns (A, B, A, B, ...: `turns` each, of the duration
 * divided by `turns`) after a warm-up each, so that the drift of a shared machine weighs on each
 * alike. req/s over all its turns; p50 and p99 those of its slowest turn.
 */
export async function loadInTurns(targets: readonly LoadOptions[], turns: number): Promise<LoadResult[]> {
  const drive = (options: LoadOptions, duration: number) =>
    autocannon({ url: options.url, method: options.method ?? 'GET', headers: options.headers, body: options.body, connections: options.connections ?? 50, overallRate: options.overallRate, duration });
  for (const target of targets) await drive(target, 2);
  const results = targets.map((t): LoadResult & { seconds: number } => ({
    requestsPerSecond: 0, p50: 0, p99: 0, requests: 0, errors: 0, non2xx: 0, seconds: 0, turnCpuPerRequest: [], ...(t.cpu ? { cpu: emptyCpuTimes() } : {}),
  }));
  for (let turn = 0; turn < turns; turn++) {
    for (const [index, target] of targets.entries()) {
      const sum = results[index]!;
      const before = await target.cpu?.sample();
      const r = await drive(target, (target.durationSeconds ?? Number(process.env.BENCH_DURATION ?? 10)) / turns);
      if (target.cpu && before && sum.cpu) {
        const spent = emptyCpuTimes();
        addCpuSpent(spent, before, await target.cpu.sample());
        addCpuSpent(sum.cpu, emptyCpuTimes(), spent);
        sum.turnCpuPerRequest.push(platformCpu(spent) / Math.max(1, r.requests.total));
      }
      sum.requests += r.requests.total;
      sum.seconds += r.duration;
      sum.errors += r.errors + r.timeouts;
      sum.non2xx += r.non2xx;
      sum.p50 = Math.max(sum.p50, r.latency.p50);
      sum.p99 = Math.max(sum.p99, r.latency.p99);
    }
  }
  return results.map(({ seconds, ...r }) => ({ ...r, requestsPerSecond: r.requests / seconds }));
}

export function formatLoad(name: string, r: LoadResult): string {
  const problems = r.errors || r.non2xx ? `  (${r.errors} errors, ${r.non2xx} non-2xx)` : '';
  return `${name.padEnd(34)} ${r.requestsPerSecond.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(1).padStart(5)} ms   p99 ${r.p99.toFixed(1).padStart(5)} ms${problems}`;
}
