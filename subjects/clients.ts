import { z } from 'zod';
import { Done, Href, ProjectId, SelfLinks } from './common.js';
import { endpoint } from './contract.js';
import { PermissionName } from './formats/permissions.js';
import { Shop } from './shops.js';

/**
 * Clients (design.md "Clients", docs/api.md "Clients and their tokens"): who may get a token
 * without an identity provider, registered by the project's owner (`projectsWrite`).
 *
 * - `app`: a customer app. Its secret is the key of the TOTP codes the app SDKs sign in with; its
 *   installations make app users for themselves and get tokens of the role `retailerApp`.
 * - `service`: a back-office server. It gets tokens by OAuth 2.0 client credentials, with the
 *   permissions the owner gave it or fewer.
 *
 * A secret is answered once (create, rotate); the one before a rotation is still accepted for 24
 * hours unless revoked at once. Deleting a client ends its app users; tokens already issued live
 * until they expire.
 */
export const ClientKinds = ['app', 'service'] as const;
export type ClientKind = (typeof ClientKinds)[number];

/** `app-` or `svc-` and 100 random bits as 20 lowercase base32 letters: no `:` (Basic credentials), nothing to escape in a path. */
export const ClientId = z
  .string()
  .regex(/^(app|svc)-[a-z2-7]{20}$/, 'a client id as the platform made it (app-... or svc-...)')
  .describe('The client id, made by the platform; unique across projects');

/** An app user id: a UUID as the platform made it. */
export const AppUserId = z.uuid().describe('The app user id, made by the platform');

/** Default and limits of a client's token lifetime (seconds). */
export const TokenLifetime = { default: 3600, min: 60, max: 86_400 } as const;

const Name = z.string().trim().min(1).max(100).describe('What the client is (an app, an ERP), at most 100 characters');

const Permissions = z
  .array(PermissionName)
  .min(1)
  .max(50)
  .refine((p) => new Set(p).size === p.length, 'permissions must not repeat');

export const ClientInput = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('app'),
      name: Name,
      tokenLifetimeSeconds: z.int().min(TokenLifetime.min).max(TokenLifetime.max).default(TokenLifetime.default),
    }),
    z.strictObject({
      kind: z.literal('service'),
      name: Name,
      permissions: Permissions.describe('What its tokens may carry at most (any of the permission names)'),
      tokenLifetimeSeconds: z
        .int()
        .min(TokenLifetime.min)
        .max(TokenLifetime.max)
        .default(TokenLifetime.default)
        .describe(`Seconds a token lives (default ${TokenLifetime.default}, at most ${TokenLifetime.max})`),
    }),
  ])
  .meta({ id: 'NewClient' });
export type ClientInput = z.infer<typeof ClientInput>;

export const Client = z
  .object({
    id: ClientId,
    name: z.string(),
    kind: z.enum(ClientKinds),
    permissions: z.array(z.string()).describe('service: what its tokens may carry; app: the permissions of the role retailerApp'),
    tokenLifetimeSeconds: z.int(),
    createdAt: z.iso.datetime(),
    rotatedAt: z.iso.datetime().optional().describe('When its secret was last rotated'),
    previousSecretUntil: z.iso.datetime().optional().describe('Until when the secret before the last rotation is still accepted'),
    appUsers: z.int().optional().describe('app: how many app users its installations made'),
    links: SelfLinks,
  })
  .meta({ id: 'Client' });
export type Client = z.infer<typeof Client>;

export const CreatedClient = Client.extend({
  secret: z
    .string()
    .describe('Shown only in this answer. app: the TOTP key (RFC 4648 Base32) the app SDK is configured with; service: the client secret of OAuth client credentials'),
}).meta({ id: 'CreatedClient' });
export type CreatedClient = z.infer<typeof CreatedClient>;

export const ClientList = z.object({ clients: z.array(Client) }).meta({ id: 'ClientList' });

export const RotateClient = z
  .strictObject({
    revokeOldNow: z.boolean().default(false).describe('true: the secret before is refused at once; false (the default): it is still accepted for 24 hours'),
  })
  .meta({ id: 'RotateClient' });

