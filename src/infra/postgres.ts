import postgres from 'postgres';

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;

/** The pool every worker of this process shares. */
export function connectPostgres(options: { url: string; poolMax: number; applicationName?: string }): Sql {
  return postgres(options.url, {
    max: options.poolMax,
    connect_timeout: 10,
    idle_timeout: 60,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'checkout-platform' },
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
