import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { ClientKind } from '../../subjects/clients.js';

export interface ClientRow {
  id: string;
  project: string;
  name: string;
  kind: ClientKind;
  permissions: string[];
  token_lifetime_seconds: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  created_at: Date;
  rotated_at: Date | null;
  /** How many app users the client has (the listing statements count them). */
  app_users: number;
}

/** A client as a sign-in needs it, with the app user the credential names (absent: no such user of this client). */
export type CredentialRow = Pick<ClientRow, 'id' | 'project' | 'kind' | 'permissions' | 'token_lifetime_seconds' | 'secret' | 'previous_secret' | 'previous_secret_until'> & {
  user_secret_hash: Buffer | null;
};

const withAppUsers = (sql: Sql | TransactionSql) => sql`(select count(*) from app_users u where u.client_id = c.id)::int as app_users`;

export async function insertClient(
  sql: Sql | TransactionSql,
  c: { id: string; project: string; name: string; kind: ClientKind; permissions: readonly string[]; tokenLifetimeSeconds: number; secret: string },
): Promise<ClientRow> {
  const [row] = await sql<ClientRow[]>`
    insert into clients (id, project, name, kind, permissions, token_lifetime_seconds, secret)
    values (${c.id}, ${c.project}, ${c.name}, ${c.kind}, ${c.permissions as string[]}, ${c.tokenLifetimeSeconds}, ${c.secret})
    returning *, 0 as app_users`;
  return row!;
}

export function listClients(sql: Sql, project: string) {
  return sql<ClientRow[]>`select c.*, ${withAppUsers(sql)} from clients c where c.project = ${project} order by c.created_at, c.id`;
}

export async function findClient(sql: Sql, project: string, id: string): Promise<ClientRow | undefined> {
  const [row] = await sql<ClientRow[]>`select c.*, ${withAppUsers(sql)} from clients c where c.project = ${project} and c.id = ${id}`;
  return row;
}

/**
 * A new secret; the one before stays accepted until `previousUntil` (null: refused at once). Only
 * the secret of the last rotation stays: rotating twice within the grace ends the first.
 */
export async function rotateSecret(sql: Sql, project: string, id: string, secret: string, previousUntil: Date | null): Promise<ClientRow | undefined> {
  const [row] = await sql<ClientRow[]>`
    update clients c set
      previous_secret = case when ${previousUntil}::timestamptz is null then null else c.secret end,
      previous_secret_until = ${previousUntil},
      secret = ${secret},
      rotated_at = now()
    where c.project = ${project} and c.id = ${id}
    returning c.*, ${withAppUsers(sql)}`;
  return row;
}

/** Deletes a client and, with it, its app users. */
export async function deleteClient(sql: Sql, project: string, id: string): Promise<boolean> {
  const result = await sql`delete from clients where project = ${project} and id = ${id}`;
  return result.count > 0;
}

/** The client of an id, whatever its project (public paths and Basic credentials name it alone). */
export async function findCredential(sql: Sql, id: string, appUserID?: string): Promise<CredentialRow | undefined> {
  const [row] = await sql<CredentialRow[]>`
    select c.id, c.project, c.kind, c.permissions, c.token_lifetime_seconds, c.secret, c.previous_secret, c.previous_secret_until,
      u.secret_hash as user_secret_hash
    from clients c left join app_users u on u.id = ${appUserID ?? null}::uuid and u.client_id = c.id
    where c.id = ${id}`;
  return row;
}

export async function insertAppUser(sql: Sql, u: { id: string; clientId: string; project: string; secretHash: Buffer }): Promise<void> {
  await sql`insert into app_users (id, client_id, project, secret_hash) values (${u.id}, ${u.clientId}, ${u.project}, ${u.secretHash})`;
}

export async function appUserExists(sql: Sql, project: string, id: string): Promise<boolean> {
  const [row] = await sql`select 1 from app_users where project = ${project} and id = ${id}`;
  return row !== undefined;
}

export async function recordConsent(sql: Sql, project: string, id: string, version: string): Promise<boolean> {
  const result = await sql`update app_users set consent_version = ${version}, consented_at = now() where project = ${project} and id = ${id}`;
  return result.count > 0;
}

export async function deleteAppUser(sql: Sql, project: string, id: string): Promise<boolean> {
  const result = await sql`delete from app_users where project = ${project} and id = ${id}`;
  return result.count > 0;
}

/** Every sealed app key, current and before a rotation (for sealing anew: actors/secrets-at-rest.ts). */
export function sealedAppKeys(sql: Sql) {
  return sql<Array<{ project: string; id: string; field: 'secret' | 'previous_secret'; value: string }>>`
    select project, id, 'secret' as field, secret as value from clients where kind = 'app'
    union all
    select project, id, 'previous_secret', previous_secret from clients where kind = 'app' and previous_secret is not null`;
}

export async function replaceSealedAppKey(sql: Sql, s: { project: string; id: string; field: 'secret' | 'previous_secret'; was: string; value: string }): Promise<boolean> {
  const changed =
    s.field === 'secret'
      ? await sql`update clients set secret = ${s.value} where project = ${s.project} and id = ${s.id} and secret = ${s.was} returning id`
      : await sql`update clients set previous_secret = ${s.value} where project = ${s.project} and id = ${s.id} and previous_secret = ${s.was} returning id`;
  return changed.length > 0;
}
