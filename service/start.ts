import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { startWorkers, type WorkerDeps } from '../actors/index.js';
import { prepareSecretsAtRest } from '../actors/secrets-at-rest.js';
import type { KeyRing } from '../src/secrets/key-ring.js';
import { system } from '../subjects/system.js';
import { createTokenSigner, createTokenVerifier } from '../src/auth/tokens.js';
import type { Config } from '../src/config.js';
import { buildEdge, type EdgeApp } from '../src/edge/server.js';
import { createFailureCounts, ensureFailureCountsBucket, type FailureCounts } from '../src/edge/failure-counts.js';
import { createDrainState, drainEdge, type DrainState } from '../src/edge/shutdown.js';
import type { HealthReport } from '../src/edge/routes/health.js';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.js';
import { loadMigrations, migrate, migrationsDir } from '../src/infra/migrate.js';
import { connectNats, natsServerBinary, startNatsServer } from '../src/infra/nats.js';
import { connectPostgres } from '../src/infra/postgres.js';
import { superviseChild, type ChildLostError, type RunningChild, type SupervisedChild } from '../src/infra/supervise.js';
import { projectRoot } from '../src/infra/project-root.js';
import { resolveCheckoutSecret, resolveJwtSecret, resolveKeyRing, type Secret } from '../src/secrets/generated.js';
import { IssuerFileName, readIssuer } from '../src/infra/nats-auth/authority-file.js';
import type { Issuer } from '../src/infra/nats-auth/authority.js';
import { prepareSpawnedTrust } from '../src/infra/nats-auth/spawned.js';
import type { Logger } from '../src/logger.js';
import { createServiceClient, type ServiceClient } from '../src/messaging/client.js';
import { createMetrics, serveMetrics, type Metrics } from '../src/infra/metrics.js';
import { natsEventFeed } from '../src/messaging/event-feed.js';
import { createPublisher, type Publisher } from '../src/messaging/publisher.js';

/**
 * Builds the running service for a role: the HTTP edge, the worker pools, or both. `npm start`,
 * the tests and the benchmarks all start the service through this one function.
 */
export interface RunningService {
  /** The edge's Fastify instance (roles all and edge). Tests use `inject` on it. */
  edge?: EdgeApp;
  /** The address the edge listens on, once listening. */
  url?: string;
  /** Where `/metrics` is served: METRICS_PORT's own server, else the edge's port (a workers-only process without METRICS_PORT serves none). */
  metricsUrl?: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Listen on config.http (default true). Tests that only inject pass false. */
  listen?: boolean;
  /**
   * The embedded Postgres or the spawned nats-server died and could not be restarted
   * (EMBEDDED_MAX_RESTARTS failures in a row). `npm start` exits non-zero; default: logged only.
   */
  onChildLost?: (err: ChildLostError) => void;
  /**
   * The NATS connection ended for good: the servers refused this process's credentials twice in a
   * row (a revoked key whose renewed file is not here yet), after which the client stops trying.
   * `npm start` exits non-zero; default: logged only.
   */
  onNatsLost?: (message: string) => void;
  /** TSE providers beyond `local` (fiskaly), or a test's wrapper around every provider. */
  fiscal?: Pick<WorkerDeps['fiscal'], 'fiskaly' | 'wrap'>;
}

/** The children the embedded defaults started and keep running, by the health check they stand behind. */
type Children = Partial<Record<'nats' | 'postgres', SupervisedChild>>;

