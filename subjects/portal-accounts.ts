import { z } from 'zod';
import { Done, ProjectId } from './common.js';
import { endpoint } from './contract.js';

/**
 * Portal accounts: the retailer's people who sign in to the web UI at /portal (design.md "Retailer
 * portal"). An account belongs to one project and has one role; the edge maps the role onto the
 * API's permissions (src/auth/portal-roles.ts), so a session can do exactly what a bearer token with
 * those permissions can. Passwords are kept as scrypt hashes; a new account's password, and one an
 * owner resets, is a one-time password that only lets its holder choose their own.
 */
export const PortalRoles = ['owner', 'backoffice', 'supervisor', 'accounting'] as const;
export const PortalRole = z.enum(PortalRoles).describe('owner | backoffice | supervisor | accounting');
export type PortalRole = z.infer<typeof PortalRole>;

/** Five failed sign-ins in a row lock an account for 15 minutes. */
export const SignInLimit = { failures: 5, lockMinutes: 15 } as const;

export const PortalAccountId = z.uuid().describe('The account id');

export const Email = z
  .string()
  .trim()
  .max(254)
  .regex(/^[^\s@]+@[^\s@]+$/, 'an email address')
  .describe('The email address the person signs in with (compared without regard to case)');

/** Passwords people choose: long enough to resist guessing, bounded so a hash costs what it should. */
export const NewPassword = z.string().min(10, 'at least 10 characters').max(200).describe('At least 10 characters');

export const PortalAccount = z
  .object({
    id: PortalAccountId,
    email: z.string(),
    role: PortalRole,
    passwordChangeRequired: z.boolean().describe('The password is a one-time password: signing in only allows choosing a new one'),
    lockedUntil: z.iso.datetime().nullable().describe('Set while failed sign-ins lock the account'),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'PortalAccount' });
export type PortalAccount = z.infer<typeof PortalAccount>;

export const PortalAccountInput = z.strictObject({ email: Email, role: PortalRole }).meta({ id: 'NewPortalAccount' });

export const PortalAccountChange = z
  .strictObject({
    role: PortalRole.optional(),
    resetPassword: z.literal(true).optional().describe('Replace the password by a new one-time password (answered once), end its sessions and unlock it'),
  })
  .meta({ id: 'PortalAccountChange' });

export const PortalAccountWithPassword = z
  .object({
    account: PortalAccount,
    password: z.string().optional().describe('A one-time password, shown only in this answer'),
  })
  .meta({ id: 'PortalAccountWithPassword' });

export const PortalAccountList = z.object({ accounts: z.array(PortalAccount) }).meta({ id: 'PortalAccountList' });

export const SignIn = z
  .strictObject({
    project: ProjectId,
    email: z.string().max(254),
    password: z.string().max(200),
  })
  .meta({ id: 'PortalSignIn' });

export const PortalSession = z
  .object({
    project: ProjectId,
    account: PortalAccount,
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'PortalSession' });

/** The secret of a session: the cookie's value. */
const SessionToken = z.string().min(20).max(200);

const Address = z.object({ project: ProjectId, id: PortalAccountId });

export const portalAccounts = {
  create: endpoint('svc.portalAccounts.create', z.object({ project: ProjectId, account: PortalAccountInput }), PortalAccountWithPassword),
  list: endpoint('svc.portalAccounts.list', z.object({ project: ProjectId }), PortalAccountList),
  /** Changing the last owner's role is 409: a project always keeps an owner. */
  update: endpoint('svc.portalAccounts.update', Address.extend({ change: PortalAccountChange }), PortalAccountWithPassword),
  /** Deleting the last owner is 409. */
  delete: endpoint('svc.portalAccounts.delete', Address, Done),
  /** A new session, or 403 (`forbidden` for a wrong email or password, `account_locked` while locked). */
  signIn: endpoint('svc.portalAccounts.signIn', SignIn.extend({ ttlMs: z.int().min(1000) }), PortalSession.extend({ token: SessionToken })),
  /** The session of a cookie value, or 403 when there is none (unknown, expired, signed out). */
  session: endpoint('svc.portalAccounts.session', z.object({ token: z.string().max(200) }), PortalSession),
  signOut: endpoint('svc.portalAccounts.signOut', z.object({ token: z.string().max(200) }), Done),
  /** 403 when the current password is wrong; the account's other sessions end. */
  changePassword: endpoint(
    'svc.portalAccounts.changePassword',
    z.object({ token: z.string().max(200), currentPassword: z.string().max(200), newPassword: NewPassword }),
    PortalSession,
  ),
};
