import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RetailerAppRole } from '../../auth/client-roles.js';
import { noTokensIssued, type TokenSigner } from '../../auth/tokens.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { Metrics } from '../../infra/metrics.js';
import type { ServiceClient } from '../../messaging/client.js';
import { AppMetadata, AppUserId, clients, type Grant } from '../../../subjects/clients.js';
import { ProjectId } from '../../../subjects/common.js';
import type { AuthThrottle } from '../throttle.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const tags = ['app sign-in'];

/** The token as the app SDKs decode it (Android `Token`, iOS `TokenResponse`): Unix seconds. */
const IssuedToken = z
  .object({
    id: z.string().describe("The token's jti"),
    token: z.string().describe('The JWT: `Authorization: Bearer <token>` or `Client-Token: <token>`'),
    issuedAt: z.int().describe('Unix seconds'),
    expiresAt: z.int().describe('Unix seconds'),
  })
  .meta({ id: 'AppToken' });

const AppUserAndToken = z
  .object({ appUser: z.object({ id: AppUserId, secret: z.string().describe('Shown only in this answer; the platform keeps its SHA-256') }), token: IssuedToken })
  .meta({ id: 'AppUserAndToken' });

/** The installation id the SDKs send (Android: 32 hex digits; iOS: a UUID): carried into the token as `clientID`. */
const ClientIdHeader = z.string().regex(/^[A-Za-z0-9._:-]{1,100}$/, 'Client-ID is 1-100 letters, digits, ".", "_", ":" or "-"');

const RoleQuery = z.string().max(50).optional().describe(`The role of the token: \`${RetailerAppRole}\` (the default), the only role of an app`);

/** The SDKs' Basic credentials: `appID:code` to make an app user, `appID:code:appUserID:appUserSecret` for a token. */
const basicAuth = [{ appBasicAuth: [] }];

export interface AppSignInOptions {
  throttle: AuthThrottle;
  /** Signs the tokens (JWT_SECRET); absent when tokens come only from JWKS_URL's identity provider. */
  signer: TokenSigner | undefined;
  metrics: Metrics;
  /** App users one address may make per window (APP_USER_CREATE_LIMIT), on each edge. */
  appUserCreations: Config['throttle']['appUserCreations'];
}

/**
 * The app SDKs' sign-in, as they perform it against the public service the spec comes from
 * (docs/api.md, "Connecting the app SDK"): the metadata document, app users made by the app's
 * installations, tokens per project (refreshed by asking again: there is no refresh token), and the
 * links the metadata names (appdb, app events, the app user, consents).
 *
 * A refused credential is `403` with a `Date` header: the SDKs set their clock by it and try once
 * more, so a phone whose clock is off still signs in. Failed sign-ins count against the address and
 * the installation (Client-ID) or app user (throttle.ts), never against the app as a whole: its key
 * is in every copy of the app, so a block of the app would lock out every customer and protect
 * nothing.
 */
