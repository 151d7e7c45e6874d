import postgres from 'postgres';

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
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'checkout-platform', ...options.settings },
  });
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
