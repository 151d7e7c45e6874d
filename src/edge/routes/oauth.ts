import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { noTokensIssued, type TokenSigner } from '../../auth/tokens.js';
import { AppError } from '../../errors.js';
import type { Metrics } from '../../infra/metrics.js';
import type { ServiceClient } from '../../messaging/client.js';
import { clients } from '../../../subjects/clients.js';
import type { AuthThrottle } from '../throttle.js';
import type { ZodApp } from '../schemas.js';

/** The path of the token endpoint (the OpenAPI document's clientCredentials flow names it). */
export const TokenPath = '/oauth/token';

const FormType = 'application/x-www-form-urlencoded';
const FormLimitBytes = 8 * 1024;

const TokenRequest = z
  .object({
    grant_type: z.string().max(100).optional().describe('`client_credentials`'),
    scope: z.string().max(2000).optional().describe('Permission names separated by spaces, within the client\'s; left out: all of the client\'s'),
    client_id: z.string().max(200).optional().describe('client_secret_post: the client id (else Basic)'),
    client_secret: z.string().max(200).optional().describe('client_secret_post: the client secret (else Basic)'),
  })
  .meta({ id: 'OAuthTokenRequest' });

const TokenAnswer = z
  .object({
    access_token: z.string().describe('The JWT: `Authorization: Bearer <access_token>`'),
    token_type: z.literal('Bearer'),
    expires_in: z.int().describe('Seconds it lives'),
    scope: z.string().describe('The permissions it carries, separated by spaces'),
  })
  .meta({ id: 'OAuthToken' });

const OAuthError = z
  .object({
    error: z.string().describe('invalid_request, invalid_client (401), unsupported_grant_type, invalid_scope; slow_down (429) after too many failed sign-ins'),
    error_description: z.string(),
  })
  .meta({ id: 'OAuthError' });

const oauthError = (status: number, code: string, message: string) => new AppError(status, code, message);

/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4) for the project's service clients: the client's id
 * and secret by `client_secret_basic` (RFC 6749 §2.3.1: each form-encoded, then Basic) or
 * `client_secret_post` (in the form, never both), `grant_type=client_credentials`, an optional
 * `scope` within the client's permissions. Errors are RFC 6749 §5.2's `{error,
 * error_description}`; a failed client authentication is 401 with `WWW-Authenticate` and counts
 * against the address and the client id (throttle.ts), before any secret is checked once blocked.
 */
export function oauthRoutes(app: ZodApp, client: ServiceClient, options: { throttle: AuthThrottle; signer: TokenSigner | undefined; metrics: Metrics }): void {
  const { throttle, signer, metrics } = options;

  // The form parser lives in this route's own scope: the rest of the API takes JSON.
  void app.register(async (scope) => {
    scope.addContentTypeParser(FormType, { parseAs: 'string', bodyLimit: FormLimitBytes }, (_request, body, done) => {
      try {
        done(null, parseForm(body as string));
      } catch (err) {
        done(err as Error, undefined);
      }
    });

    scope.post<{ Body: z.infer<typeof TokenRequest> }>(
      TokenPath,
      {
        config: { auth: 'public', errorEnvelope: 'oauth' },
        schema: {
          tags: ['clients'],
          summary: 'OAuth 2.0 client credentials: a token for a service client',
          description:
            `RFC 6749 §4.4. \`${FormType}\` with \`grant_type=client_credentials\` and an optional \`scope\`; the client authenticates with Basic (client_secret_basic) ` +
            'or with `client_id` and `client_secret` in the form (client_secret_post). Answers `Cache-Control: no-store`. ' +
            'Errors (RFC 6749 §5.2): 400 `invalid_request`, 401 `invalid_client` (with `WWW-Authenticate`), 400 `unsupported_grant_type`, 400 `invalid_scope`; 429 `slow_down` with Retry-After after too many failed sign-ins.',
          consumes: [FormType],
          body: TokenRequest,
          security: [{ clientBasicAuth: [] }, {}],
          response: { 200: TokenAnswer, '4xx': OAuthError, '5xx': OAuthError },
        },
      },
      async (request, reply) => {
        if (!signer) throw noTokensIssued();
        const form = request.body;
        if (form.grant_type === undefined) throw oauthError(400, 'invalid_request', 'grant_type is required');
        if (form.grant_type !== 'client_credentials') throw oauthError(400, 'unsupported_grant_type', 'only grant_type=client_credentials is supported');
        const { clientID, secret } = clientCredentials(request, form);
        const scope = form.scope === undefined ? undefined : [...new Set(form.scope.split(' ').filter(Boolean))];
        const grant = await throttle.signIn(request, reply, `oauth:${clientID}`, () => {
          // Longer than any id or secret the platform makes: refused unread (and counted).
          if (clientID.length > 100 || secret.length > 200) throw oauthError(401, 'invalid_client', 'client authentication failed');
          return client.call(clients.serviceToken, { clientID, secret, ...(scope !== undefined ? { scope } : {}) });
        });
        const signed = signer.sign({ project: grant.project, sub: grant.sub, permissions: grant.permissions }, grant.lifetimeSeconds);
        metrics.tokensIssued.inc({ grant: 'service' });
        return reply
          .header('cache-control', 'no-store')
          .header('pragma', 'no-cache')
          .send({ access_token: signed.token, token_type: 'Bearer' as const, expires_in: grant.lifetimeSeconds, scope: grant.permissions.join(' ') });
      },
    );
  });
}

/** A form body, refused when a parameter comes twice (RFC 6749 §3.2: "MUST NOT be included more than once"). */
function parseForm(body: string): Record<string, string> {
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(form, name)) throw oauthError(400, 'invalid_request', `the parameter ${name.slice(0, 50)} is given more than once`);
    form[name] = value;
  }
  return form;
}

/** The client's id and secret from Basic or the form; both at once is refused (RFC 6749 §2.3). */
function clientCredentials(request: FastifyRequest, form: z.infer<typeof TokenRequest>): { clientID: string; secret: string } {
  const header = request.headers.authorization;
  const inForm = form.client_id !== undefined || form.client_secret !== undefined;
  if (header !== undefined) {
    if (inForm) throw oauthError(400, 'invalid_request', 'the client authenticates one way: Basic or the form, not both');
    if (!/^basic /i.test(header)) throw oauthError(401, 'invalid_client', 'client authentication is Basic or client_id and client_secret in the form');
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw oauthError(401, 'invalid_client', 'client authentication failed');
    return { clientID: formDecoded(decoded.slice(0, colon)), secret: formDecoded(decoded.slice(colon + 1)) };
  }
  if (form.client_id === undefined || form.client_secret === undefined) throw oauthError(401, 'invalid_client', 'client authentication is required: Basic, or client_id and client_secret in the form');
  return { clientID: form.client_id, secret: form.client_secret };
}

/** RFC 6749 §2.3.1: Basic carries the id and secret form-encoded. */
function formDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw oauthError(401, 'invalid_client', 'client authentication failed');
  }
}
