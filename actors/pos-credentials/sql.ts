import type { Sql } from '../../src/infra/postgres.js';
import type { PosCredentialPermission } from '../../subjects/pos-credentials.js';

export interface PosCredentialRow {
  username: string;
  name: string;
  permissions: PosCredentialPermission[];
  password_hash: string;
  created_at: Date;
}

export async function insertCredential(
  sql: Sql,
  project: string,
  c: { username: string; name: string; permissions: readonly string[]; passwordHash: string },
): Promise<PosCredentialRow> {
  const [row] = await sql<PosCredentialRow[]>`
    insert into pos_credentials (project, username, name, permissions, password_hash)
    values (${project}, ${c.username}, ${c.name}, ${c.permissions as string[]}, ${c.passwordHash})
    returning *`;
  return row!;
}

export function listCredentials(sql: Sql, project: string) {
  return sql<PosCredentialRow[]>`select * from pos_credentials where project = ${project} order by created_at, username`;
}

export async function findCredential(sql: Sql, project: string, username: string): Promise<PosCredentialRow | undefined> {
  const [row] = await sql<PosCredentialRow[]>`select * from pos_credentials where project = ${project} and username = ${username}`;
  return row;
}

export async function deleteCredential(sql: Sql, project: string, username: string): Promise<boolean> {
  const result = await sql`delete from pos_credentials where project = ${project} and username = ${username}`;
  return result.count > 0;
}
