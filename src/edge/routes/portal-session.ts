import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NewPassword, PortalSession, portalAccounts, SignIn } from '../../../subjects/portal-accounts.js';
import { checkOrigin, portalCredential, readCookie, SessionCookie, sessionCookie, sessionPrincipal, type SessionAccount, type SessionAuth, type SessionCheck } from '../../auth/sessions.js';
import { AppError } from '../../errors.js';
import type { ServiceClient } from '../../messaging/client.js';
import type { AuthThrottle } from '../throttle.js';
import { ErrorResponses, type ZodApp } from '../schemas.js';

const tags = ['portal'];

const SignedIn = PortalSession.extend({
  permissions: z.array(z.string()).describe("The API permissions of the account's role (none until a one-time password is replaced)"),
}).meta({ id: 'PortalSignedIn' });

const PasswordChange = z.strictObject({ currentPassword: z.string().max(200), newPassword: NewPassword }).meta({ id: 'PortalPasswordChange' });

/** A session cookie's value as a worker knows it; anything it refuses is a 403. */
export function sessionCheck(client: ServiceClient): SessionCheck {
  return async (token) => {
    try {
      return await client.call(portalAccounts.session, { token });
    } catch (err) {
      if (err instanceof AppError && err.status < 500) throw AppError.forbidden('not signed in to the portal (the session ended)');
      throw err;
    }
  };
}

/**
 * Signing in to the portal and out: the session lives in an HttpOnly, SameSite=Strict cookie (Secure
 * when the request came over TLS or PUBLIC_BASE_URL is https), never in a script's reach. Failed
 * sign-ins, and wrong current passwords of a password change, count against the client address and
 * the account like failed tokens (throttle.ts), and against the account (five lock it).
 */
export function portalSessionRoutes(
  app: ZodApp,
  client: ServiceClient,
  options: { sessions: SessionAuth; throttle: AuthThrottle; ttlMs: number; publicBaseUrl: string | undefined },
): void {
  const { sessions, throttle, ttlMs } = options;
  const behindTls = options.publicBaseUrl?.startsWith('https:') === true;
  const ownOrigin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;
  const cookieOf = (request: FastifyRequest) => readCookie(request.headers.cookie, SessionCookie);
  const setCookie = (request: FastifyRequest, reply: FastifyReply, value: string, expiresAt: string | null) =>
    reply.header(
      'set-cookie',
      sessionCookie(value, { maxAgeSeconds: expiresAt ? (Date.parse(expiresAt) - Date.now()) / 1000 : 0, secure: behindTls || request.protocol === 'https' }),
    );
  const view = (session: SessionAccount & { expiresAt: string }) => ({ ...session, permissions: [...sessionPrincipal(session).permissions] });

  app.post(
    '/portal/api/session',
    {
      schema: {
        tags,
        summary: 'Sign in to the portal',
        description:
          'Sets the session cookie. 403 `forbidden` for a wrong email or password; 403 `account_locked` for 15 minutes after five failed sign-ins in a row.',
        body: SignIn,
        response: { 200: SignedIn, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      // A sign-in form of another site must not sign the browser in to an account of its choosing.
      if (request.headers.origin) checkOrigin(request.method, request.headers.origin, ownOrigin(request), sessions.origins);
      const credential = portalCredential(request.body.project, request.body.email);
      if (!throttle.quiet()) await throttle.check(request, reply, credential);
      let signedIn;
      try {
        signedIn = await client.call(portalAccounts.signIn, { ...request.body, ttlMs });
      } catch (err) {
        if (err instanceof AppError && err.status === 403) await throttle.failed(request, credential);
        throw err;
      }
      const { token, ...session } = signedIn;
      reply.header('cache-control', 'no-store');
      setCookie(request, reply, token, session.expiresAt);
      return view(session);
    },
  );

  app.get(
    '/portal/api/session',
    { schema: { tags, summary: "The signed-in portal account (the cookie's session)", response: { 200: SignedIn, ...ErrorResponses } } },
    async (request, reply) => {
      const token = cookieOf(request);
      if (!token) throw AppError.forbidden('not signed in to the portal');
      reply.header('cache-control', 'no-store');
      return view(await sessions.check(token));
    },
  );

  app.delete(
    '/portal/api/session',
    { schema: { tags, summary: 'Sign out of the portal (the session ends, the cookie is cleared)', response: { 204: z.null().describe('No body'), ...ErrorResponses } } },
    async (request, reply) => {
      const token = cookieOf(request);
      checkOrigin(request.method, request.headers.origin, ownOrigin(request), sessions.origins);
      if (token) await client.call(portalAccounts.signOut, { token });
      setCookie(request, reply, '', null);
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/portal/api/session/password',
    {
      schema: {
        tags,
        summary: 'Choose a new password for the signed-in account',
        description:
          "Replaces a one-time password too. 403 when the current password is wrong, which counts as a failed sign-in: 429 with Retry-After past AUTH_FAILURE_LIMIT, 403 `account_locked` after five in a row. The account's other sessions end.",
        body: PasswordChange,
        response: { 200: SignedIn, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const token = cookieOf(request);
      if (!token) throw AppError.forbidden('not signed in to the portal');
      checkOrigin(request.method, request.headers.origin, ownOrigin(request), sessions.origins);
      const { project, account } = await sessions.check(token);
      const change = () => client.call(portalAccounts.changePassword, { token, ...request.body });
      return view(await throttle.signIn(request, reply, portalCredential(project, account.email), change));
    },
  );
}
