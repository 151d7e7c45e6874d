import type { PortalRole } from '../../subjects/portal-accounts.js';
import { AppError } from '../errors.js';
import { PortalRolePermissions } from './portal-roles.js';
import type { Principal } from './tokens.js';

/**
 * Portal sessions beside bearer tokens: the cookie a portal sign-in sets stands for a principal with
 * its account's role's permissions (portal-roles.ts), for the account's project only. A browser
 * sends a cookie with any request to the site, even one another page makes it send, so a write made
 * with the cookie must come from a page of the edge itself: its `Origin` must be the edge's.
 */
export const SessionCookie = 'portal_session';

export interface SessionAccount {
  project: string;
  account: { id: string; email: string; role: PortalRole; passwordChangeRequired: boolean; lockedUntil: string | null; createdAt: string };
  expiresAt: string;
}

/** Resolves a cookie value to its session; rejects with a 403 AppError when there is none. */
export type SessionCheck = (token: string) => Promise<SessionAccount>;

export interface SessionAuth {
  check: SessionCheck;
  /** Origins a write may come from beside the request's own (the origin of PUBLIC_BASE_URL). */
  origins: readonly string[];
}

/** Who a session is: `portal:<email>` (what checks record as their performer). Until the one-time password is replaced, nothing may be done. */
export function sessionPrincipal(session: SessionAccount): Principal {
  const { account } = session;
  const permissions = account.passwordChangeRequired ? [] : PortalRolePermissions[account.role];
  return { sub: `portal:${account.email}`, project: session.project, permissions: new Set(permissions) };
}

/** The API refuses a session whose password is a one-time password, even where any token of the project may read. */
export function requireChosenPassword(session: SessionAccount): SessionAccount {
  if (session.account.passwordChangeRequired) throw AppError.forbidden('choose a new password first (the portal asks for it after signing in)');
  return session;
}

/** A cookie's value; one that does not decode (`%E0%A4%A`) is a 403, as a session that does not exist is. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw AppError.forbidden(`the ${name} cookie is malformed: sign in again`);
    }
  }
  return undefined;
}

/** The credential the sign-in throttle counts a portal account's failures under (throttle.ts). */
export function portalCredential(project: string, email: string): string {
  return `portal:${project}:${email.toLowerCase()}`;
}

/**
 * The session cookie. `secure`: whenever the edge is reached over https, by the request itself or by
 * PUBLIC_BASE_URL (a TLS proxy in front speaks plain http to the edge).
 */
export function sessionCookie(value: string, options: { maxAgeSeconds: number; secure: boolean }): string {
  const parts = [`${SessionCookie}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

const Safe: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A write made with the cookie: 403 unless its Origin is the edge's own (or one of `origins`). */
export function checkOrigin(method: string, origin: string | undefined, own: string, origins: readonly string[]): void {
  if (Safe.has(method)) return;
  if (!origin) throw AppError.forbidden('a write with the portal session needs an Origin header');
  if (origin !== own && !origins.includes(origin)) throw AppError.forbidden(`a write with the portal session from ${origin} is not accepted`);
}
