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
    DATABASE_URL: variable(z.string().optional()),
    DATABASE_POOL_MAX: variable(z.coerce.number().int().min(1).max(200).default(10)),
    CHECKOUT_POOL_MAX: variable(z.coerce.number().int().min(1).max(200).default(2)),
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
   */
  throttle: {
    authFailures: { limit: env.AUTH_FAILURE_LIMIT, windowMs: env.AUTH_FAILURE_WINDOW_MS },
    tokenRate: { limit: env.TOKEN_RATE_LIMIT, windowMs: env.TOKEN_RATE_WINDOW_MS },
  },
  database: { url: env.DATABASE_URL, poolMax: env.DATABASE_POOL_MAX, checkoutPoolMax: env.CHECKOUT_POOL_MAX },
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
   * link-local ones never); and how many deliveries this process makes at once (0: none).
   */
  webhooks: {
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: env.WEBHOOK_RETRY_SCHEDULE_MS,
    maxAttempts: env.WEBHOOK_MAX_ATTEMPTS,
    allowPrivateNetworks: env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    senders: env.WEBHOOK_SENDERS,
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
