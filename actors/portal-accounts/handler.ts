import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../src/errors.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { portalAccounts, type PortalAccount } from '../../subjects/portal-accounts.js';
import { hashPassword, newPassword, verifyPassword } from '../pos-credentials/password.js';
import * as db from './sql.js';

/**
 * Portal accounts and their sessions. A session's cookie value is 256 random bits; only its SHA-256
 * is stored. Sign-ins that fail are counted on the account (five lock it for 15 minutes); an
 * unknown email costs the same scrypt as a known one, so the answer's time does not tell them apart.
 */
export function createPortalAccountsActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;
  const refused = () => AppError.forbidden('wrong email or password');
  const noSession = () => AppError.forbidden('not signed in (the session ended or never was)');
  let dummyHash: Promise<string> | undefined;

  const lastOwnerKept = async (tx: TransactionSql, project: string, id: string) => {
    if ((await db.otherOwners(tx, project, id)) === 0) throw AppError.conflict('a project keeps at least one owner');
  };

  return [
    route(portalAccounts.create, async ({ project, account }) => {
      const password = newPassword();
      const row = await db.insertAccount(sql, project, { ...account, passwordHash: await hashPassword(password) });
      if (!row) throw AppError.conflict(`an account with the email ${account.email} exists`);
      return { account: toAccount(row), password };
    }),

    route(portalAccounts.list, async ({ project }) => ({ accounts: (await db.listAccounts(sql, project)).map(toAccount) })),

    route(portalAccounts.update, async ({ project, id, change }) => {
      const password = change.resetPassword ? newPassword() : undefined;
      const passwordHash = password ? await hashPassword(password) : undefined;
      const row = await sql.begin(async (tx) => {
        let row = await db.lockAccount(tx, project, id);
        if (!row) throw AppError.notFound(`no portal account ${id}`);
        if (change.role && change.role !== row.role) {
          if (row.role === 'owner') await lastOwnerKept(tx, project, id);
          row = await db.setRole(tx, project, id, change.role);
        }
        if (passwordHash) {
          row = await db.resetPassword(tx, project, id, passwordHash);
          await db.deleteOtherSessions(tx, project, id, null);
        }
        return row;
      });
      return { account: toAccount(row), ...(password ? { password } : {}) };
    }),

    route(portalAccounts.delete, async ({ project, id }) => {
      await sql.begin(async (tx) => {
        const row = await db.lockAccount(tx, project, id);
        if (!row) throw AppError.notFound(`no portal account ${id}`);
        if (row.role === 'owner') await lastOwnerKept(tx, project, id);
        await db.deleteAccount(tx, project, id);
      });
      return null;
    }),

    route(portalAccounts.signIn, async ({ project, email, password, ttlMs }) => {
      const row = await db.findAccountByEmail(sql, project, email);
      if (!row) {
        await verifyPassword(password, await (dummyHash ??= hashPassword(newPassword())));
        throw refused();
      }
      if (isLocked(row)) throw locked(row);
      if (!(await verifyPassword(password, row.password_hash))) {
        const after = await db.recordFailedSignIn(sql, project, row.id);
        if (after && isLocked(after)) throw locked(after);
        throw refused();
      }
      await db.recordGoodSignIn(sql, project, row.id);
      const token = randomBytes(32).toString('base64url');
      const session = await db.insertSession(sql, { tokenHash: hashOf(token), project, accountId: row.id, ttlMs });
      await db.deleteExpiredSessions(sql);
      return { token, project, account: toAccount({ ...row, failed_sign_ins: 0, locked_until: null }), expiresAt: session.expires_at.toISOString() };
    }),

    route(portalAccounts.session, async ({ token }) => {
      const row = await db.findSession(sql, hashOf(token));
      if (!row) throw noSession();
      return { project: row.project, account: toAccount(row), expiresAt: row.expires_at.toISOString() };
    }),

    route(portalAccounts.signOut, async ({ token }) => {
      await db.deleteSession(sql, hashOf(token));
      return null;
    }),

    route(portalAccounts.changePassword, async ({ token, currentPassword, newPassword: chosen }) => {
      const tokenHash = hashOf(token);
      const row = await db.findSession(sql, tokenHash);
      if (!row) throw noSession();
      if (!(await verifyPassword(currentPassword, row.password_hash))) throw AppError.forbidden('the current password is wrong');
      const passwordHash = await hashPassword(chosen);
      const account = await sql.begin(async (tx) => {
        const updated = await db.setPassword(tx, row.project, row.id, passwordHash);
        await db.deleteOtherSessions(tx, row.project, row.id, tokenHash);
        return updated;
      });
      return { project: row.project, account: toAccount(account), expiresAt: row.expires_at.toISOString() };
    }),
  ];
}

function hashOf(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

function isLocked(row: db.AccountRow): boolean {
  return row.locked_until !== null && row.locked_until.getTime() > Date.now();
}

function locked(row: db.AccountRow): AppError {
  return new AppError(403, 'account_locked', `too many failed sign-ins: the account is locked until ${row.locked_until!.toISOString()}`);
}

function toAccount(row: db.AccountRow): PortalAccount {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    passwordChangeRequired: row.password_change_required,
    lockedUntil: row.locked_until && row.locked_until.getTime() > Date.now() ? row.locked_until.toISOString() : null,
    createdAt: row.created_at.toISOString(),
  };
}
