import { z } from 'zod';
import { isTimeZone } from '../subjects/formats/time.js';
import { defaultFiscalProvider } from '../subjects/fiscal.js';
import { LogFormats } from './logger.js';
import { parseKey } from './secrets/key-ring.js';

/**
 * The whole configuration, parsed once at start from the environment.
 * Every option states its default here; the configuration table of docs/operations.md mirrors this file.
 */

const KeyFormat = 'must be 32 random bytes as base64 or hex (openssl rand -base64 32)';
function isKey(value: string): boolean {
  try {
    parseKey(value);
    return true;
  } catch {
    return false;
  }
}

// Compose files and shells often pass `FOO=` for "unset": an empty value counts as absent.
const variable = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

/** A retry schedule: comma-separated milliseconds (`example` shows the form in the error message). */
const milliseconds = (example: string, fallback: string) =>
  z
    .string()
    .regex(/^\d+(,\d+)*$/, `comma-separated milliseconds such as ${example}`)
    .default(fallback)
    .transform((list) => list.split(',').map(Number));

const Environment = z
  .object({
    NODE_ENV: variable(z.enum(['development', 'test', 'production']).default('development')),
    ROLE: variable(z.enum(['all', 'edge', 'workers']).default('all')),
    HOST: variable(z.string().default('127.0.0.1')),
    PORT: variable(z.coerce.number().int().min(0).max(65535).default(8080)),
    TLS_CERT_FILE: variable(z.string().optional()),
    TLS_KEY_FILE: variable(z.string().optional()),
    TRUST_PROXY: variable(z.string().optional()),
    AUTH_FAILURE_LIMIT: variable(z.coerce.number().int().min(1).default(10)),
    AUTH_FAILURE_WINDOW_MS: variable(z.coerce.number().int().min(100).default(60_000)),
    TOKEN_RATE_LIMIT: variable(z.coerce.number().int().min(1).optional()),
    TOKEN_RATE_WINDOW_MS: variable(z.coerce.number().int().min(100).default(60_000)),
    APP_USER_CREATE_LIMIT: variable(z.coerce.number().int().min(1).default(60)),
    APP_USER_CREATE_WINDOW_MS: variable(z.coerce.number().int().min(100).default(60_000)),
    DATABASE_URL: variable(z.string().optional()),
    DATABASE_POOL_MAX: variable(z.coerce.number().int().min(1).max(200).default(10)),
    CHECKOUT_POOL_MAX: variable(z.coerce.number().int().min(1).max(200).default(2)),
    DATABASE_WAIT_MS: variable(z.coerce.number().int().min(0).max(600_000).optional()),
    NATS_URL: variable(z.string().optional()),
    NATS_SERVER_BIN: variable(z.string().optional()),
    NATS_CREDS: variable(z.string().optional()),
    NATS_ISSUER: variable(z.string().optional()),
    NATS_TLS_CA: variable(z.string().optional()),
    NATS_TLS_CERT: variable(z.string().optional()),
    NATS_TLS_KEY: variable(z.string().optional()),
    NATS_ALLOW_ANONYMOUS: variable(z.stringbool().default(false)),
    SECRETS_KEY: variable(z.string().refine(isKey, KeyFormat).optional()),
    SECRETS_KEY_PREVIOUS: variable(z.string().refine(isKey, KeyFormat).optional()),
    JETSTREAM_REPLICAS: variable(z.coerce.number().int().min(1).max(5).default(1)),
    DATA_DIR: variable(z.string().default('./data')),
    EMBEDDED_MAX_RESTARTS: variable(z.coerce.number().int().min(0).max(1000).default(5)),
    JWT_SECRET: variable(z.string().min(32, 'must be at least 32 characters').optional()),
    JWKS_URL: variable(z.url().optional()),
    JWT_ISSUER: variable(z.string().default('checkout-platform')),
    JWT_AUDIENCE: variable(z.string().default('checkout-platform')),
    LOG_LEVEL: variable(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info')),
    LOG_FORMAT: variable(z.enum(LogFormats).default('auto')),
    REQUEST_TIMEOUT_MS: variable(z.coerce.number().int().min(100).default(5000)),
    CHECKOUT_SIGNING_SECRET: variable(z.string().min(32, 'must be at least 32 characters').optional()),
    CHECKOUT_INFO_TTL_SECONDS: variable(z.coerce.number().int().min(1).default(3600)),
    CHECKOUT_CACHE_MAX_ENTRIES: variable(z.coerce.number().int().min(0).default(100_000)),
    ORDERS_LIST_MAX_RECORDS: variable(z.coerce.number().int().min(1).default(100_000)),
    LIVE_STREAMS_PER_TOKEN: variable(z.coerce.number().int().min(1).max(1000).default(5)),
    LIVE_STREAMS_PER_PROJECT: variable(z.coerce.number().int().min(1).max(100_000).default(50)),
    LIVE_STREAM_BUFFER_BYTES: variable(z.coerce.number().int().min(16_384).max(64 * 1_048_576).default(1_048_576)),
    EVENTS_MAX_AGE_HOURS: variable(z.coerce.number().positive().default(168)),
    PUBLIC_BASE_URL: variable(z.url({ protocol: /^https?$/ }).optional()),
    RECEIPT_TIME_ZONE: variable(z.string().default('Europe/Berlin').refine(isTimeZone, 'an IANA time zone such as Europe/Berlin')),
    RECEIPT_PART_BYTES: variable(z.coerce.number().int().min(1024).max(600_000).default(512 * 1024)),
    RECEIPT_RENDER_THREADS: variable(z.coerce.number().int().min(0).max(16).default(1)),
    RECEIPTS_AHEAD: variable(z.stringbool().default(false)),
    CLOSING_SCHEDULER_ENABLED: variable(z.stringbool().default(true)),
    CLOSING_RETRY_SCHEDULE_MS: variable(milliseconds('1000,5000,15000', '1000,5000,15000,60000,300000,900000')),
    CLOSING_MAX_ATTEMPTS: variable(z.coerce.number().int().min(1).max(1000).default(50)),
    FULFILLMENT_URL: variable(z.url({ protocol: /^https?$/ }).optional()),
    FULFILLMENT_TOKEN: variable(z.string().optional()),
    FULFILLMENT_TIMEOUT_MS: variable(z.coerce.number().int().min(100).default(10_000)),
    FULFILLMENT_RETRY_SCHEDULE_MS: variable(milliseconds('1000,2000,5000', '1000,2000,5000,15000,60000,300000,900000,3600000')),
    FULFILLMENT_MAX_ATTEMPTS: variable(z.coerce.number().int().min(1).max(1000).default(32)),
    FULFILLMENT_CALLERS: variable(z.coerce.number().int().min(0).max(256).default(16)),
    FISCAL_RETRY_SCHEDULE_MS: variable(milliseconds('1000,2000,5000', '1000,2000,5000,15000,60000,300000')),
    FISCAL_MAX_ATTEMPTS: variable(z.coerce.number().int().min(1).max(1000).default(18)),
    FISCAL_SIGNERS: variable(z.coerce.number().int().min(0).max(256).default(64)),
    FISCAL_TIMEOUT_MS: variable(z.coerce.number().int().min(100).default(10_000)),
    WEBHOOK_TIMEOUT_MS: variable(z.coerce.number().int().min(100).default(10_000)),
    WEBHOOK_RETRY_SCHEDULE_MS: variable(milliseconds('5000,30000,120000', '5000,30000,120000,600000,1800000,3600000,7200000,18000000,36000000')),
    WEBHOOK_MAX_ATTEMPTS: variable(z.coerce.number().int().min(1).max(1000).default(15)),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: variable(z.stringbool().default(false)),
    WEBHOOK_SENDERS: variable(z.coerce.number().int().min(0).max(1024).default(64)),
    INTEGRATIONS_NATS_PER_PROJECT: variable(z.coerce.number().int().min(0).max(1000).default(20)),
    INTEGRATIONS_WEBHOOKS_PER_PROJECT: variable(z.coerce.number().int().min(0).max(1000).default(20)),
    INTEGRATION_ROTATIONS_PER_HOUR: variable(z.coerce.number().int().min(1).max(1000).default(10)),
    INTEGRATION_NATS_CONNECTIONS: variable(z.coerce.number().int().min(1).max(1000).default(4)),
    INTEGRATION_NATS_SUBSCRIPTIONS: variable(z.coerce.number().int().min(1).max(10_000).default(16)),
    INTEGRATION_NATS_PAYLOAD_BYTES: variable(z.coerce.number().int().min(1024).max(1_048_576).default(8192)),
    INTEGRATION_NATS_DATA_BYTES: variable(z.coerce.number().int().min(-1).default(64 * 1_048_576)),
    WEBHOOK_PROJECT_CONCURRENCY: variable(z.coerce.number().int().min(1).max(1024).default(16)),
    WEBHOOK_ORIGIN_CONCURRENCY: variable(z.coerce.number().int().min(1).max(256).default(16)),
    WEBHOOK_SLOW_MS: variable(z.coerce.number().int().min(10).default(3000)),
    WEBHOOK_DNS_TIMEOUT_MS: variable(z.coerce.number().int().min(100).max(60_000).default(3000)),
    WEBHOOK_DNS_SERVERS: variable(z.string().regex(/^[^,\s]+(,[^,\s]+)*$/, 'comma-separated name servers such as 10.0.0.2,[fd00::2]:53').optional()),
    WEBHOOK_LOG_DAYS: variable(z.coerce.number().int().min(1).max(3650).default(30)),
    SHUTDOWN_GRACE_MS: variable(z.coerce.number().int().min(0).default(10_000)),
    SHUTDOWN_DELAY_MS: variable(z.coerce.number().int().min(0).default(0)),
    METRICS_PORT: variable(z.coerce.number().int().min(0).max(65535).optional()),
    PORTAL_SESSION_TTL_MINUTES: variable(z.coerce.number().int().min(1).max(43_200).default(480)),
  })
  .refine((env) => Boolean(env.TLS_CERT_FILE) === Boolean(env.TLS_KEY_FILE), {
    message: 'TLS_CERT_FILE and TLS_KEY_FILE must be set together',
  })
  .refine((env) => env.ROLE === 'all' || Boolean(env.NATS_URL), {
    message: 'NATS_URL is required when ROLE is edge or workers (processes must share one NATS)',
  })
  .refine((env) => env.ROLE !== 'workers' || Boolean(env.DATABASE_URL), {
    message: 'DATABASE_URL is required when ROLE is workers (processes must share one database)',
  })
  .refine((env) => Boolean(env.NATS_TLS_CERT) === Boolean(env.NATS_TLS_KEY), {
    message: 'NATS_TLS_CERT and NATS_TLS_KEY must be set together',
  })
  .refine((env) => env.NODE_ENV !== 'production' || !env.NATS_URL || Boolean(env.NATS_CREDS) || env.NATS_ALLOW_ANONYMOUS, {
    message:
      'NATS_URL is set without NATS_CREDS: in production the platform connects to NATS only with credentials (npm run nats-auth makes them, docs/operations.md); NATS_ALLOW_ANONYMOUS=true connects without',
  });

const Configuration = Environment.transform((env) => ({
  env: env.NODE_ENV,
  role: env.ROLE,
  http: {
    host: env.HOST,
    port: env.PORT,
    tls: env.TLS_CERT_FILE && env.TLS_KEY_FILE ? { certFile: env.TLS_CERT_FILE, keyFile: env.TLS_KEY_FILE } : undefined,
    /**
     * Which proxies' X-Forwarded-For to believe (Fastify's trustProxy: `true`, or comma-separated
     * addresses/CIDRs of the proxies); unset: none, the client address is the socket's. Behind a load
     * balancer it must be set, or every client shares the balancer's address for throttling.
     */
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
  },
  /**
   * Failed sign-ins (a bearer token that does not verify, a wrong PoS password): more than `limit`
   * (10) per client address or per credential within `windowMs` (1 min) are refused with 429 until
   * the window ends, the right credential too. `tokenRate`: requests per token (sub and project) per
   * `windowMs` (1 min) on each edge process; `limit` unset (the default): no limit.
   * `appUserCreations`: app users one client address may make per `windowMs` (60 a minute) on each
   * edge process: whoever has a copy of an app has its key, and must not fill the database.
   */
  throttle: {
    authFailures: { limit: env.AUTH_FAILURE_LIMIT, windowMs: env.AUTH_FAILURE_WINDOW_MS },
    tokenRate: { limit: env.TOKEN_RATE_LIMIT, windowMs: env.TOKEN_RATE_WINDOW_MS },
    appUserCreations: { limit: env.APP_USER_CREATE_LIMIT, windowMs: env.APP_USER_CREATE_WINDOW_MS },
  },
  /**
   * `waitMs`: how long work waits for a writable Postgres (a failover, a restart) before it is
   * answered 503: a query waits that long for a host that takes it, and a repeatable request runs
   * again within it. Default a second under REQUEST_TIMEOUT_MS, so that the worker answers before
   * the edge stops waiting.
   */
  database: {
    url: env.DATABASE_URL,
    poolMax: env.DATABASE_POOL_MAX,
    checkoutPoolMax: env.CHECKOUT_POOL_MAX,
    waitMs: env.DATABASE_WAIT_MS ?? Math.max(0, env.REQUEST_TIMEOUT_MS - 1000),
  },
  /**
   * NATS_URL: one server or several, comma-separated (the nodes of a cluster: the connection moves to
   * another when one goes away); unset: a nats-server spawned under the data directory, with
   * credentials generated for it. `creds`: this process's user (a .creds file: the user JWT and its
   * nkey seed); `issuer`: the sealed file the workers issue and revoke integrations' credentials
   * with (authority.json of `npm run nats-auth`); `tls`: the CA to trust and an optional client
   * certificate. `allowAnonymous`: production refuses a NATS_URL without NATS_CREDS unless set.
   */
  nats: {
    url: env.NATS_URL,
    serverBin: env.NATS_SERVER_BIN,
    creds: env.NATS_CREDS,
    issuer: env.NATS_ISSUER,
    tls:
      env.NATS_TLS_CA || env.NATS_TLS_CERT
        ? { caFile: env.NATS_TLS_CA, ...(env.NATS_TLS_CERT && env.NATS_TLS_KEY ? { certFile: env.NATS_TLS_CERT, keyFile: env.NATS_TLS_KEY } : {}) }
        : undefined,
    allowAnonymous: env.NATS_ALLOW_ANONYMOUS,
  },
  /**
   * The key secrets are sealed with at rest (SECRETS_KEY: 32 bytes, base64 or hex; generated into the
   * data directory outside production, required in production) and the key before it, which still
   * opens what it sealed until `npm run reseal` has sealed everything anew.
   */
  secrets: { key: env.SECRETS_KEY, previousKey: env.SECRETS_KEY_PREVIOUS },
  /**
   * Copies of every JetStream stream, key-value bucket and consumer the platform creates (1; 3 on a
   * three-node cluster, so that losing a node loses nothing). Existing ones are brought to this
   * count at start, by an update: nothing is recreated.
   */
  jetstream: { replicas: env.JETSTREAM_REPLICAS },
  dataDir: env.DATA_DIR,
  /**
   * Failed restarts in a row (5) of the embedded Postgres or the spawned nats-server before the
   * process exits non-zero and leaves the next step to whatever runs it.
   */
  embedded: { maxRestarts: env.EMBEDDED_MAX_RESTARTS },
  auth: { jwtSecret: env.JWT_SECRET, jwksUrl: env.JWKS_URL, issuer: env.JWT_ISSUER, audience: env.JWT_AUDIENCE },
  logLevel: env.LOG_LEVEL,
  /** `auto`: readable lines on a terminal, JSON lines otherwise; `json` and `pretty` force one. */
  logFormat: env.LOG_FORMAT,
  requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
  checkout: { signingSecret: env.CHECKOUT_SIGNING_SECRET, infoTtlSeconds: env.CHECKOUT_INFO_TTL_SECONDS, cacheMaxEntries: env.CHECKOUT_CACHE_MAX_ENTRIES },
  orders: { maxListRecords: env.ORDERS_LIST_MAX_RECORDS },
  events: { maxAgeMs: env.EVENTS_MAX_AGE_HOURS * 3_600_000 },
  /**
   * The live event streams (`GET /{project}/checkout/events`, the portal's Supervision screen) each
   * edge process holds: at most `perToken` (5) for one token or portal session and `perProject` (50)
   * for one project, 429 with Retry-After past either; a client that stops reading is disconnected
   * once `bufferBytes` (1 MiB) wait for it.
   */
  liveStreams: { perToken: env.LIVE_STREAMS_PER_TOKEN, perProject: env.LIVE_STREAMS_PER_PROJECT, bufferBytes: env.LIVE_STREAM_BUFFER_BYTES },
  /** Where clients reach the edge (scheme, host, path prefix), for absolute urls such as coupon images; unset: the request's own. */
  publicBaseUrl: env.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
  /**
   * `ahead`: whether a final order's receipt is made by a job as soon as it can be (RECEIPTS_AHEAD),
   * or when it is first asked for (the default: most receipts are never opened, and one made on
   * request is as quick to have).
   */
  receipts: { timeZone: env.RECEIPT_TIME_ZONE, partBytes: env.RECEIPT_PART_BYTES, renderThreads: env.RECEIPT_RENDER_THREADS, ahead: env.RECEIPTS_AHEAD },
  /**
   * Whether this process's node-cron ticks claim due closing schedules, and its batch ticks (each
   * second) their due batches (every worker process may; each fire and batch time is claimed once); the delays between attempts of closing work (1 s, 5 s, 15 s, 1 min,
   * 5 min, then every 15 min) and how many attempts it gets (50: about eleven hours) before a report
   * job is `failed`.
   */
  closings: { schedulerEnabled: env.CLOSING_SCHEDULER_ENABLED, retryScheduleMs: env.CLOSING_RETRY_SCHEDULE_MS, maxAttempts: env.CLOSING_MAX_ATTEMPTS },
  /**
   * The external fulfillment service: where it is (unset: products with a fulfillmentType cannot be
   * sold), its bearer token, how long a call may take, the delays between attempts (the last one
   * repeats: 1 s, 2 s, 5 s, 15 s, 1 min, 5 min, 15 min, then hourly) and how many attempts there are
   * (32: a day and more), and how many calls this process makes at once (0: none).
   */
  fulfillment: {
    url: env.FULFILLMENT_URL?.replace(/\/+$/, ''),
    token: env.FULFILLMENT_TOKEN,
    timeoutMs: env.FULFILLMENT_TIMEOUT_MS,
    retryScheduleMs: env.FULFILLMENT_RETRY_SCHEDULE_MS,
    maxAttempts: env.FULFILLMENT_MAX_ATTEMPTS,
    callers: env.FULFILLMENT_CALLERS,
  },
  /**
   * SIGTERM (also SIGINT, SIGHUP): the edge answers 503 on /health/ready at once and keeps taking
   * connections for `delayMs` (0), so that a load balancer that routes by readiness moves away; then
   * it refuses new connections and gives the requests in flight `graceMs` (10 s) to finish before it
   * closes their connections. The workers then stop taking messages and jobs, finish what they hold
   * and publish what the outbox holds.
   */
  shutdown: { graceMs: env.SHUTDOWN_GRACE_MS, delayMs: env.SHUTDOWN_DELAY_MS },
  /** `/metrics` (Prometheus text): on its own port when set (0: any free one), else on the edge's port (roles all and edge). */
  metrics: { port: env.METRICS_PORT },
  /**
   * TSE signing (docs/fiscalization.md): the provider of a project that chose none (`local`
   * outside production; in production none, so such a project cannot sell), the delays between
   * attempts of a TSE call (1 s, 2 s, 5 s, 15 s, 1 min, then every 5 min) and how many there are
   * (18: about an hour) before the sale is recorded as a TSE outage, and how many TSE calls this
   * process makes at once (0: none).
   */
  fiscal: {
    defaultProvider: defaultFiscalProvider(env.NODE_ENV),
    retryScheduleMs: env.FISCAL_RETRY_SCHEDULE_MS,
    maxAttempts: env.FISCAL_MAX_ATTEMPTS,
    signers: env.FISCAL_SIGNERS,
    /** How long one call to a cloud TSE (fiskaly) may take, answer included. */
    timeoutMs: env.FISCAL_TIMEOUT_MS,
  },
  /**
   * Webhooks (docs/integrators.md): how long one delivery may take, answer included (10 s); the
   * delays between a failed delivery and the next attempt (5 s, 30 s, 2 min, 10 min, 30 min, 1 h,
   * 2 h, 5 h, then every 10 h) and how many attempts there are (15: about three days) before an
   * event is given up, and an integration whose deliveries failed that many times in a row is
   * disabled; whether http and loopback or private addresses may be sent to (tests, on-premise;
   * link-local ones never); and how many delivery jobs this process runs at once (64; 0: none).
   *
   * Fairness between projects (docs/integrators.md): deliveries in flight at once in this process
   * for one project (16) and to one origin, scheme, host and port (16); a job that finds its
   * project's or its origin's all taken is given back and comes again. A 2xx that takes longer than
   * `slowMs` (3 s) is delivered, and counts as a failure for the webhook's back-off (its other events
   * wait for its next try, one event probes it). Names in webhook URLs are resolved by DNS queries
   * with a deadline (`dnsTimeoutMs`, 3 s), not by the system's getaddrinfo (see
   * src/infra/destinations.ts), with the system's name servers or `dnsServers`. The delivery log
   * keeps each attempt `logDays` (30 days).
   */
  webhooks: {
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE_MS,
    maxAttempts: env.WEBHOOK_MAX_ATTEMPTS,
    allowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    senders: env.WEBHOOK_SENDERS,
    projectConcurrency: env.WEBHOOK_PROJECT_CONCURRENCY,
    originConcurrency: env.WEBHOOK_ORIGIN_CONCURRENCY,
    slowMs: env.WEBHOOK_SLOW_MS,
    dnsTimeoutMs: env.WEBHOOK_DNS_TIMEOUT_MS,
    dnsServers: env.WEBHOOK_DNS_SERVERS?.split(','),
    logDays: env.WEBHOOK_LOG_DAYS,
  },
  /**
   * What one project's integrations may take (docs/integrators.md): how many of each kind a project
   * has (20 and 20); how many rotations one integration may have in an hour (10); and what an
   * integration of kind `nats` may use on NATS, its account and user together: connections at once
   * (4), subscriptions per connection (16), the largest message it may publish (8 KiB: pulls, acks
   * and info requests are small) and the bytes it may publish (64 MiB; carried in its JWTs, which
   * nats-server 2.9 does not enforce).
   */
  integrations: {
    natsPerProject: env.INTEGRATIONS_NATS_PER_PROJECT,
    webhooksPerProject: env.INTEGRATIONS_WEBHOOKS_PER_PROJECT,
    rotationsPerHour: env.INTEGRATION_ROTATIONS_PER_HOUR,
    nats: {
      connections: env.INTEGRATION_NATS_CONNECTIONS,
      subscriptions: env.INTEGRATION_NATS_SUBSCRIPTIONS,
      payload: env.INTEGRATION_NATS_PAYLOAD_BYTES,
      data: env.INTEGRATION_NATS_DATA_BYTES,
    },
  },
  /** The retailer portal at /portal: how long a sign-in lasts (480 minutes, a working day). */
  portal: { sessionTtlMs: env.PORTAL_SESSION_TTL_MINUTES * 60_000 },
}));

function parseTrustProxy(value: string | undefined): boolean | string[] {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  return value.split(',').map((v) => v.trim()).filter(Boolean);
}

export type Config = z.output<typeof Configuration>;
export type Role = Config['role'];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  const parsed = Configuration.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message));
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return parsed.data;
}
