import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { decodeJwt } from 'jose';
import type { Caller } from '../../subjects/checkout-process.js';
import type { Permission } from '../auth/permissions.js';
import { checkOrigin, readCookie, requireChosenPassword, SessionCookie, sessionPrincipal, type SessionAuth } from '../auth/sessions.js';
import type { Principal, TokenVerifier } from '../auth/tokens.js';
import { AppError } from '../errors.js';
import type { AuthThrottle } from './throttle.js';

/**
 * Every route under `/:project` declares who may call it in `config.auth`: the permissions its token
 * must carry, or `public`. The token must also be for the project in the path. Checked in onRequest,
 * before the body is read, so a refused request reads and changes nothing.
 *
 * Routes marked `basic: 'pos'` (the PoS routes) also take `Authorization: Basic` with one of the
 * project's PoS credentials (subjects/pos-credentials.ts); every other route refuses Basic.
 *
 * Routes of an app user (`/apps/users/:appUserID...`, `appUser: true`) have no project in their
 * path: they take the token's project, and only a token whose `appUserID` claim is the path's.
 *
 * A credential that fails (a token that does not verify, a wrong PoS password) is counted against
 * the client address and the credential (throttle.ts); a request without one, or with a valid token
 * that lacks a permission, is refused without counting: it guesses nothing.
 */
export type RouteAuth = 'public' | { permissions: readonly Permission[]; basic?: 'pos'; appUser?: true };

/** Checks a PoS credential of a project (a worker holds the hashes); rejects with a 403 AppError. */
export type PosCredentialCheck = (project: string, user: string, password: string) => Promise<Principal>;

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function registerAuth(app: FastifyInstance, verifier: TokenVerifier, checkPosCredential: PosCredentialCheck, throttle: AuthThrottle, sessions: SessionAuth): void {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth;
    if (!route.url.startsWith('/:project') && !auth) return;
    if (!auth) throw new Error(`${String(route.method)} ${route.url} must declare config.auth`);
    documentPermissions(route, auth);
  });

  app.addHook('onRequest', async (request, reply) => {
    const auth = request.routeOptions.config.auth;
    if (!auth || auth === 'public') return;
    // The app SDKs send their token as Client-Token: the same JWT.
    const clientToken = request.headers['client-token'];
    const header = request.headers.authorization ?? (typeof clientToken === 'string' && clientToken ? `Bearer ${clientToken}` : '');
    const session = header ? undefined : readCookie(request.headers.cookie, SessionCookie);
    if (session) {
      request.principal = requirePermissions(await portalPrincipal(request, session, sessions), auth.permissions);
      return;
    }
    const principal = /^basic /i.test(header) && auth.basic === 'pos' ? await posPrincipal(request, reply, header, checkPosCredential, throttle) : await tokenPrincipal(request, reply, header, verifier, throttle);
    if (auth.appUser) requireOwnAppUser(request, principal);
    request.principal = requirePermissions(principal, auth.permissions);
  });
}

const isAuthFailure = (err: unknown) => err instanceof AppError && err.status === 403;

async function tokenPrincipal(request: FastifyRequest, reply: FastifyReply, header: string, verifier: TokenVerifier, throttle: AuthThrottle): Promise<Principal> {
  // Sign-ins are checked against the failure counts only while some are counted (no await otherwise).
  if (!throttle.quiet()) await throttle.check(request, reply, undefined);
  if (!/^bearer /i.test(header)) throw AppError.forbidden('a bearer token is required (Authorization: Bearer, or Client-Token)');
  const token = header.slice(7).trim();
  let principal: Principal;
  try {
    principal = await verifier.verify(token);
  } catch (err) {
    if (isAuthFailure(err)) await throttle.failed(request, unverifiedSub(token));
    throw err;
  }
  // A token sub blocked by failures through other addresses or edges is refused even when it verifies.
  if (principal.sub && !throttle.quiet()) await throttle.check(request, reply, `sub:${principal.sub}`);
  // An app user's routes have no project in their path: the token's is theirs (requireOwnAppUser).
  if (request.routeOptions.config.auth !== 'public' && request.routeOptions.config.auth?.appUser) return principal;
  const { project } = request.params as { project?: string };
  if (principal.project !== project) throw AppError.forbidden(`the token is not valid for project ${project}`);
  return principal;
}

