import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { connect, credsAuthenticator, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import postgres from 'postgres';
import type { Test } from 'tap';
import type { Permission } from '../../src/auth/permissions.js';
import { signToken } from '../../src/auth/tokens.js';
import { loadConfig, type Config } from '../../src/config.js';
import { freePort } from '../../src/infra/processes.js';
import { startNatsServer } from '../../src/infra/nats.js';
import type { NatsAuthFolder } from '../../src/infra/nats-auth/authority-file.js';
import type { Role } from '../../src/infra/nats-auth/permissions.js';
import { prepareSpawnedTrust } from '../../src/infra/nats-auth/spawned.js';
import { createKeyRing, parseKey } from '../../src/secrets/key-ring.js';
import { makeTlsFiles, type TlsFiles } from './tls.js';
import { pino } from 'pino';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService, type StartOptions } from '../../service/start.js';
import { createTestDatabase } from './database.js';
import { createHttpClient, type HttpClient } from './http.js';

export const TestSecret = 'test-secret-that-is-long-enough-for-hs256-0123456789';

// tap ends a file that runs too long with SIGALRM (and SIGKILL soon after); like SIGTERM, its
// default skips 'exit' handlers, where the nats-servers and services a file spawned are killed.
// Exit normally instead, so that they do not outlive the file.
process.once('SIGALRM', () => process.exit(142));
process.once('SIGTERM', () => process.exit(143));
export const TestProject = 'acme-test01';
export const TestCheckoutSecret = 'test-checkout-signing-secret-long-enough-0123456789';

/**
 * For files that make and sign in portal accounts: a person's password is hashed at N = 2^17
 * (0.3 s of a quiet core, 128 MiB), and with the suite's three files at once on two cores one hash
 * has taken over 5 s, the default time the edge waits for a worker's answer. These files test what
 * the answers say, not how fast they come: the edge waits up to 30 s.
 */
export const PasswordHashingEnv = { REQUEST_TIMEOUT_MS: '30000' } as const;

export interface TestService extends HttpClient {
  service: RunningService;
  config: Config;
  /** A connection to the file's own database, for asserting what was (not) stored. */
  sql: postgres.Sql;
  /** A connection to the file's own nats-server as its admin user, for subscribing like an operator's tool would. */
  nc: NatsConnection;
  natsUrl: string;
  infra: TestInfrastructure;
  databaseUrl: string;
  token(permissions: readonly Permission[], options?: { project?: string; ttl?: string; sub?: string; appUserID?: string }): Promise<string>;
}

export interface TestServiceOptions {
  /** Environment on top of the test defaults (ROLE, REQUEST_TIMEOUT_MS, ...). */
  env?: Record<string, string>;
  /** Receives the service's log lines (JSON text) at info level and above, for tests of what is logged. */
  logLines?: (line: string) => void;
  /** Options of startService beyond listening (a test's wrapper around the TSE providers). */
  start?: Omit<StartOptions, 'listen'>;
  /** The file's nats-server serves TLS only (its CA in NATS_TLS_CA). Default: plain. */
  natsTls?: boolean;
  /** The NATS user the service connects as (`edge` for ROLE=edge, as operators run it: in the edges' account). Default: `service`. */
  natsRole?: 'service' | 'edge' | 'workers';
}

/** The key the test services seal secrets with (SECRETS_KEY). */
export const TestSecretsKey = Buffer.alloc(32, 7).toString('base64');

export interface TestInfrastructure {
  databaseUrl: string;
  natsUrl: string;
  dataDir: string;
  /** The platform's NATS trust for the file's nats-server (as `npm start` makes it): every connection needs a user. */
  natsAuth: NatsAuthFolder;
  /** The environment a service process of a role connects with: NATS_URL, its NATS_CREDS, and for workers NATS_ISSUER and SECRETS_KEY. */
  natsEnv(role: 'service' | 'edge' | 'workers' | 'admin'): Record<string, string>;
  /** A connection as a user of a role (admin: everything, as a test that looks like an operator). */
  connectAs(role: Role, options?: Partial<ConnectionOptions>): Promise<NatsConnection>;
  /** With `natsTls`: the CA clients trust, and the server's certificate. */
  tls?: TlsFiles;
}

/**
 * The file's own database (cloned from the migrated template), nats-server (JetStream store in a
 * temp dir, the platform's NATS trust as `npm start` makes it: no connection without a user) and
 * data directory. Teardown fails the test if a database or NATS connection is still open once
 * everything that used them has stopped (register those stops after calling this).
 */