export function appSignInRoutes(app: ZodApp, client: ServiceClient, options: AppSignInOptions): void {
  const { throttle, signer, metrics } = options;

  /** The signer; without JWT_SECRET no token can be issued, and nothing is asked of a worker (no app user is made for nothing). */
  const signing = (): TokenSigner => {
    if (!signer) throw noTokensIssued();
    return signer;
  };
  const issue = (grant: Grant, clientID: string | undefined) => {
    const signed = signing().sign({ project: grant.project, sub: grant.sub, permissions: grant.permissions, appUserID: grant.appUserID, ...(clientID ? { clientID } : {}) }, grant.lifetimeSeconds);
    metrics.tokensIssued.inc({ grant: 'app' });
    return { id: signed.id, token: signed.token, issuedAt: signed.issuedAt, expiresAt: signed.expiresAt };
  };

  /** A refusal carries the server's time: the SDKs correct their clock from it and try once more. */
  const refusing = async <T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof AppError && err.status === 403) reply.header('date', new Date().toUTCString());
      throw err;
    }
  };

  app.get(
    '/metadata/app/:appID/:platform/:version',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'The metadata document the app SDKs start from',
        description:
          'The links the SDKs follow (app users, tokens, checkout info, appdb, app events, purchase history, consents) and the project with its shops. ' +
          'Public and cacheable for a minute. 404 for an id that is no app.',
        params: z.object({
          appID: z.string().max(100).describe('The app client id'),
          platform: z.string().regex(/^[A-Za-z0-9_-]{1,20}$/).describe('`android`, `ios`, ...'),
          version: z.string().min(1).max(100).describe("The app's version"),
        }),
        response: { 200: AppMetadata, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const metadata = await client.call(clients.metadata, request.params);
      return reply.header('cache-control', 'public, max-age=60').send(metadata);
    },
  );

  app.post(
    '/apps/:appID/users',
    {
      config: { auth: 'public' },
      onRequest: app.rateLimit({
        max: options.appUserCreations.limit,
        timeWindow: options.appUserCreations.windowMs,
        keyGenerator: (request) => `app-users:${request.ip}`,
      }),
      schema: {
        tags,
        summary: 'Make an app user, and its first token',
        description:
          '`Authorization: Basic base64(appID:code)`, the code a TOTP of the app\'s key (HMAC-SHA256, 8 digits, 30 s; the step before or after is accepted too); no body. ' +
          'The app user\'s secret is in this answer only. A wrong code is `403` with `Date`. ' +
          'At most `APP_USER_CREATE_LIMIT` app users per client address and window on each edge (default 60 a minute), `429` beyond.',
        params: z.object({ appID: z.string().max(100) }),
        querystring: z.object({ project: ProjectId.optional().describe('The app\'s project (the Android SDK names it; an app has one)') }),
        security: basicAuth,
        response: { 201: AppUserAndToken, ...ErrorResponses },
      },
    },
    async (request, reply) =>
      refusing(reply, async () => {
        signing();
        const [appID = '', code, ...rest] = basicParts(request);
        const clientID = installationOf(request);
        const made = await throttle.signIn(request, reply, clientID ? `app:${appID}:client:${clientID}` : undefined, () => {
          if (appID !== request.params.appID || code === undefined || rest.length || !fits(appID, code)) throw refused();
          return client.call(clients.createAppUser, { appID, code, project: request.query.project });
        });
        return reply.code(201).header('cache-control', 'no-store').send({ appUser: made.appUser, token: issue(made.grant, clientID) });
      }),
  );

  const tokenSchema = (params: z.ZodType | undefined, querystring: z.ZodType, alias: boolean) => ({
    tags,
    summary: alias ? 'A token for an app user (the path the iOS SDK builds)' : 'A token for an app user',
    description:
      '`Authorization: Basic base64(appID:code:appUserID:appUserSecret)`. A token of the role `retailerApp` for the project, with the `appUserID` claim and `clientID` from the `Client-ID` header, ' +
      "living the app's token lifetime; `Cache-Control: no-store`. A new token is had by asking again. A wrong code or credential is `403` with `Date`." +
      (alias ? ' The same as `GET /{project}/tokens`.' : ''),
    ...(params ? { params } : {}),
    querystring,
    security: basicAuth,
    response: { 200: IssuedToken, ...ErrorResponses },
  });
  const token = (project: string, role: string | undefined) => async (request: FastifyRequest, reply: FastifyReply) =>
    refusing(reply, async () => {
      signing();
      if (role !== undefined && role !== RetailerAppRole) throw AppError.forbidden(`an app's tokens are of the role ${RetailerAppRole}`);
      const [appID = '', code, appUserID, appUserSecret, ...rest] = basicParts(request);
      const clientID = installationOf(request);
      const grant = await throttle.signIn(request, reply, `app:${appID}:user:${appUserID ?? ''}`, () => {
        if (code === undefined || appUserID === undefined || appUserSecret === undefined || rest.length || !fits(appID, code, appUserID, appUserSecret)) throw refused();
        return client.call(clients.appToken, { project, appID, code, appUserID, appUserSecret });
      });
      return reply.header('cache-control', 'no-store').send(issue(grant, clientID));
    });

  const ProjectTokenQuery = z.object({ role: RoleQuery });
  const TokenQuery = z.object({ project: ProjectId, role: RoleQuery });
  app.get<{ Params: z.infer<typeof ProjectParams>; Querystring: z.infer<typeof ProjectTokenQuery> }>(
    '/:project/tokens',
    { config: { auth: 'public' }, schema: tokenSchema(ProjectParams, ProjectTokenQuery, false) },
    async (request, reply) => token(request.params.project, request.query.role)(request, reply),
  );
  app.get<{ Querystring: z.infer<typeof TokenQuery> }>(
    '/tokens',
    { config: { auth: 'public' }, schema: tokenSchema(undefined, TokenQuery, true) },
    async (request, reply) => token(request.query.project, request.query.role)(request, reply),
  );

  app.get(
    '/:project/appdb',
    {
      config: { auth: { permissions: ['productsRead'] } },
      schema: {
        tags,
        summary: "The app SDKs' offline product database: none is offered (304)",
        description:
          'Always `304 Not Modified` with no body: the SDKs keep no offline database and stay online. Android (ProductDatabaseDownloader) takes a 304 as "the same revision" ' +
          'and reports the update as done; iOS (AppDBDownloadDelegate) as `.noUpdate`. Any other answer without a database would be an error to both.',
        params: ProjectParams,
        response: { 304: EmptyBody.describe('Not modified: no offline database is offered'), ...ErrorResponses },
      },
    },
    async (_request, reply) => reply.code(304).send(''),
  );

  app.post(
    '/:project/events',
    {
      config: { auth: { permissions: [] } },
      schema: {
        tags,
        summary: "The app SDKs' app events (session start and end, cart, error, log, analytics, product not found): counted, not kept",
        description: 'Answers `200 {}`. Each event counts in `checkout_app_events_total` by type; the platform keeps its own record of checkouts and orders.',
        params: ProjectParams,
        body: AppEvent,
        response: { 200: z.object({}).describe('Taken'), ...ErrorResponses },
      },
    },
    async (request) => {
      metrics.appEvents.inc({ type: (KnownEventTypes as readonly string[]).includes(request.body.type) ? request.body.type : 'other' });
      return {};
    },
  );

  const appUser = { auth: { permissions: [], appUser: true } } as const;
  const AppUserParams = z.object({ appUserID: AppUserId });
  const principalProject = (request: FastifyRequest) => request.principal!.project;

  app.get(
    '/apps/users/:appUserID',
    { config: appUser, schema: { tags, summary: 'The app user (to its own token)', params: AppUserParams, response: { 200: z.object({ id: AppUserId }), ...ErrorResponses } } },
    async (request) => client.call(clients.appUser, { project: principalProject(request), appUserID: request.params.appUserID }),
  );

  app.post(
    '/apps/users/:appUserID/consents',
    {
      config: appUser,
      schema: {
        tags,
        summary: 'Record the version of the terms the app user accepted',
        params: AppUserParams,
        body: z.object({ version: z.string().min(1).max(100) }),
        response: { 200: z.object({}).describe('Recorded'), ...ErrorResponses },
      },
    },
    async (request) => {
      await client.call(clients.consent, { project: principalProject(request), appUserID: request.params.appUserID, version: request.body.version });
      return {};
    },
  );

  app.delete(
    '/apps/users/:appUserID',
    {
      config: appUser,
      schema: {
        tags,
        summary: 'End the app user: it gets no new token (tokens already issued live until they expire)',
        params: AppUserParams,
        response: { 200: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      await client.call(clients.deleteAppUser, { project: principalProject(request), appUserID: request.params.appUserID });
      return reply.code(200).send('');
    },
  );
}

/** The event types the SDKs send (Android EventType, iOS EventType): the label values of checkout_app_events_total. */
const KnownEventTypes = ['sessionStart', 'sessionEnd', 'cart', 'error', 'log', 'analytics', 'productNotFound'] as const;

/** An app event as the SDKs post it: its type, and whatever else they send with it. */
const AppEvent = z
  .looseObject({
    type: z.string().min(1).max(50),
    appId: z.string().max(200).nullish(),
    project: z.string().max(100).nullish(),
    timestamp: z.string().max(100).nullish(),
    payload: z.unknown(),
  })
  .meta({ id: 'AppEvent' });

const refused = () => AppError.forbidden('invalid app credentials');

/** Whether the parts of a credential are no longer than any the platform makes (an id, a code, a secret): a longer one is refused unread. */
function fits(...parts: string[]): boolean {
  return parts.every((part) => part.length <= 100);
}

/** The parts of `Authorization: Basic` split at `:` (none when there is no Basic header). */
function basicParts(request: FastifyRequest): string[] {
  const header = request.headers.authorization ?? '';
  if (!/^basic /i.test(header)) return [];
  return Buffer.from(header.slice(6).trim(), 'base64').toString('utf8').split(':');
}

/** The Client-ID header, checked; undefined when absent. */
function installationOf(request: FastifyRequest): string | undefined {
  const header = request.headers['client-id'];
  if (header === undefined || header === '') return undefined;
  const parsed = ClientIdHeader.safeParse(header);
  if (!parsed.success) throw AppError.badRequest('invalid Client-ID header', [{ type: 'invalid_field', code: 'invalid_format', path: 'Client-ID', message: parsed.error.issues[0]!.message }]);
  return parsed.data;
}
