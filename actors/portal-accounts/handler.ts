import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../src/errors.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { portalAccounts, type PortalAccount } from '../../subjects/portal-accounts.js';
import { hashPassword, needsRehash, newPassword, PersonPasswordCost, verifyPassword } from '../pos-credentials/password.js';
import * as db from './sql.js';

/**
 * Portal accounts and their sessions. A session's cookie value is 256 random bits; only its SHA-256
 * is stored. Sign-ins that fail are counted on the account (five lock it for 15 minutes), and so are
 * wrong current passwords of a password change; an unknown email costs the same scrypt as a known
 * one, so the answer's time does not tell them apart.
 *
 * Every password is hashed at PersonPasswordCost (OWASP's N = 2^17): a chosen one, and the one-time
 * password the platform generates (256 random bits, good until its holder chooses one), which needs
 * no such cost against guessing but takes it so that every sign-in costs the same one scrypt. A
 * chosen password whose hash was made at less is hashed anew at the next sign-in that verifies it;
 * a one-time password hashed at less (before this version) is verified beside a dummy at the cost.
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
      const row = await db.insertAccount(sql, project, { ...account, passwordHash: await hashPassword(password, PersonPasswordCost) });
      if (!row) throw AppError.conflict(`an account with the email ${account.email} exists`);
      return { account: toAccount(row), password };
    }),

    route(portalAccounts.list, async ({ project }) => ({ accounts: (await db.listAccounts(sql, project)).map(toAccount) })),

    route(portalAccounts.update, async ({ project, id, change }) => {
      const password = change.resetPassword ? newPassword() : undefined;
      const passwordHash = password ? await hashPassword(password, PersonPasswordCost) : undefined;
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
      // An unknown email costs a verification at PersonPasswordCost, as a chosen password's does.
      const dummyVerification = async () => void (await verifyPassword(password, await (dummyHash ??= hashPassword(newPassword(), PersonPasswordCost))));
      if (!row) {
        await dummyVerification();
        throw refused();
      }
      if (isLocked(row)) throw locked(row);
      // A hash made at less (a one-time password's from before, N = 2^14) is verified beside a dummy
      // at PersonPasswordCost, so the answer takes about as long as for an unknown email: its time
      // does not tell which emails have an account still waiting for its first sign-in.
      const [verified] = await Promise.all([
        verifyPassword(password, row.password_hash),
        needsRehash(row.password_hash, PersonPasswordCost) ? dummyVerification() : undefined,
      ]);
      if (!verified) {
        const after = await db.recordFailedSignIn(sql, project, row.id);
        if (after && isLocked(after)) throw locked(after);
        throw refused();
      }
      await db.recordGoodSignIn(sql, project, row.id);
      if (!row.password_change_required && needsRehash(row.password_hash, PersonPasswordCost)) {
        await db.replacePasswordHash(sql, project, row.id, row.password_hash, await hashPassword(password, PersonPasswordCost));
      }
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
      // A wrong current password counts as a failed sign-in: a borrowed session must not guess it.
      if (isLocked(row)) throw locked(row);
      if (!(await verifyPassword(currentPassword, row.password_hash))) {
        const after = await db.recordFailedSignIn(sql, row.project, row.id);
        if (after && isLocked(after)) throw locked(after);
        throw AppError.forbidden('the current password is wrong');
      }
      const passwordHash = await hashPassword(chosen, PersonPasswordCost);
      const account = await sql.begin(async (tx) => {
        await db.recordGoodSignIn(tx, row.project, row.id);
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