export async function provisionInfrastructure(t: Test, options: { natsTls?: boolean } = {}): Promise<TestInfrastructure> {
  const log = createLogger({ level: 'silent' });
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cp-test-'));
  const database = await createTestDatabase();
  const monitorPort = await freePort();
  const tls = options.natsTls ? await makeTlsFiles(dataDir) : undefined;
  const { folder: natsAuth, configFile } = await prepareSpawnedTrust(dataDir, createKeyRing(parseKey(TestSecretsKey)), { tls });
  const nats = await startNatsServer({ storeDir: path.join(dataDir, 'nats'), log, monitorPort, configFile });
  t.teardown(async () => {
    const leaked = await openNatsConnections(monitorPort);
    await nats.stop();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
    if (leaked.length > 0) throw new Error(`NATS connection(s) still open after the service stopped: ${leaked.join(', ')}`);
  });
  const natsEnv = (role: Role): Record<string, string> => ({
    NATS_URL: nats.url,
    NATS_CREDS: natsAuth.creds[role],
    ...(tls ? { NATS_TLS_CA: tls.caFile } : {}),
    ...(role === 'edge' ? {} : { NATS_ISSUER: natsAuth.issuerFile, SECRETS_KEY: TestSecretsKey }),
  });
  const connectAs = async (role: Role, connectOptions: Partial<ConnectionOptions> = {}) =>
    connect({ servers: nats.url, authenticator: credsAuthenticator(await readFile(natsAuth.creds[role])), ...(tls ? { tls: { caFile: tls.caFile } } : {}), ...connectOptions });
  return { databaseUrl: database.url, natsUrl: nats.url, dataDir, natsAuth, natsEnv, connectAs, ...(tls ? { tls } : {}) };
}

/**
 * The service as production builds it (startService), on the file's own infrastructure, listening
 * on a free port.
 */
export async function startTestService(t: Test, options: TestServiceOptions = {}): Promise<TestService> {
  const infra = await provisionInfrastructure(t, { natsTls: options.natsTls });
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: infra.databaseUrl,
    DATABASE_POOL_MAX: '4',
    ...infra.natsEnv(options.natsRole ?? 'service'),
    JWT_SECRET: TestSecret,
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: infra.dataDir,
    LOG_LEVEL: 'silent',
    // Test files send many bad credentials from one address on purpose; edge-protection.test.ts
    // sets the limit it tests.
    AUTH_FAILURE_LIMIT: '100000',
    ...options.env,
  });
  const log = options.logLines
    ? pino({ level: 'info' }, { write: options.logLines })
    : createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const service = await startService(config, log, options.start);
  const sql = postgres(infra.databaseUrl, { max: 2, onnotice: () => {} });
  const nc = await infra.connectAs('admin');
  // tap runs teardowns last-registered first: this runs before the infrastructure's leak check.
  t.teardown(async () => {
    await service.stop();
    await sql.end();
    await nc.close();
  });

  return {
    ...createHttpClient(service.url ?? ''),
    service,
    config,
    sql,
    nc,
    natsUrl: infra.natsUrl,
    infra,
    databaseUrl: infra.databaseUrl,
    token: (permissions, tokenOptions = {}) =>
      signToken(
        { project: tokenOptions.project ?? TestProject, permissions, ttl: tokenOptions.ttl, sub: tokenOptions.sub, appUserID: tokenOptions.appUserID },
        { secret: TestSecret, issuer: config.auth.issuer, audience: config.auth.audience },
      ),
  };
}

/**
 * The names of the client connections the server still holds. It may take a moment to notice a
 * closed socket, longer on a loaded machine (the whole suite runs three files at a time on two
 * cores), so it is asked for up to 10 s.
 */
async function openNatsConnections(monitorPort: number): Promise<string[]> {
  let open: string[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    const response = await fetch(`http://127.0.0.1:${monitorPort}/connz`);
    const connz = (await response.json()) as { connections?: Array<{ name?: string; cid: number }> };
    open = (connz.connections ?? []).map((c) => c.name ?? `cid ${c.cid}`);
    if (open.length === 0) return open;
    await setTimeout(100);
  }
  return open;
}

/**
 * A second worker side (ROLE=workers, its own actors, mailboxes and pools) on the service's database
 * and NATS, as an operator scales out: the queue groups spread requests over both.
 */
export async function startMoreWorkers(t: Test, svc: TestService, env: Record<string, string> = {}): Promise<RunningService> {
  const config = loadConfig({
    NODE_ENV: 'test',
    ROLE: 'workers',
    DATABASE_URL: svc.databaseUrl,
    DATABASE_POOL_MAX: '4',
    ...svc.infra.natsEnv('workers'),
    CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    DATA_DIR: svc.config.dataDir,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const workers = await startService(config, createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
  // Registered after the service's teardown, so it runs first: the workers stop before the service.
  t.teardown(() => workers.stop());
  return workers;
}

/**
 * A second edge (ROLE=edge) on the service's NATS, with the service's environment on top of `env`, as
 * an operator scales out the edges behind a load balancer.
 */
export async function startMoreEdge(t: Test, svc: TestService, env: Record<string, string> = {}): Promise<TestService> {
  const config = loadConfig({
    NODE_ENV: 'test',
    ROLE: 'edge',
    ...svc.infra.natsEnv('edge'),
    JWT_SECRET: TestSecret,
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: svc.config.dataDir,
    LOG_LEVEL: 'silent',
    AUTH_FAILURE_LIMIT: '100000',
    ...env,
  });
  const edge = await startService(config, createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
  // Registered after the service's teardown, so it runs first: the edge stops before the service.
  t.teardown(() => edge.stop());
  return { ...svc, ...createHttpClient(edge.url ?? ''), service: edge, config };
}
