import { randomBytes, randomUUID } from 'node:crypto';
import { RetailerAppPermissions } from '../../src/auth/client-roles.js';
import { base32Encode, totpMatches } from '../../src/auth/totp.js';
import { AppError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import type { KeyRing } from '../../src/secrets/key-ring.js';
import { AppUserId, ClientId, clientPath, clients, type Client, type ClientInput, type CreatedClient, type Grant } from '../../subjects/clients.js';
import type { Permission } from '../../subjects/formats/permissions.js';
import { readSettings } from '../settings/sql.js';
import { toShop } from '../shops/handler.js';
import { listShops } from '../shops/sql.js';
import { appMetadata } from './metadata.js';
import { appKeyPurpose, matchesHash, matchesStoredServiceSecret, newAppKey, newSecret, OpenedAppKeys, secretHash, storedServiceSecret } from './secrets.js';
import * as db from './sql.js';

/**
 * Clients (subjects/clients.ts): made, listed, rotated and deleted by the project's owner, and the
 * credentials they turn into tokens. This worker decides what a token may say (its grant); the
 * edge, which holds JWT_SECRET, signs it. A refused credential is one answer whatever was wrong
 * (an unknown app, a code of another time, an app user of another app, a wrong secret), so that
 * a guesser learns nothing from it; the log says which.
 */
export interface ClientsDeps {
  sql: Sql;
  /**
   * The pool of short, hot statements (the checkout pool: few connections that pipeline their
   * queries, generic plans): a sign-in reads one row and makes one, as often as checkouts run.
   */
  signInSql: Sql;
  log: Logger;
  /** Seals the apps' TOTP keys (SECRETS_KEY). */
  secrets: KeyRing;
}

/** Clients a project may have. */
export const MaxClientsPerProject = 100;
/** How long the secret before a rotation is still accepted, unless revoked at once. */
export const PreviousSecretGraceMs = 24 * 3_600_000;

export function createClientsActor(deps: ClientsDeps): Route[] {
  const { sql, log } = deps;
  const now = Date.now;
  const keys = new OpenedAppKeys(deps.secrets);
  const refused = () => AppError.forbidden('invalid app credentials');
  const invalidClient = () => new AppError(401, 'invalid_client', 'client authentication failed');

  const find = async (project: string, id: string) => {
    const row = await db.findClient(sql, project, id);
    if (!row) throw AppError.notFound(`no client ${id}`);
    return row;
  };

  /** Whether a code is one of the app's key, or of its key before a rotation while that is accepted. */
  const codeMatches = (row: db.CredentialRow, code: string): boolean => {
    const at = now();
    if (totpMatches(keys.get(row.secret, appKeyPurpose(row.project, row.id)), code, at)) return true;
    return row.previous_secret !== null && (row.previous_secret_until?.getTime() ?? 0) > at && totpMatches(keys.get(row.previous_secret, appKeyPurpose(row.project, row.id)), code, at);
  };

  /** The app of an id, when the code is right; undefined (and logged) otherwise. */
  const signedInApp = (row: db.CredentialRow | undefined, appID: string, code: string, project?: string): row is db.CredentialRow => {
    const why =
      !row || row.kind !== 'app' ? 'no such app' : project !== undefined && row.project !== project ? 'an app of another project' : !codeMatches(row, code) ? 'a code not of this time' : undefined;
    if (why) log.info({ client: appID.slice(0, 100), project, why }, 'app sign-in refused');
    return why === undefined;
  };

  const appGrant = (row: db.CredentialRow, appUserID: string): Grant => ({
    project: row.project,
    sub: `app-user:${appUserID}`,
    permissions: [...RetailerAppPermissions],
    appUserID,
    lifetimeSeconds: row.token_lifetime_seconds,
  });

  return [
    route(clients.create, async ({ project, client }) => create(project, client)),

    route(clients.list, async ({ project }) => ({ clients: (await db.listClients(sql, project)).map(view) })),

    route(clients.get, async ({ project, id }) => view(await find(project, id))),

    route(clients.rotate, async ({ project, id, revokeOldNow }) => {
      const row = await find(project, id);
      const { stored, secret } = newClientSecret(row.kind, project, id);
      const rotated = await db.rotateSecret(sql, project, id, stored, revokeOldNow ? null : new Date(now() + PreviousSecretGraceMs));
      if (!rotated) throw AppError.notFound(`no client ${id}`);
      log.info({ project, client: id, revokeOldNow }, 'client secret rotated');
      return { ...view(rotated), secret };
    }),

    route(clients.delete, async ({ project, id }) => {
      if (!(await db.deleteClient(sql, project, id))) throw AppError.notFound(`no client ${id}`);
      log.info({ project, client: id }, 'client deleted');
      return null;
    }),

    route(clients.metadata, async ({ appID, platform, version }) => {
      const row = ClientId.safeParse(appID).success ? await db.findCredential(sql, appID) : undefined;
      if (!row || row.kind !== 'app') throw AppError.notFound(`no app ${appID}`);
      const [settings, shops] = await Promise.all([readSettings(sql, row.project), listShops(sql, row.project)]);
      return appMetadata({ appID, project: row.project, platform, version, settings, shops: shops.map(toShop) });
    }),

    route(clients.createAppUser, async ({ appID, code, project }) => {
      const row = ClientId.safeParse(appID).success ? await db.findCredential(deps.signInSql, appID) : undefined;
      if (!signedInApp(row, appID, code, project)) throw refused();
      const appUser = { id: randomUUID(), secret: newSecret() };
      await db.insertAppUser(deps.signInSql, { id: appUser.id, clientId: row.id, project: row.project, secretHash: secretHash(appUser.secret) });
      return { appUser, grant: appGrant(row, appUser.id) };
    }),

    route(clients.appToken, async ({ project, appID, code, appUserID, appUserSecret }) => {
      const userID = AppUserId.safeParse(appUserID).success ? appUserID : undefined;
      const row = ClientId.safeParse(appID).success ? await db.findCredential(deps.signInSql, appID, userID) : undefined;
      if (!signedInApp(row, appID, code, project)) throw refused();
      if (!userID || !row.user_secret_hash || !matchesHash(appUserSecret, row.user_secret_hash)) {
        log.info({ client: appID, project, why: row.user_secret_hash ? 'a wrong app user secret' : 'no such app user of this app' }, 'app sign-in refused');
        throw refused();
      }
      return appGrant(row, userID);
    }),

    route(clients.serviceToken, async ({ clientID, secret, scope }) => {
      const row = ClientId.safeParse(clientID).success ? await db.findCredential(deps.signInSql, clientID) : undefined;
      const at = now();
      const matches =
        row?.kind === 'service' &&
        (matchesStoredServiceSecret(secret, row.secret) ||
          (row.previous_secret !== null && (row.previous_secret_until?.getTime() ?? 0) > at && matchesStoredServiceSecret(secret, row.previous_secret)));
      if (!row || !matches) {
        log.info({ client: clientID.slice(0, 100), why: row?.kind === 'service' ? 'a wrong secret' : 'no such service client' }, 'client credentials refused');
        throw invalidClient();
      }
      const allowed = new Set(row.permissions);
      const outside = (scope ?? []).filter((name) => !allowed.has(name));
      if (outside.length) throw new AppError(400, 'invalid_scope', `the scope asks for what the client may not have: ${outside.slice(0, 10).join(' ')}`);
      const permissions = (scope ? [...new Set(scope)] : row.permissions) as Permission[];
      return { project: row.project, sub: `client:${row.id}`, permissions, lifetimeSeconds: row.token_lifetime_seconds };
    }),

    route(clients.appUser, async ({ project, appUserID }) => {
      if (!(await db.appUserExists(sql, project, appUserID))) throw AppError.notFound(`no app user ${appUserID}`);
      return { id: appUserID };
    }),

    route(clients.consent, async ({ project, appUserID, version }) => {
      if (!(await db.recordConsent(sql, project, appUserID, version))) throw AppError.notFound(`no app user ${appUserID}`);
      return null;
    }),

    route(clients.deleteAppUser, async ({ project, appUserID }) => {
      if (!(await db.deleteAppUser(sql, project, appUserID))) throw AppError.notFound(`no app user ${appUserID}`);
      return null;
    }),
  ];

  function newClientSecret(kind: Client['kind'], project: string, id: string): { stored: string; secret: string } {
    if (kind === 'app') {
      const key = newAppKey();
      return { stored: deps.secrets.seal(key.text, appKeyPurpose(project, id)), secret: key.text };
    }
    const secret = newSecret();
    return { stored: storedServiceSecret(secret), secret };
  }

  async function create(project: string, input: ClientInput): Promise<CreatedClient> {
    const id = `${input.kind === 'app' ? 'app' : 'svc'}-${base32Encode(randomBytes(13)).slice(0, 20).toLowerCase()}`;
    const { stored, secret } = newClientSecret(input.kind, project, id);
    const created = await sql.begin(async (tx) => {
      // Counted under the project's lock: two creates side by side cannot both pass the limit.
      await tx`select pg_advisory_xact_lock(hashtext(${`clients:${project}`}))`;
      const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`select count(*)::int as count from clients where project = ${project}`;
      if (count >= MaxClientsPerProject) {
        throw AppError.badRequest(`a project has at most ${MaxClientsPerProject} clients: delete one first`, [
          { type: 'invalid_field', code: 'too_many', path: 'kind', message: `at most ${MaxClientsPerProject} clients per project` },
        ]);
      }
      return db.insertClient(tx, {
        id, project, name: input.name, kind: input.kind, permissions: input.kind === 'service' ? input.permissions : [], tokenLifetimeSeconds: input.tokenLifetimeSeconds, secret: stored,
      });
    });
    log.info({ project, client: id, kind: input.kind }, 'client made');
    return { ...view(created), secret };
  }
}

function view(row: db.ClientRow): Client {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    permissions: row.kind === 'app' ? [...RetailerAppPermissions] : row.permissions,
    tokenLifetimeSeconds: row.token_lifetime_seconds,
    createdAt: row.created_at.toISOString(),
    ...(row.rotated_at ? { rotatedAt: row.rotated_at.toISOString() } : {}),
    ...(row.previous_secret_until && row.previous_secret_until > new Date() ? { previousSecretUntil: row.previous_secret_until.toISOString() } : {}),
    ...(row.kind === 'app' ? { appUsers: row.app_users } : {}),
    links: { self: { href: clientPath(row.project, row.id) } },
  };
}
