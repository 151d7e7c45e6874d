import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Permission } from '../auth/permissions.js';
import type { Principal, TokenVerifier } from '../auth/tokens.js';
import { AppError } from '../errors.js';

/**
 * Every route under `/:project` declares who may call it in `config.auth`: the permissions its token
 * must carry, or `public`. The token must also be for the project in the path. Checked in onRequest,
 * before the body is read, so a refused request reads and changes nothing.
 */
export type RouteAuth = 'public' | { permissions: readonly Permission[] };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function registerAuth(app: FastifyInstance, verifier: TokenVerifier): void {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/:project')) return;
    const auth = route.config?.auth;
    if (!auth) throw new Error(`${String(route.method)} ${route.url} must declare config.auth`);
    if (auth !== 'public') documentPermissions(route, auth.permissions);
  });

  app.addHook('onRequest', async (request) => {
    const auth = request.routeOptions.config.auth;
    if (!auth || auth === 'public') return;
    request.principal = await authenticate(request, verifier, auth.permissions);
  });
}

async function authenticate(request: FastifyRequest, verifier: TokenVerifier, permissions: readonly Permission[]): Promise<Principal> {
  const header = request.headers.authorization;
  if (!header || !/^bearer /i.test(header)) throw AppError.forbidden('a bearer token is required');
  const principal = await verifier.verify(header.slice(7).trim());
  const { project } = request.params as { project?: string };
  if (principal.project !== project) throw AppError.forbidden(`the token is not valid for project ${project}`);
  const missing = permissions.filter((p) => !principal.permissions.has(p));
  if (missing.length) throw AppError.forbidden(`the token lacks the permission ${missing.join(', ')}`);
  return principal;
}

function documentPermissions(route: RouteOptions, permissions: readonly Permission[]): void {
  const schema = (route.schema ??= {}) as Record<string, unknown>;
  // The automatic HEAD route shares its GET route's schema object: document it once.
  if (schema['x-permissions']) return;
  const needs = permissions.length ? `Permission: ${permissions.map((p) => `\`${p}\``).join(' and ')}.` : 'Any valid token for the project.';
  schema.description = [schema.description, needs].filter(Boolean).join('\n\n');
  schema.security = [{ bearerAuth: [] }];
  schema['x-permissions'] = [...permissions];
}

/**
 * For a route whose permission depends on its body (the three PATCH shapes of a checkout process):
 * the route's config.auth admits any token of the project, and the handler asks for the one the
 * parsed body needs before anything is sent to a worker.
 */
export function requirePermission(request: FastifyRequest, permission: Permission): void {
  if (!request.principal?.permissions.has(permission)) throw AppError.forbidden(`the token lacks the permission ${permission}`);
}