export function clientPath(project: string, id: string): string {
  return `/${project}/clients/${id}`;
}

const ClientRef = z.object({ project: ProjectId, id: ClientId });

/**
 * What a token is to say, as the worker decided it from a credential: the edge, which holds
 * JWT_SECRET, signs it with a `jti` of its own and `exp` at most `lifetimeSeconds` away.
 */
export const Grant = z.object({
  project: ProjectId,
  sub: z.string(),
  permissions: z.array(PermissionName),
  appUserID: z.string().optional(),
  lifetimeSeconds: z.int().min(TokenLifetime.min).max(TokenLifetime.max),
});
export type Grant = z.infer<typeof Grant>;

/** A TOTP code as the app SDKs make it: 8 digits. Anything else is refused without a look. */
const Code = z.string().max(20);
const Secret = z.string().max(200);

/** The metadata document the app SDKs start from (GET /metadata/app/{appID}/{platform}/{version}). */
export const AppMetadata = z
  .object({
    links: z.object({ self: Href, createAppUser: Href, appUser: Href, appUserOrders: Href, consents: Href }),
    metadata: z.object({ kill: z.boolean() }),
    projects: z.array(
      z.object({
        id: ProjectId,
        name: z.string(),
        currency: z.string(),
        decimalDigits: z.int(),
        locale: z.string(),
        roundingMode: z.string(),
        enableCheckout: z.boolean(),
        customerCards: z.object({ accepted: z.array(z.string()) }),
        shops: z.array(Shop),
        links: z.object({ self: Href, tokens: Href, checkoutInfo: Href, appdb: Href, appEvents: Href, shops: Href, coupons: Href }),
      }),
    ),
    gatewayCertificates: z.array(z.unknown()),
  })
  .meta({ id: 'AppMetadata' });
export type AppMetadata = z.infer<typeof AppMetadata>;

const AppUserRef = z.object({ project: ProjectId, appUserID: AppUserId });

export const clients = {
  create: endpoint('svc.clients.create', z.object({ project: ProjectId, client: ClientInput }), CreatedClient),
  list: endpoint('svc.clients.list', z.object({ project: ProjectId }), ClientList, { repeatable: true }),
  get: endpoint('svc.clients.get', ClientRef, Client, { repeatable: true }),
  rotate: endpoint('svc.clients.rotate', ClientRef.extend({ revokeOldNow: z.boolean() }), CreatedClient),
  delete: endpoint('svc.clients.delete', ClientRef, Done),

  /** The app SDKs' metadata document of an app (404 for an id that is no app). */
  metadata: endpoint(
    'svc.clients.metadata',
    z.object({ appID: z.string().max(100), platform: z.string().max(20), version: z.string().max(100) }),
    AppMetadata,
    { repeatable: true },
  ),
  /** A new app user of an app, for an installation that signed in with a TOTP code of the app's key; 403 otherwise. */
  createAppUser: endpoint(
    'svc.clients.createAppUser',
    z.object({ appID: z.string().max(100), code: Code, project: ProjectId.optional() }),
    z.object({ appUser: z.object({ id: AppUserId, secret: z.string() }), grant: Grant }),
  ),
  /** A token's grant for an app user (the app's TOTP code and the user's secret); 403 otherwise. */
  appToken: endpoint(
    'svc.clients.appToken',
    z.object({ project: ProjectId, appID: z.string().max(100), code: Code, appUserID: z.string().max(100), appUserSecret: Secret }),
    Grant,
    { repeatable: true },
  ),
  /** A token's grant for a service client (OAuth client credentials); `scope` absent: all of its permissions. */
  serviceToken: endpoint(
    'svc.clients.serviceToken',
    z.object({ clientID: z.string().max(100), secret: Secret, scope: z.array(z.string().max(100)).max(1000).optional() }),
    Grant,
    { repeatable: true },
  ),
  appUser: endpoint('svc.clients.appUser', AppUserRef, z.object({ id: AppUserId }), { repeatable: true }),
  consent: endpoint('svc.clients.consent', AppUserRef.extend({ version: z.string().max(100) }), Done),
  deleteAppUser: endpoint('svc.clients.deleteAppUser', AppUserRef, Done),
};
