import { randomBytes } from 'node:crypto';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { posCredentials, type PosCredential } from '../../subjects/pos-credentials.js';
import { hashPassword, newPassword, verifyPassword, VerifiedPasswords } from './password.js';
import * as db from './sql.js';

/** PoS credentials: created once with their password, listed without it, revoked at once. */
export function createPosCredentialsActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;
  const verified = new VerifiedPasswords();
  const refused = () => AppError.forbidden('invalid PoS credentials');

  return [
    route(posCredentials.create, async ({ project, credential }) => {
      const password = newPassword();
      const row = await db.insertCredential(sql, project, {
        username: `pos-${randomBytes(12).toString('base64url')}`,
        name: credential.name,
        permissions: credential.permissions,
        passwordHash: await hashPassword(password),
      });
      return { ...toCredential(row), password };
    }),

    route(posCredentials.list, async ({ project }) => ({ credentials: (await db.listCredentials(sql, project)).map(toCredential) })),

    route(posCredentials.delete, async ({ project, user }) => {
      if (!(await db.deleteCredential(sql, project, user))) throw AppError.notFound(`no PoS credential ${user}`);
      return null;
    }),

    route(posCredentials.verify, async ({ project, user, password }) => {
      const row = await db.findCredential(sql, project, user);
      if (!row) throw refused();
      const id = `${project}/${user}`;
      if (!verified.knows(id, password, row.password_hash)) {
        if (!(await verifyPassword(password, row.password_hash))) throw refused();
        verified.remember(id, password, row.password_hash);
      }
      return { user: row.username, name: row.name, permissions: row.permissions };
    }),
  ];
}

function toCredential(row: db.PosCredentialRow): PosCredential {
  return { user: row.username, name: row.name, permissions: row.permissions, createdAt: row.created_at.toISOString() };
}
