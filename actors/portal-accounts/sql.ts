import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { SignInLimit, type PortalRole } from '../../subjects/portal-accounts.js';

type Db = Sql | TransactionSql;

export interface AccountRow {
  project: string;
  id: string;
  email: string;
  role: PortalRole;
  password_hash: string;
  password_change_required: boolean;
  failed_sign_ins: number;
  locked_until: Date | null;
  created_at: Date;
}

/** The account, or undefined when the email is taken in the project (unique index, no error). */
export async function insertAccount(sql: Db, project: string, a: { email: string; role: PortalRole; passwordHash: string }): Promise<AccountRow | undefined> {
  const [row] = await sql<AccountRow[]>`
    insert into portal_accounts (project, email, role, password_hash)
    values (${project}, ${a.email}, ${a.role}, ${a.passwordHash})
    on conflict do nothing
    returning *`;
  return row;
}

export function listAccounts(sql: Db, project: string) {
  return sql<AccountRow[]>`select * from portal_accounts where project = ${project} order by lower(email)`;
}

export async function findAccountByEmail(sql: Db, project: string, email: string): Promise<AccountRow | undefined> {
  const [row] = await sql<AccountRow[]>`select * from portal_accounts where project = ${project} and lower(email) = lower(${email})`;
  return row;
}

/** The account, its row locked for the transaction's change. */
export async function lockAccount(sql: Db, project: string, id: string): Promise<AccountRow | undefined> {
  const [row] = await sql<AccountRow[]>`select * from portal_accounts where project = ${project} and id = ${id} for update`;
  return row;
}

export async function otherOwners(sql: Db, project: string, id: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from portal_accounts where project = ${project} and role = 'owner' and id <> ${id}`;
  return row!.n;
}

export async function setRole(sql: Db, project: string, id: string, role: PortalRole): Promise<AccountRow> {
  const [row] = await sql<AccountRow[]>`update portal_accounts set role = ${role} where project = ${project} and id = ${id} returning *`;
  return row!;
}

/** A new one-time password: it unlocks the account. */
export async function resetPassword(sql: Db, project: string, id: string, passwordHash: string): Promise<AccountRow> {
  const [row] = await sql<AccountRow[]>`
    update portal_accounts set password_hash = ${passwordHash}, password_change_required = true, failed_sign_ins = 0, locked_until = null
    where project = ${project} and id = ${id}
    returning *`;
  return row!;
}

export async function deleteAccount(sql: Db, project: string, id: string): Promise<void> {
  await sql`delete from portal_accounts where project = ${project} and id = ${id}`;
}

/**
 * Counts a failed sign-in; the failure that reaches the limit locks the account and starts the count
 * again. A locked account's failures are not counted: the lock runs its 15 minutes.
 */
export async function recordFailedSignIn(sql: Db, project: string, id: string): Promise<AccountRow> {
  const [row] = await sql<AccountRow[]>`
    update portal_accounts set
      failed_sign_ins = case when failed_sign_ins + 1 >= ${SignInLimit.failures} then 0 else failed_sign_ins + 1 end,
      locked_until = case when failed_sign_ins + 1 >= ${SignInLimit.failures} then now() + make_interval(mins => ${SignInLimit.lockMinutes}) else locked_until end
    where project = ${project} and id = ${id} and (locked_until is null or locked_until <= now())
    returning *`;
  return row!;
}

export async function recordGoodSignIn(sql: Db, project: string, id: string): Promise<void> {
  await sql`update portal_accounts set failed_sign_ins = 0, locked_until = null where project = ${project} and id = ${id} and (failed_sign_ins > 0 or locked_until is not null)`;
}

export async function setPassword(sql: Db, project: string, id: string, passwordHash: string): Promise<AccountRow> {
  const [row] = await sql<AccountRow[]>`
    update portal_accounts set password_hash = ${passwordHash}, password_change_required = false
    where project = ${project} and id = ${id}
    returning *`;
  return row!;
}

/** A password's hash made anew at a higher cost, unless the password changed meanwhile (that change wins). */
export async function replacePasswordHash(sql: Db, project: string, id: string, previous: string, passwordHash: string): Promise<void> {
  await sql`update portal_accounts set password_hash = ${passwordHash} where project = ${project} and id = ${id} and password_hash = ${previous}`;
}

export interface SessionRow {
  project: string;
  account_id: string;
  expires_at: Date;
}

export async function insertSession(sql: Db, s: { tokenHash: Buffer; project: string; accountId: string; ttlMs: number }): Promise<SessionRow> {
  const [row] = await sql<SessionRow[]>`
    insert into portal_sessions (token_hash, project, account_id, expires_at)
    values (${s.tokenHash}, ${s.project}, ${s.accountId}, now() + make_interval(secs => ${s.ttlMs / 1000}))
    returning project, account_id, expires_at`;
  return row!;
}

/** A live session and its account, or nothing (unknown, expired or signed out). */
export async function findSession(sql: Db, tokenHash: Buffer): Promise<(AccountRow & { expires_at: Date }) | undefined> {
  const [row] = await sql<(AccountRow & { expires_at: Date })[]>`
    select a.*, s.expires_at
    from portal_sessions s join portal_accounts a on a.project = s.project and a.id = s.account_id
    where s.token_hash = ${tokenHash} and s.expires_at > now()`;
  return row;
}

export async function deleteSession(sql: Db, tokenHash: Buffer): Promise<void> {
  await sql`delete from portal_sessions where token_hash = ${tokenHash}`;
}

/** Ends an account's sessions, but the one given (the session that changed the password stays). */
export async function deleteOtherSessions(sql: Db, project: string, accountId: string, keep: Buffer | null): Promise<void> {
  await sql`delete from portal_sessions where project = ${project} and account_id = ${accountId} and token_hash is distinct from ${keep}`;
}

/** Expired sessions are of no use to anyone; each sign-in sweeps a few. */
export async function deleteExpiredSessions(sql: Db): Promise<void> {
  await sql`delete from portal_sessions where token_hash in (select token_hash from portal_sessions where expires_at <= now() limit 100)`;
}