export async function startService(config: Config, log: Logger, options: StartOptions = {}): Promise<RunningService> {
  // Started parts stop in reverse order, also when a later step of the start fails: the edge
  // drains, the workers finish, then NATS (the connection drains, then the spawned server stops),
  // and the database last (the pools, then the embedded Postgres), which the drain still needed.
  const stops: Array<() => Promise<unknown>> = [];
  const databaseStops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of [...stops.splice(0).reverse(), ...databaseStops.splice(0).reverse()]) {
      await step().catch((err: unknown) => log.error({ err }, 'shutdown step failed'));
    }
  };
  const children: Children = {};
  const metrics = createMetrics();
  const supervise = (part: keyof Children, name: string, first: RunningChild, restart: () => Promise<RunningChild>) => {
    const child = superviseChild(first, {
      name,
      restart,
      log,
      maxRestarts: config.embedded.maxRestarts,
      onGiveUp: options.onChildLost ?? ((err) => log.fatal({ err }, 'an embedded child server is lost')),
    });
    children[part] = child;
    (part === 'postgres' ? databaseStops : stops).push(() => child.stop());
  };
  try {
    // Without a nats-server to spawn nothing else is worth starting (nor generating).
    const natsBin = config.nats.url ? undefined : await natsServerBinary(config.nats.serverBin);
    // The key secrets are sealed with at rest: the workers' stored secrets, and npm start's NATS trust.
    const keys = config.role !== 'edge' ? await resolveKeyRing(config) : undefined;
    if (keys) logGenerated(log, 'SECRETS_KEY', keys, 'stored secrets are sealed with it');
    let natsUrl = config.nats.url;
    let { creds } = config.nats;
    // What the workers issue integrations' credentials with: npm start's authority, opened as it is made, or NATS_ISSUER.
    let authority: Issuer | undefined;
    if (!natsUrl) {
      const trust = await prepareSpawnedTrust(config.dataDir, keys!.ring);
      if (trust.folder.created) log.info({ dir: trust.folder.dir }, 'made the NATS operator, accounts and users: the spawned nats-server refuses any other connection');
      // NATS's own port when it is free, so that integrators' tools find the spawned server as they would any.
      const start = (port?: number) =>
        startNatsServer({ storeDir: path.join(config.dataDir, 'nats'), bin: natsBin, log, preferredPort: 4222, port, configFile: trust.configFile });
      const server = await start();
      supervise('nats', 'the spawned nats-server', server, () => start(server.port));
      natsUrl = server.url;
      creds = trust.folder.creds.service;
      authority = trust.folder.authority;
    } else if (config.role !== 'edge' && config.nats.issuer) {
      const read = await readIssuer(config.nats.issuer, keys!.ring);
      authority = read.issuer;
      if (read.identityKeys) {
        log.warn({ file: config.nats.issuer }, `NATS_ISSUER names the authority file, which holds the NATS identity keys too: give the workers ${IssuerFileName} from the same folder instead`);
      }
    }
    const nc = await connectNats({ url: natsUrl, name: `checkout-platform-${config.role}`, log, creds, tls: config.nats.tls });
    void nc.closed().then((err) => {
      if (!err) return;
      const message = `NATS refused this process's credentials and it stopped trying (${err.message}): start it again with a valid NATS_CREDS file (a renewed role's, npm run nats-auth -- --renew)`;
      (options.onNatsLost ?? ((m: string) => log.fatal(m)))(message);
    });
    const publisher = createPublisher(nc);
    stops.push(async () => {
      publisher.flush();
      await nc.drain();
    });

    if (config.role !== 'edge') {
      let databaseUrl = config.database.url;
      if (!databaseUrl) {
        const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log });
        supervise('postgres', 'the embedded Postgres', embedded, () => embedded.restart());
        databaseUrl = embedded.url;
      }
      const natsIssuer = authority ? { authority, target: { servers: natsUrl, tls: config.nats.tls } } : undefined;
      await startWorkerSide(config, log, databaseUrl, { nc, publisher, secrets: keys!.ring, natsIssuer }, { stops, databaseStops }, options, metrics);
      // A workers-only process has no address to announce: this line says it serves (scripts/cluster.ts waits for it).
      if (config.role === 'workers') log.info({ role: config.role }, 'worker pools serving');
    }

    let edge: EdgeApp | undefined;
    let url: string | undefined;
    if (config.role !== 'workers') {
      const client = createServiceClient({ nc, publisher, timeoutMs: config.requestTimeoutMs, metrics });
      stops.push(async () => client.close());
      // Shared over NATS when the NATS is (NATS_URL: other edges may use it); in memory when this process spawned its own.
      const failureCounts = await createFailureCounts({ windowMs: config.throttle.authFailures.windowMs, nc: config.nats.url ? nc : undefined, log });
      stops.push(() => failureCounts.stop());
      const drain = createDrainState();
      edge = await startEdgeSide(config, log, nc, client, children, failureCounts, { drain, metrics });
      // First of all on stop: the requests in flight finish while the workers still answer them.
      stops.push(() => drainEdge(edge!, drain, { ...config.shutdown, log }));
      if (options.listen ?? true) {
        url = await edge.listen({ host: config.http.host, port: config.http.port });
        log.info({ url, role: config.role }, 'checkout platform listening');
      } else {
        await edge.ready();
      }
    }
    let metricsUrl = url && config.metrics.port === undefined ? `${url}/metrics` : undefined;
    if (config.metrics.port !== undefined) {
      // Stopped first: the parts it reads stop after it.
      const server = await serveMetrics(metrics, { host: config.http.host, port: config.metrics.port, log });
      stops.push(() => server.stop());
      metricsUrl = server.url;
      log.info({ url: metricsUrl }, 'metrics listening');
    }
    return { edge, url, metricsUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startWorkerSide(
  config: Config,
  log: Logger,
  databaseUrl: string,
  bus: { nc: NatsConnection; publisher: Publisher; secrets: KeyRing; natsIssuer?: WorkerDeps['natsIssuer'] },
  { stops, databaseStops }: { stops: Array<() => Promise<unknown>>; databaseStops: Array<() => Promise<unknown>> },
  options: StartOptions,
  metrics: Metrics,
): Promise<void> {
  const sql = connectPostgres({ url: databaseUrl, poolMax: config.database.poolMax, waitMs: config.database.waitMs });
  databaseStops.push(() => sql.end({ timeout: 5 }));
  // Checkouts (and the clients' sign-ins, as short and as hot) get a pool of their own: long
  // import transactions never take the connections a checkout waits for, and its sessions keep one
  // generic plan per statement instead of planning the cart's catalog statement anew on every call
  // (it took as long to plan as to run). It is
  // small by default: queries pipelined on two connections cost Postgres and this process less
  // than the same queries spread over ten (measured: 1571 against 1281 checkouts/s on 2 cores).
  const checkoutSql = connectPostgres({
    url: databaseUrl,
    poolMax: config.database.checkoutPoolMax,
    applicationName: 'checkout-platform-checkout',
    waitMs: config.database.waitMs,
    settings: { plan_cache_mode: 'force_generic_plan' },
  });
  databaseStops.push(() => checkoutSql.end({ timeout: 5 }));
  const migrations = await loadMigrations(migrationsDir());
  await migrate(sql, migrations, log);
  await prepareSecretsAtRest(sql, bus.secrets, log);
  const checkoutSecret = await resolveCheckoutSecret(config);
  logGenerated(log, 'CHECKOUT_SIGNING_SECRET', checkoutSecret, 'every worker process must share it');
  const checkout = { signingKey: new TextEncoder().encode(checkoutSecret.secret), infoTtlMs: config.checkout.infoTtlSeconds * 1000 };
  // The edges' failed sign-in bucket: an edge may read and write its keys, but not make it.
  await ensureFailureCountsBucket(bus.nc, { windowMs: config.throttle.authFailures.windowMs, replicas: config.jetstream.replicas, log });
  const workers = await startWorkers({
    sql, checkoutSql, ...bus, log, migrations, checkout, checkoutCacheMaxEntries: config.checkout.cacheMaxEntries, orders: config.orders, events: config.events, jetstream: config.jetstream, receipts: config.receipts,
    closings: { ...config.closings, softwareVersion: packageVersion() },
    fulfillment: { ...config.fulfillment, publicBaseUrl: config.publicBaseUrl },
    fiscal: { ...config.fiscal, ...options.fiscal },
    webhooks: config.webhooks,
    integrations: config.integrations,
    metrics,
    databaseWaitMs: config.database.waitMs,
  });
  stops.push(() => workers.stop());
}

async function startEdgeSide(
  config: Config,
  log: Logger,
  nc: NatsConnection,
  client: ServiceClient,
  children: Children,
  failureCounts: FailureCounts,
  parts: { drain: DrainState; metrics: Metrics },
): Promise<EdgeApp> {
  const signing = await resolveJwtSecret(config);
  logGenerated(log, 'JWT_SECRET', signing, 'npm run token signs with it');
  const verifier = createTokenVerifier({
    secret: signing.secret,
    jwksUrl: config.auth.jwksUrl,
    issuer: config.auth.issuer,
    audience: config.auth.audience,
  });
  // Tokens for clients are signed here, where JWT_SECRET is: the workers decide what a token says
  // and never hold the secret (docs/operations.md, "Where tokens are signed").
  const signer = signing.secret ? createTokenSigner({ secret: signing.secret, issuer: config.auth.issuer, audience: config.auth.audience }) : undefined;
  return buildEdge({
    config, log, client, verifier, signer, health: () => checkHealth(nc, client, children), version: packageVersion(), failureCounts,
    drain: parts.drain, metrics: parts.metrics, serveMetrics: config.metrics.port === undefined, events: natsEventFeed(nc),
  });
}

function logGenerated(log: Logger, variable: string, secret: Secret, note: string): void {
  if (!secret.generated) return;
  const { file, created } = secret.generated;
  log.warn(
    { file },
    created ? `${variable} is unset: generated a secret into the data directory (${note})` : `${variable} is unset: using the secret generated earlier in the data directory`,
  );
}

const HealthTimeoutMs = 2000;

async function checkHealth(nc: NatsConnection, client: ServiceClient, children: Children): Promise<HealthReport> {
  // A child that is being restarted is down, whatever a connection may still believe.
  const down: NonNullable<HealthReport['embedded']> = {};
  for (const [part, child] of Object.entries(children) as Array<[keyof Children, SupervisedChild]>) {
    const status = child.status();
    if (status.state !== 'running') down[part] = status;
  }
  const natsOk =
    !down.nats &&
    !client.disconnected() &&
    (await withTimeout(nc.rtt(), HealthTimeoutMs).then(
      () => true,
      () => false,
    ));
  const worker = natsOk ? await client.call(system.health, {}, { timeoutMs: HealthTimeoutMs }).catch(() => undefined) : undefined;
  const checks: HealthReport['checks'] = {
    nats: natsOk ? 'ok' : 'unavailable',
    postgres: down.postgres ? 'unavailable' : (worker?.postgres ?? 'unknown'),
    migrations: worker ? worker.migrations : 'unknown',
  };
  const ok = checks.nats === 'ok' && checks.postgres === 'ok' && checks.migrations === 'ok';
  return { status: ok ? 'ok' : 'unavailable', checks, ...(Object.keys(down).length ? { embedded: down } : {}) };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

let version: string | undefined;
function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}