/** An app user's own route: the token's `appUserID` claim must be the path's (an empty claim is no app user). */
function requireOwnAppUser(request: FastifyRequest, principal: Principal): void {
  const { appUserID } = request.params as { appUserID?: string };
  if (!principal.appUserID || principal.appUserID !== appUserID) throw AppError.forbidden('the token may act for its own app user only');
}

async function portalPrincipal(request: FastifyRequest, token: string, sessions: SessionAuth): Promise<Principal> {
  checkOrigin(request.method, request.headers.origin, `${request.protocol}://${request.host}`, sessions.origins);
  const principal = sessionPrincipal(requireChosenPassword(await sessions.check(token)));
  const { project } = request.params as { project?: string };
  if (principal.project !== project) throw AppError.forbidden(`the session is not valid for project ${project}`);
  return principal;
}

/** A PoS credential of the path's project; a failed attempt is logged without its password. */
async function posPrincipal(request: FastifyRequest, reply: FastifyReply, header: string, check: PosCredentialCheck, throttle: AuthThrottle): Promise<Principal> {
  const { project = '' } = request.params as { project?: string };
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  // The throttle answers first: a blocked credential costs no scrypt hash.
  return throttle.signIn(request, reply, `basic:${project}:${user}`, async () => {
    try {
      if (colon < 0) throw AppError.forbidden('invalid PoS credentials');
      return await check(project, user, decoded.slice(colon + 1));
    } catch (err) {
      if (isAuthFailure(err)) request.log.warn({ project, user: user.slice(0, 100), url: request.url }, 'PoS basic authentication failed');
      throw err;
    }
  });
}

/** The sub claim of a token that did not verify, to count the failure against; none when it does not decode. */
function unverifiedSub(token: string): string | undefined {
  try {
    const { sub } = decodeJwt(token);
    return sub ? `sub:${sub}` : undefined;
  } catch {
    return undefined;
  }
}

function requirePermissions(principal: Principal, permissions: readonly Permission[]): Principal {
  const missing = permissions.filter((p) => !principal.permissions.has(p));
  if (missing.length) throw AppError.forbidden(`the token lacks the permission ${missing.join(', ')}`);
  return principal;
}

function documentPermissions(route: RouteOptions, auth: RouteAuth): void {
  const schema = (route.schema ??= {}) as Record<string, unknown>;
  // The automatic HEAD route shares its GET route's schema object: document it once.
  if (schema['x-permissions']) return;
  let needs: string;
  if (auth === 'public') {
    // A public route may name the credential its handler checks itself (the app SDKs' Basic).
    needs = Array.isArray(schema.security) && schema.security.length ? 'No token needed: the credential below.' : 'Public: no token needed.';
    schema.security ??= [];
    schema['x-permissions'] = [];
  } else {
    const { permissions, basic, appUser } = auth;
    needs = permissions.length ? `Permission: ${permissions.map((p) => `\`${p}\``).join(' and ')}.` : appUser ? 'A token whose `appUserID` claim is the path\'s.' : 'Any valid token for the project.';
    if (basic === 'pos') needs += ' Also takes `Authorization: Basic` with a PoS credential of the project (`/{project}/pos/credentials`).';
    // OAuth 2.0 client credentials get such a token too: /docs asks for one with the operation's permissions as the scope.
    const bearer = [{ bearerAuth: [] }, { oauth2: [...permissions] }];
    schema.security = basic === 'pos' ? [...bearer, { posBasicAuth: [] }] : bearer;
    schema['x-permissions'] = [...permissions];
  }
  schema.description = [schema.description, needs].filter(Boolean).join('\n\n');
}

/**
 * For a route whose permission depends on its body (the three PATCH shapes of a checkout process):
 * the route's config.auth admits any token of the project, and the handler asks for the one the
 * parsed body needs before anything is sent to a worker.
 */
export function requirePermission(request: FastifyRequest, permission: Permission): void {
  if (!request.principal?.permissions.has(permission)) throw AppError.forbidden(`the token lacks the permission ${permission}`);
}

/**
 * The caller as a worker sees it, for the commands where who asks changes what happens (a
 * supervisor's payment success passes the checks) or is recorded (who performed them). Only what
 * the edge verified goes: the worker has no other word on the caller.
 */
export function callerOf(request: FastifyRequest): Caller {
  const principal = request.principal;
  return { ...(principal?.sub ? { sub: principal.sub } : {}), supervisor: principal?.permissions.has('supervisor') ?? false };
}
