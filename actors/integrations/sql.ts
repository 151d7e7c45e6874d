import type { Sql, TransactionSql } from '../../src/infra/postgres.js';

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

export async function insertNatsCredential(db: Db, credential: { userKey: string; project: string; integrationId: string }): Promise<void> {
  await db`insert into nats_credentials (user_key, project, integration_id) values (${credential.userKey}, ${credential.project}, ${credential.integrationId})`;
}

/** Revokes the integration's credentials in force; answers how many there were. */
export async function revokeNatsCredentials(db: Db, project: string, integrationId: string): Promise<number> {
  const rows = await db`
    update nats_credentials set revoked_at = now()
    where project = ${project} and integration_id = ${integrationId} and revoked_at is null
    returning user_key`;
  return rows.length;
}

/** Serialises the updates of the platform account's JWT (one issue time after another). */
const AccountLock = 7_420_003;

/**
 * Every revoked user key (the integrations' and the platform roles') with when it was revoked (seconds), and the issue time of the account JWT
 * recorded last, under the account lock: the caller issues the next JWT later than that and
 * records it in the same transaction.
 */
export async function lockAccountRevocations(tx: TransactionSql, account: string): Promise<{ revocations: Record<string, number>; lastIssuedAt: number }> {
  await tx`select pg_advisory_xact_lock(${AccountLock})`;
  const revoked = await tx<{ user_key: string; at: string }[]>`
    select user_key, floor(extract(epoch from revoked_at))::bigint::text as at from nats_credentials where revoked_at is not null
    union all
    select user_key, floor(extract(epoch from revoked_at))::bigint::text from nats_role_revocations`;
  const [last] = await tx<{ issued_at: string }[]>`select issued_at::text from nats_account_jwts where account = ${account}`;
  return { revocations: Object.fromEntries(revoked.map((r) => [r.user_key, Number(r.at)])), lastIssuedAt: Number(last?.issued_at ?? 0) };
}

/** A platform user's key revoked: a role's credential renewed (npm run nats-auth -- --renew). */
export async function insertRoleRevocation(db: Db, userKey: string, role: string): Promise<void> {
  await db`insert into nats_role_revocations (user_key, role) values (${userKey}, ${role}) on conflict (user_key) do nothing`;
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
