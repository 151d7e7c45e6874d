import postgres from 'postgres';
import type { Logger } from '../logger.js';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;

export interface PoolOptions {
  url: string;
  poolMax: number;
  applicationName?: string;
  /** Session settings of every connection (such as plan_cache_mode). */
  settings?: Record<string, string>;
}

/** A connection pool. */
export function connectPostgres(options: PoolOptions): Sql {
  return postgres(options.url, {
    max: options.poolMax,
    connect_timeout: 10,
    idle_timeout: 60,
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'checkout-platform', ...options.settings },
  });
}

/**
 * Seconds before a connection that failed connects again, by the pool's failures in a row. The
 * library's default grows as 3^n / 100 up to 20 s, counted over all the pool's connections: ten
 * connections failing twice during a Postgres restart of a few seconds left the pool waiting 7 to
 * 20 s after the server was back (measured: requests timed out for 10 s after a 4 s restart). Here it
 * doubles from 50 ms to at most 1 s, with jitter.
 */
export function reconnectDelaySeconds(failures: number): number {
  return Math.min(0.05 * 2 ** failures, 1) * (0.5 + Math.random() / 2);
}

/** How a pool's connections are used now (patches/README.md: `sql.stats()`). */
export interface PoolStats {
  max: number;
  idle: number;
  /** Connections running queries. */
  busy: number;
  /** Connections held by a transaction. */
  reserved: number;
  connecting: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** The pool's state, for metrics; undefined when postgres.js lacks the patch that exposes it. */
export function poolStats(sql: Sql): PoolStats | undefined {
  const stats = (sql as Sql & { stats?: () => PoolStats }).stats;
  return typeof stats === 'function' ? stats() : undefined;
}

/** SQLSTATE codes the code branches on (never on message text). */
export const PgErrorCode = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  checkViolation: '23514',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  undefinedTable: '42P01',
} as const;

/**
 * Errors that say "the database cannot be reached now", not "the statement is wrong": postgres.js's
 * own connection codes, the socket's, and the SQLSTATEs of a lost connection (class 08), a server
 * shutting down, crashing or starting up (57P01-57P03) and a full server (53300).
 */
const UnreachableCodes: ReadonlySet<string> = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** Whether `err` (or an error it was wrapped around) means the database is unreachable for now. */
export function isDatabaseUnreachable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UnreachableCodes.has(code) || (e instanceof postgres.PostgresError && code.startsWith('08')))) return true;
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnreachable)) return true;
  }
  return false;
}

/**
 * A background loop's failure (a relay round, a scheduler tick): a warning while the database is
 * unreachable, since the loop simply tries again and the outage itself is reported once (the
 * embedded Postgres's supervisor, /health); an error otherwise, which is a bug or needs a person.
 */
export function logLoopFailure(log: Logger, err: unknown, message: string): void {
  if (isDatabaseUnreachable(err)) log.warn({ err: { code: (err as { code?: unknown }).code, message: (err as Error).message } }, message);
  else log.error({ err }, message);
}

export function hasPgCode(err: unknown, code: string): err is postgres.PostgresError {
  return err instanceof postgres.PostgresError && err.code === code;
}

/**
 * Runs `work` in a transaction, again (up to `attempts` times) when Postgres aborted it for a
 * deadlock or a serialization failure: both mean "try again", never "wrong".
 */
export async function inTransaction<T>(sql: Sql, work: (tx: TransactionSql) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sql.begin(work)) as T;
    } catch (err) {
      const retryable = hasPgCode(err, PgErrorCode.deadlockDetected) || hasPgCode(err, PgErrorCode.serializationFailure);
      if (!retryable || attempt >= attempts) throw err;
    }
  }
}

/** A JSON parameter (cast it in SQL: `${jsonParam(sql, rows)}::jsonb`), for set-based statements. */
export function jsonParam(sql: Sql | TransactionSql, value: unknown) {
  return sql.json(value as Parameters<Sql['json']>[0]);
}
