import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { arch, platform, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.js';
import { startNatsServer, type SpawnedNatsServer } from '../src/infra/nats.js';
import { findExecutable, freePort } from '../src/infra/processes.js';
import { projectRoot } from '../src/infra/project-root.js';
import { createLogger } from '../src/logger.js';
import { resolveCheckoutSecret, resolveJwtSecret, resolveKeyRing } from '../src/secrets/generated.js';
import { ensureNatsAuth, type NatsAuthFolder, type StoredAuthority } from '../src/infra/nats-auth/authority-file.js';
import type { Role } from '../src/infra/nats-auth/permissions.js';
import { natsServerConfig } from '../src/infra/nats-auth/server-config.js';
import { MissingBinaries, postgresBinDir, startPostgresPair, userIds, type PostgresPair } from './postgres-pair.js';

/**
 * `npm run cluster`: the platform as it runs at scale, on one machine. A three-node nats-server
 * cluster with JetStream (each node its own store, client, route and monitoring port), two edges
 * and three worker processes (the roles `edge` and `workers` of dist/service/main.js) with
 * JETSTREAM_REPLICAS=3, on a Postgres primary with a synchronous standby (the machine's PostgreSQL
 * binaries; an embedded Postgres alone without them) or on DATABASE_URL. It prints where each part
 * listens and stops all of it on Ctrl-C (SIGINT, SIGTERM, SIGHUP).
 *
 * As a module (scripts/chaos.ts, test/cluster.test.ts) it hands out every part, to be killed and
 * started again.
 */
export interface ClusterOptions {
  /** Stores, configuration files, logs. Default: a new temp dir, removed by stop(). */
  dir?: string;
  /**
   * A Postgres whose database exists. Default: a primary and a synchronous standby under `dir` from
   * the machine's PostgreSQL binaries (scripts/postgres-pair.ts), else an embedded one.
   */
  databaseUrl?: string;
  /** Default 2. */
  edges?: number;
  /** Default 3. */
  workers?: number;
  /** Default 3. */
  natsNodes?: number;
  /** JETSTREAM_REPLICAS of every process (default: the number of nodes). */
  replicas?: number;
  /** Environment of every service process, on top of this one's and the cluster's. */
  env?: Record<string, string>;
  /** Take well-known ports (NATS 4231.., routes 6231.., monitoring 8231.., edges 8081..) when free. Default false: any free port. */
  wellKnownPorts?: boolean;
  /** Lines an operator reads (what starts, where it listens). Default: none. */
  say?: (line: string) => void;
}

export interface Part {
  name: string;
  /** The process id while it runs. */
  pid(): number | undefined;
  running(): boolean;
  /** Sends a signal and waits until the process is gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts it again (same ports, same store) and waits until it serves. */
  start(): Promise<void>;
}

export interface NatsNode extends Part {
  url: string;
  port: number;
  clusterPort: number;
  monitorPort: number;
  storeDir: string;
  configFile: string;
}

export interface ServiceProcess extends Part {
  role: 'edge' | 'workers';
  /** The edge's address. */
  url?: string;
  logFile: string;
  /** The last lines it wrote. */
  tail(): string;
}

export interface ClusterPostgres {
  url: string;
  /** The primary and its synchronous standby this cluster started (the workers' url names both). */
  pair?: PostgresPair;
  /** The embedded Postgres this cluster started when the machine has no PostgreSQL binaries for a pair. */
  embedded?: { clusterDir: string };
  /** Restarts the primary (pg_ctl restart -m fast); undefined for DATABASE_URL (never restarted). */
  restart?: () => Promise<void>;
  /** Lines an operator reads: each server, where it listens. */
  describe(): string[];
}

export interface Cluster {
  dir: string;
  /** Every node, comma-separated: what the service processes get as NATS_URL. */
  natsUrl: string;
  /** The platform's NATS trust the nodes hold (its role credentials; admin.creds for an operator's tools). */
  natsAuth: NatsAuthFolder;
  /** What a process of a role connects with: NATS_URL, NATS_CREDS, and for workers NATS_ISSUER. */
  natsEnv(role: Role): Record<string, string>;
  /** A connection as a user of a role (admin: the operator's tools), to every node. */
  connectAs(role: Role, options?: Partial<ConnectionOptions>): Promise<NatsConnection>;
  /** The data directory the service processes share (its generated secrets; `npm run token` with DATA_DIR). */
  dataDir: string;
  jwtSecret: string;
  nats: NatsNode[];
  edges: ServiceProcess[];
  workers: ServiceProcess[];
  postgres: ClusterPostgres;
  /** One line per part: what it is and where it listens. */
  describe(): string[];
  stop(): Promise<void>;
}

const ClusterName = 'checkout-cluster';
/** How long a service process may take to serve after it was started. */
const StartTimeoutMs = 90_000;

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const say = options.say ?? (() => {});
  const ownDir = !options.dir;
  const dir = path.resolve(options.dir ?? (await mkdtemp(path.join(tmpdir(), 'checkout-cluster-'))));
  await mkdir(path.join(dir, 'logs'), { recursive: true });
  // As root, the embedded Postgres runs as the postgres user, which must be able to enter the folder.
  await chmod(dir, 0o755);
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step().catch((err: unknown) => say(`stopping: ${String(err)}`));
    if (ownDir) await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = (base: number, i: number) => freePort(options.wellKnownPorts ? base + i : 0);
    const count = options.natsNodes ?? 3;
    // Every process must share the secrets: generated once here (outside production) into the data dir they share.
    const dataDir = path.join(dir, 'data');
    const secretsConfig = loadConfig({ ...process.env, ROLE: 'all', DATA_DIR: dataDir, ...options.env });
    // The nodes trust the platform's operator and authenticate their routes: no connection, and no node, without credentials.
    const natsAuth = await ensureNatsAuth(path.join(dir, 'nats-auth'), (await resolveKeyRing(secretsConfig)).ring);
    const nats = await startNodes(dir, count, port, { authority: natsAuth.authority, route: { user: 'route', password: randomBytes(24).toString('base64url') } });
    stops.push(() => Promise.all(nats.map((n) => n.kill('SIGTERM'))));
    const natsUrl = nats.map((n) => n.url).join(',');
    say(`NATS cluster ${ClusterName}: ${nats.map((n) => `${n.name} ${n.url}`).join(', ')}`);

    const postgres: ClusterPostgres = options.databaseUrl
      ? { url: options.databaseUrl, describe: () => [`${'postgres'.padEnd(10)} ${redact(options.databaseUrl!)}`] }
      : await startPostgres(dir, stops, say);
    say(`Postgres: ${redact(postgres.url)}${postgres.pair ? ' (a primary and a synchronous standby)' : postgres.embedded ? ` (embedded, ${postgres.embedded.clusterDir})` : ''}`);

    const jwtSecret = (await resolveJwtSecret(secretsConfig)).secret ?? '';
    const checkoutSecret = (await resolveCheckoutSecret(secretsConfig)).secret;
    const natsEnv = (role: Role): Record<string, string> => ({
      NATS_URL: natsUrl,
      NATS_CREDS: natsAuth.creds[role],
      ...(role === 'edge' ? {} : { NATS_ISSUER: natsAuth.issuerFile }),
    });
    const env: Record<string, string> = {
      DATABASE_URL: postgres.url,
      JETSTREAM_REPLICAS: String(options.replicas ?? count),
      DATA_DIR: dataDir,
      JWT_SECRET: jwtSecret,
      CHECKOUT_SIGNING_SECRET: checkoutSecret,
      HOST: '127.0.0.1',
      LOG_FORMAT: 'json',
      ...options.env,
    };

    const workers = Array.from({ length: options.workers ?? 3 }, (_, i) => serviceProcess(dir, `workers-${i + 1}`, 'workers', { ...natsEnv('workers'), ...env }));
    stops.push(() => Promise.all(workers.map((w) => w.kill('SIGTERM'))));
    // One at a time: the first applies the migrations, and two cores start three processes faster in turn.
    for (const w of workers) await w.start();
    say(`workers: ${workers.map((w) => `${w.name} (pid ${w.pid()})`).join(', ')}`);

    const edges: ServiceProcess[] = [];
    for (let i = 0; i < (options.edges ?? 2); i++) edges.push(serviceProcess(dir, `edge-${i + 1}`, 'edge', { ...natsEnv('edge'), ...env, PORT: String(await port(8081, i)) }));
    stops.push(() => Promise.all(edges.map((e) => e.kill('SIGTERM'))));
    await Promise.all(edges.map((e) => e.start()));
    say(`edges: ${edges.map((e) => `${e.name} ${e.url}`).join(', ')}`);

    return {
      dir,
      natsUrl,
      natsAuth,
      natsEnv,
      connectAs: async (role, connectOptions = {}) =>
        connect({ servers: natsUrl.split(','), authenticator: credsAuthenticator(await readFile(natsAuth.creds[role])), ...connectOptions }),
      dataDir,
      jwtSecret,
      nats,
      edges,
      workers,
      postgres,
      describe: () => [
        ...nats.map((n) => `${n.name.padEnd(10)} nats ${n.url}  routes :${n.clusterPort}  monitoring http://127.0.0.1:${n.monitorPort}  store ${n.storeDir}`),
        ...postgres.describe(),
        ...workers.map((w) => `${w.name.padEnd(10)} ROLE=workers  pid ${w.pid() ?? '-'}  log ${w.logFile}`),
        ...edges.map((e) => `${e.name.padEnd(10)} ROLE=edge ${e.url}  pid ${e.pid() ?? '-'}  log ${e.logFile}`),
      ],
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The NATS nodes, on ports found free. A port found free can be taken before its node binds it
 * (tests run side by side): then every node that started is stopped and all of them start again
 * on other ports, up to three times (each node's routes name every other node's port). A node that
 * failed otherwise stops the others too (before, they were left running).
 */
interface NodeTrust {
  authority: StoredAuthority;
  /** What the routes between the nodes authenticate with. */
  route: { user: string; password: string };
}

async function startNodes(dir: string, count: number, port: (base: number, i: number) => Promise<number>, trust: NodeTrust): Promise<NatsNode[]> {
  for (let attempt = 1; ; attempt++) {
    const nodePorts = [];
    for (let i = 0; i < count; i++) nodePorts.push({ port: await port(4231, i), clusterPort: await port(6231, i), monitorPort: await port(8231, i) });
    const routes = nodePorts.map((p) => `nats-route://${trust.route.user}:${trust.route.password}@127.0.0.1:${p.clusterPort}`);
    const started = await Promise.allSettled(nodePorts.map((p, i) => startNode(dir, `nats-${i + 1}`, p, routes, trust)));
    const nodes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (!failed) return nodes;
    await Promise.all(nodes.map((n) => n.kill('SIGTERM')));
    if (attempt === 3 || !String(failed.reason).includes('address already in use')) throw failed.reason;
    // The next attempt starts the cluster afresh: no store remembers the routes of this one.
    await Promise.all(nodePorts.map((_, i) => rm(path.join(dir, `nats-${i + 1}`), { recursive: true, force: true })));
  }
}

/**
 * A cluster node: its name, the platform's trust (with a resolver folder of its own) and the
 * authenticated routes in a configuration file, the rest as flags (startNatsServer).
 */
async function startNode(dir: string, name: string, ports: { port: number; clusterPort: number; monitorPort: number }, routes: string[], trust: NodeTrust): Promise<NatsNode> {
  const storeDir = path.join(dir, name);
  const configFile = path.join(dir, `${name}.conf`);
  const resolverDir = path.join(storeDir, 'accounts');
  await mkdir(resolverDir, { recursive: true });
  // A lone node is no cluster: with a cluster block and no peer, JetStream would wait for a quorum forever.
  const cluster = routes.length > 1 ? { name: ClusterName, listen: `127.0.0.1:${ports.clusterPort}`, routes, ...trust.route } : undefined;
  await writeFile(configFile, natsServerConfig(trust.authority, { server: { name }, resolverDir, ...(cluster ? { cluster } : {}) }), { mode: 0o600 });
  const bin = process.env.NATS_SERVER_BIN ?? (await findExecutable('nats-server'));
  const log = createLogger({ level: 'silent' });
  let server: SpawnedNatsServer | undefined;
  const node: NatsNode = {
    name,
    url: `nats://127.0.0.1:${ports.port}`,
    ...ports,
    storeDir,
    configFile,
    pid: () => (server ? server.pid : undefined),
    running: () => server !== undefined,
    async kill(signal) {
      const current = server;
      if (!current) return;
      if (signal === 'SIGTERM') await current.stop();
      else {
        process.kill(current.pid, signal);
        await current.exited;
      }
    },
    async start() {
      server = await startNatsServer({ storeDir, bin, log, port: ports.port, monitorPort: ports.monitorPort, configFile });
      const started = server;
      void started.exited.then(() => {
        if (server === started) server = undefined;
      });
    },
  };
  await node.start();
  return node;
}

/**
 * A primary and a synchronous standby when the machine has PostgreSQL's binaries (as production runs
 * it, docs/operations.md), else the embedded Postgres alone, saying so.
 */
async function startPostgres(dir: string, stops: Array<() => Promise<unknown>>, say: (line: string) => void): Promise<ClusterPostgres> {
  if (await postgresBinDir()) {
    const pair = await startPostgresPair({ dir: path.join(dir, 'postgres') });
    stops.push(() => pair.stop());
    return { url: pair.url, pair, restart: () => pair.primary().restart(), describe: () => pair.describe() };
  }
  say(`no standby: ${MissingBinaries}; an embedded Postgres alone`);
  const root = path.join(dir, 'postgres');
  const log = createLogger({ level: 'warn' });
  const embedded = await startEmbeddedPostgres({ dataDir: root, log });
  const clusterDir = path.join(root, 'postgres');
  const pgCtl = ((await import(`@embedded-postgres/${platform()}-${arch()}`)) as { pg_ctl: string }).pg_ctl;
  // Postgres refuses to run as root: embedded-postgres runs it as the postgres user, and so must pg_ctl.
  const asUser = process.getuid?.() === 0 ? userIds('postgres') : {};
  const pgCtlRun = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(pgCtl, [...args, '-D', clusterDir, '-w', '-t', '60'], { ...asUser, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl ${args[0]} failed (${code}): ${output.trim()}`))));
    });
  let restarted = false;
  stops.push(async () => {
    // pg_ctl stops whichever postmaster runs, the first one or one a restart started.
    if (restarted) await pgCtlRun(['stop', '-m', 'fast']);
    else await embedded.stop();
  });
  return {
    url: embedded.url,
    embedded: { clusterDir },
    async restart() {
      restarted = true;
      // The log of the restarted server goes beside its data (the postgres user may write there).
      await pgCtlRun(['restart', '-m', 'fast', '-l', path.join(clusterDir, 'restarted.log')]);
    },
    describe: () => [`${'postgres'.padEnd(10)} ${redact(embedded.url)}  embedded, data ${clusterDir}`],
  };
}

/** The service processes running now: if this process dies without stopping them, they must not outlive it. */
const living = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of living) child.kill('SIGKILL');
});

/** A service process (dist/service/main.js) in a role, started again as often as asked, logging to its own file. */
function serviceProcess(dir: string, name: string, role: 'edge' | 'workers', env: Record<string, string>): ServiceProcess {
  const logFile = path.join(dir, 'logs', `${name}.log`);
  const port = env.PORT;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let tail = '';
  let log: WriteStream | undefined;

  const part: ServiceProcess = {
    name,
    role,
    url: port ? `http://127.0.0.1:${port}` : undefined,
    logFile,
    tail: () => tail,
    pid: () => child?.pid,
    running: () => child !== undefined,
    async kill(signal) {
      if (!child) return;
      child.kill(signal);
      // A process that does not finish its drain in time is ended.
      const hard = signal === 'SIGKILL' ? undefined : setTimeout(() => child?.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(hard);
    },
    async start() {
      log ??= createWriteStream(logFile, { flags: 'a' });
      const started = spawn(process.execPath, ['--enable-source-maps', '--max-semi-space-size=32', path.join(projectRoot(), 'dist', 'service', 'main.js')], {
        // Workers are quiet at info (and say when they serve); edges write a line per request at info.
        env: { ...process.env, ROLE: role, LOG_LEVEL: role === 'workers' ? 'info' : 'warn', ...env } as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = started;
      let ready: () => void = () => {};
      const serving = new Promise<void>((resolve) => (ready = resolve));
      const onOutput = (chunk: Buffer) => {
        log?.write(chunk);
        tail = (tail + chunk.toString()).slice(-8000);
        if (role === 'workers' && tail.includes('"msg":"worker pools serving"')) ready();
      };
      started.stdout?.on('data', onOutput);
      started.stderr?.on('data', onOutput);
      living.add(started);
      exited = new Promise<void>((resolve) =>
        started.once('exit', () => {
          living.delete(started);
          if (child === started) child = undefined;
          resolve();
        }),
      );
      // Only this start's output says that it serves.
      tail = '';
      const gone = exited.then(() => {
        throw new Error(`${name} exited before it served: ${tail.slice(-2000)}`);
      });
      const timeout = sleep(StartTimeoutMs).then(() => {
        throw new Error(`${name} did not serve within ${StartTimeoutMs / 1000} s: ${tail.slice(-2000)}`);
      });
      const listening = role === 'edge' ? untilAnswering(`${part.url}/health`, exited) : serving;
      await Promise.race([listening, gone, timeout]);
    },
  };
  return part;
}

/** Resolves once the url answers at all (an edge that listens), or never once the process is gone. */
async function untilAnswering(url: string, exited: Promise<void>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  while (!gone) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return;
    } catch {
      await sleep(100);
    }
  }
  await new Promise(() => {});
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]+@/, '//$1:***@');
}

async function main(): Promise<void> {
  const say = (line: string) => process.stdout.write(`cluster: ${line}\n`);
  const replicas = Number(process.env.JETSTREAM_REPLICAS) || undefined;
  const cluster = await startCluster({ databaseUrl: process.env.DATABASE_URL || undefined, dir: process.env.CLUSTER_DIR || undefined, replicas, wellKnownPorts: true, say });
  process.stdout.write(`\n${cluster.describe().join('\n')}\n\n`);
  process.stdout.write(`A token: DATA_DIR=${cluster.dataDir} npm run --silent token -- --project <project> --permissions all\n`);
  process.stdout.write(`NATS_URL=${cluster.natsUrl}: every stream, bucket and consumer has ${replicas ?? cluster.nats.length} replicas\n`);
  process.stdout.write(`Every connection needs credentials, and the nodes' routes authenticate; your own tools: --creds ${cluster.natsAuth.creds.admin}\n`);
  process.stdout.write('Ctrl-C stops all of it.\n');
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping edges, workers, NATS nodes and Postgres`);
    cluster.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        say(`stop failed: ${String(err)}`);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    process.stderr.write(`cluster: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
