import { appendFileSync } from 'node:fs';
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
  /**
   * How long a query waits for a host that takes it once the pool's connections fail to connect
   * (a primary restarting or failing over), in ms; 0 (the default): it fails after one try of
   * each host.
   */
  waitMs?: number;
}

/**
 * A connection pool. Its connections are to a server that takes writes: `target_session_attrs`
 * is `read-write` unless the url says otherwise, so that of several hosts (`postgres://h1,h2/db`)
 * the primary is found, and a standby is passed over (patches/README.md: postgres.js took one).
 * A connection whose server refuses a write as read-only is dropped, and the next connects anew.
 */
export function connectPostgres(options: PoolOptions): Sql {
  return postgres(options.url, {
    max: options.poolMax,
    connect_timeout: 10,
    connect_wait: (options.waitMs ?? 0) / 1000,
    idle_timeout: 60,
    backoff: reconnectDelaySeconds,
    onnotice: () => {},
    ...(hasSessionAttrs(options.url) ? {} : { target_session_attrs: 'read-write' as const }),
    connection: { application_name: options.applicationName ?? 'checkout-platform', ...options.settings },
    ...statementTrace(options.applicationName ?? 'checkout-platform'),
  });
}

/**
 * SQL_TRACE_FILE (a development aid, off by default): every statement a pool sends, with its
 * parameters, appended to that file as a JSON line `{"pool", "statement", "parameters"}`. The floor
 * benchmark (bench/scenarios/floor.ts) reads what an operation runs from it. The parameters hold
 * whatever the statements carry (secrets sealed or not): never set it where the data is real.
 */
function statementTrace(pool: string): Pick<postgres.Options<Record<string, postgres.PostgresType>>, 'debug'> {
  const file = process.env.SQL_TRACE_FILE;
  if (!file) return {};
  return {
    debug: (_connection, statement, parameters) => {
      appendFileSync(file, `${JSON.stringify({ pool, statement, parameters }, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))}\n`);
    },
  };
}

function hasSessionAttrs(url: string): boolean {
  return /[?&]target_session_attrs=/.test(url) || Boolean(process.env.PGTARGETSESSIONATTRS);
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
 * shutting down, crashing or starting up (57P01-57P03), a full server (53300) and a server that
 * takes no writes (25006): while no primary takes writes, the platform waits for one or answers 503.
 */
const UnreachableCodes: ReadonlySet<string> = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  // No host took the connection as target_session_attrs asks (each one read-only: no primary now).
  'TARGET_SESSION_ATTRS_MISMATCH',
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
  // A write refused by a read-only server (a standby; a primary demoted or set read-only).
  '25006',
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
  if (isDatabaseUnreachable(err)) log.warn({ err: { code: (err as { code?: unknown }).code, message: errorReason(err) } }, message);
  else log.error({ err }, message);
}

/** An error's message, for a log line that needs no stack. */
export function errorReason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function hasPgCode(err: unknown, code: string): err is postgres.PostgresError {
  return err instanceof postgres.PostgresError && err.code === code;
}

/**
 * Runs `work` in a transaction, again (up to `attempts` times) when nothing of it was written:
 * Postgres aborted it for a deadlock or a serialization failure, or it was cut off before its
 * commit (the connection lost, the server read-only: the next try waits for a primary, PoolOptions
 * `waitMs`). A failure of the commit itself leaves its outcome unknown: that is thrown, for the
 * caller to settle (a repeatable request runs again and finds what was written).
 */
export async function inTransaction<T>(sql: Sql, work: (tx: TransactionSql) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let committing = false;
    try {
      return (await sql.begin(async (tx) => {
        const result = await work(tx);
        committing = true;
        return result;
      })) as T;
    } catch (err) {
      const aborted = hasPgCode(err, PgErrorCode.deadlockDetected) || hasPgCode(err, PgErrorCode.serializationFailure);
      if (!(aborted || (!committing && isDatabaseUnreachable(err))) || attempt >= attempts) throw err;
    }
  }
}

/** A JSON parameter (cast it in SQL: `${jsonParam(sql, rows)}::jsonb`), for set-based statements. */
export function jsonParam(sql: Sql | TransactionSql, value: unknown) {
  return sql.json(value as Parameters<Sql['json']>[0]);
}
