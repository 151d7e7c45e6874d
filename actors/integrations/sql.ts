import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { JobsKeptDays } from '../../src/messaging/jobs.js';
import { accountUpdateJob } from '../../subjects/integrations.js';
import type { OutboxEvent } from '../outbox/sql.js';

type Db = Sql | TransactionSql;

export interface IntegrationRow {
  project: string;
  id: string;
  name: string;
  kind: 'nats' | 'webhook';
  filter: string | null;
  consumer: string | null;
  inbox_prefix: string | null;
  url: string | null;
  events: string[] | null;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  state: 'active' | 'disabled';
  disabled_reason: string | null;
  /** nats: its account's public key; null for one made before integrations had accounts (its credential no longer connects: a rotation gives it an account). */
  nats_account: string | null;
  /** nats: when its current user was issued (seconds). */
  user_issued_at: string | null;
  created_at: Date;
}

export type NewIntegration = Pick<IntegrationRow, 'project' | 'id' | 'name' | 'kind'> &
  Partial<Pick<IntegrationRow, 'filter' | 'consumer' | 'inbox_prefix' | 'url' | 'events' | 'secret'>>;

export async function insertIntegration(db: Db, row: NewIntegration): Promise<IntegrationRow> {
  const [created] = await db<IntegrationRow[]>`
    insert into integrations (project, id, name, kind, filter, consumer, inbox_prefix, url, events, secret)
    values (${row.project}, ${row.id}, ${row.name}, ${row.kind}, ${row.filter ?? null}, ${row.consumer ?? null}, ${row.inbox_prefix ?? null},
            ${row.url ?? null}, ${row.events ?? null}, ${row.secret ?? null})
    returning *`;
  return created!;
}

export async function listIntegrations(db: Db, project: string): Promise<IntegrationRow[]> {
  return db<IntegrationRow[]>`select * from integrations where project = ${project} order by created_at, id`;
}

export async function countIntegrations(db: Db, project: string, kind: IntegrationRow['kind']): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from integrations where project = ${project} and kind = ${kind}`;
  return row?.n ?? 0;
}

/** The integration, locked for the transaction's change when `forUpdate`. */
export async function findIntegration(db: Db, project: string, id: string, forUpdate = false): Promise<IntegrationRow | undefined> {
  const [row] = forUpdate
    ? await db<IntegrationRow[]>`select * from integrations where project = ${project} and id = ${id} for update`
    : await db<IntegrationRow[]>`select * from integrations where project = ${project} and id = ${id}`;
  return row;
}

/** Changes what is given (undefined: kept); answers the integration as it is now, or undefined when there is none. */
export async function updateIntegration(
  db: Db,
  project: string,
  id: string,
  changes: Partial<Pick<IntegrationRow, 'name' | 'url' | 'events' | 'state' | 'disabled_reason'>> & { failed_attempts?: number; failing_since?: null; retry_at?: null },
): Promise<IntegrationRow | undefined> {
  const set = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  const [row] = Object.keys(set).length
    ? await db<IntegrationRow[]>`update integrations set ${db(set)}, updated_at = now() where project = ${project} and id = ${id} returning *`
    : await db<IntegrationRow[]>`select * from integrations where project = ${project} and id = ${id}`;
  return row;
}

/** A new signing secret; the one before signs beside it for `previousSignsMs`. */
export async function rotateWebhookSecret(db: Db, project: string, id: string, secret: string, previousSignsMs: number): Promise<void> {
  await db`
    update integrations set previous_secret = secret, previous_secret_until = now() + ${previousSignsMs} * interval '1 millisecond', secret = ${secret}, updated_at = now()
    where project = ${project} and id = ${id}`;
}

export async function deleteIntegration(db: Db, project: string, id: string): Promise<void> {
  await db`delete from integrations where project = ${project} and id = ${id}`;
}

/** A deleted webhook's deliveries go with it. */
export async function deleteWebhookHistory(db: Db, project: string, id: string): Promise<void> {
  await db`delete from webhook_messages where project = ${project} and integration_id = ${id}`;
  await db`delete from webhook_attempts where project = ${project} and integration_id = ${id}`;
}

export async function insertNatsCredential(db: Db, credential: { userKey: string; project: string; integrationId: string; account: string }): Promise<void> {
  await db`
    insert into nats_credentials (user_key, project, integration_id, account)
    values (${credential.userKey}, ${credential.project}, ${credential.integrationId}, ${credential.account})`;
}

/** Revokes the integration's credentials in force (in the record: its account revokes them on the servers); answers how many there were. */
export async function revokeNatsCredentials(db: Db, project: string, integrationId: string): Promise<number> {
  const rows = await db`
    update nats_credentials set revoked_at = now()
    where project = ${project} and integration_id = ${integrationId} and revoked_at is null
    returning user_key`;
  return rows.length;
}

/** The integration's account and the time its current user was issued (a creation, a rotation). */
export async function setNatsAccount(db: Db, project: string, id: string, account: string, userIssuedAt: number): Promise<void> {
  await db`update integrations set nats_account = ${account}, user_issued_at = ${userIssuedAt}, updated_at = now() where project = ${project} and id = ${id}`;
}

/**
 * Counts a rotation of the integration in its window of `windowMs` and answers how many the window
 * held before it and when the window ends: the caller refuses past its limit (and counts nothing).
 */
export async function countRotation(tx: TransactionSql, project: string, id: string, windowMs: number, limit: number): Promise<{ allowed: boolean; retryAfterMs: number }> {
  const [row] = await tx<{ allowed: boolean; retry_after_ms: number }[]>`
    with current as (
      select coalesce(rotations_window_start > now() - ${windowMs} * interval '1 millisecond', false) as live, rotations_window_start, rotations_in_window
      from integrations where project = ${project} and id = ${id}
    ), counted as (
      update integrations i set
        rotations_window_start = case when c.live then c.rotations_window_start else now() end,
        rotations_in_window = case when c.live then c.rotations_in_window + 1 else 1 end
      from current c
      where i.project = ${project} and i.id = ${id} and (not c.live or c.rotations_in_window < ${limit})
      returning 1
    )
    select exists (select 1 from counted) as allowed,
           coalesce((select ceil(extract(epoch from (rotations_window_start + ${windowMs} * interval '1 millisecond' - now())) * 1000)::int from current where live), 0) as retry_after_ms`;
  return { allowed: row!.allowed, retryAfterMs: row!.retry_after_ms };
}

/** Serialises the updates of the platform's and the edges' account JWTs. */
const AccountLock = 7_420_003;

export async function lockAccounts(tx: TransactionSql): Promise<void> {
  await tx`select pg_advisory_xact_lock(${AccountLock})`;
}

type RevocationRows = Array<{ user_key: string; at: string }>;
const toRevocations = (rows: RevocationRows) => Object.fromEntries(rows.map((r) => [r.user_key, Number(r.at)]));

/**
 * Every revoked user of the platform's account, with when it was revoked (seconds): the role keys
 * an operator renewed, and the integration users issued in it before integrations had accounts (a
 * set that no longer grows).
 */
export async function platformRevocations(tx: TransactionSql): Promise<Record<string, number>> {
  return toRevocations(await tx<RevocationRows>`
    select user_key, floor(extract(epoch from revoked_at))::bigint::text as at from nats_credentials where revoked_at is not null and account is null
    union all
    select user_key, floor(extract(epoch from revoked_at))::bigint::text from nats_role_revocations where account is null`);
}

/** The renewed role keys of another platform account (the edges'). */
export async function roleRevocations(tx: TransactionSql, account: string): Promise<Record<string, number>> {
  return toRevocations(await tx<RevocationRows>`
    select user_key, floor(extract(epoch from revoked_at))::bigint::text as at from nats_role_revocations where account = ${account}`);
}

/** A platform user's key revoked in its account (null: the platform's): a role's credential renewed, or moved to another account. */
export async function insertRoleRevocation(db: Db, userKey: string, role: string, account: string | null): Promise<void> {
  await db`insert into nats_role_revocations (user_key, role, account) values (${userKey}, ${role}, ${account}) on conflict (user_key) do nothing`;
}

/**
 * The issue time for an account's next JWT (seconds): now, or a second after the one recorded
 * before (a server takes an account JWT only when it is no older than the one it holds). Locks
 * the record for the transaction.
 */
export async function nextAccountIssueTime(tx: TransactionSql, account: string): Promise<number> {
  const [last] = await tx<{ issued_at: string }[]>`select issued_at::text from nats_account_jwts where account = ${account} for update`;
  return Math.max(Math.floor(Date.now() / 1000), Number(last?.issued_at ?? 0) + 1);
}

export async function recordAccountJwt(tx: TransactionSql, account: string, issuedAt: number, jwt: string): Promise<void> {
  await tx`
    insert into nats_account_jwts (account, issued_at, jwt) values (${account}, ${issuedAt}, ${jwt})
    on conflict (account) do update set issued_at = excluded.issued_at, jwt = excluded.jwt`;
}

export async function latestAccountJwt(db: Db, account: string): Promise<{ issuedAt: number; jwt: string } | undefined> {
  const [row] = await db<{ issued_at: string; jwt: string }[]>`select issued_at::text, jwt from nats_account_jwts where account = ${account}`;
  return row ? { issuedAt: Number(row.issued_at), jwt: row.jwt } : undefined;
}

/**
 * The account updates to push again after JOBS was lost (actors/outbox/resend.ts): every account's
 * newest JWT issued within the last JobsKeptDays (a job older than that is no longer in the stream),
 * with the integration it belongs to while it exists. Pushing a JWT the servers have already is
 * harmless; one they lack (its push right after the change failed, and its job went with JOBS) would
 * otherwise wait for the account's next change, a rotation's revocation with it.
 */
export async function undoneAccountUpdates(tx: TransactionSql): Promise<Array<OutboxEvent & { msgId: string }>> {
  const rows = await tx<Array<{ account: string; issued_at: string; project: string | null; id: string | null }>>`
    select j.account, j.issued_at::text, i.project, i.id from nats_account_jwts j
    left join integrations i on i.nats_account = j.account
    where j.issued_at > extract(epoch from now() - ${JobsKeptDays} * interval '1 day')`;
  return rows.map((r) => accountUpdateJob({ account: r.account, issuedAt: Number(r.issued_at), ...(r.project && r.id ? { project: r.project, integrationID: r.id } : {}) }));
}

/** The NATS integrations' consumers on EVENTS (all, or the one of `only`), with their filters (inside `events.<project>.`). */
export async function listNatsConsumers(db: Db, only?: { project: string; id: string }): Promise<Array<{ project: string; id: string; consumer: string; filter: string }>> {
  const one = only ? db`and project = ${only.project} and id = ${only.id}` : db``;
  return db<Array<{ project: string; id: string; consumer: string; filter: string }>>`
    select project, id, consumer, filter from integrations where kind = 'nats' and consumer is not null and filter is not null ${one}`;
}
