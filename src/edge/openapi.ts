import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { Permissions } from '../auth/permissions.js';
import { ContentSecurityPolicies } from './security-headers.js';
import { TokenPath } from './routes/oauth.js';

/** The OpenAPI document is generated from the routes' zod schemas: `/openapi.json`, and a UI at `/docs`. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Checkout platform API',
        version,
        description: [
          'Self-checkout platform for retailers: catalog, pricing, checkout, PoS handover, orders.',
          'Every path below `/{project}` needs `Authorization: Bearer <JWT>`; each operation names the permission it needs. A service client of the project gets such a token by OAuth 2.0 client credentials at `POST /oauth/token` (the `oauth2` scheme: Authorize in /docs); an app gets one through the app SDKs\' sign-in (`/apps/...`, `/{project}/tokens`).',
          'The POST routes that create take an `Idempotency-Key` header (a random key per operation, per project): the same key and body within 24 hours answer the first answer again, with `Idempotent-Replayed: true`; the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_key_in_progress` with Retry-After. A 5xx is not kept, so a retry runs the request again.',
          'Shop ids are strings everywhere. Where the spec types a shop id as int (Order, Closing, ClosingSchedule), the API carries the same string: one identity for a shop across the API.',
        ].join('\n\n'),
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          oauth2: {
            type: 'oauth2',
            description: `A service client of the project (\`/{project}/clients\`, kind \`service\`) gets a bearer token by client credentials; the scopes are permission names, within the client's.`,
            flows: { clientCredentials: { tokenUrl: TokenPath, scopes: Object.fromEntries(Permissions.map((p) => [p, `the permission ${p}`])) } },
          },
          posBasicAuth: { type: 'http', scheme: 'basic', description: 'A PoS credential of the project (PoS routes only)' },
          appBasicAuth: {
            type: 'http',
            scheme: 'basic',
            description: 'The app SDKs\' sign-in: `appID:code` (a TOTP of the app\'s key) to make an app user, `appID:code:appUserID:appUserSecret` for a token',
          },
          clientBasicAuth: { type: 'http', scheme: 'basic', description: 'A service client\'s id and secret (OAuth client_secret_basic)' },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // The page and its files replace the data policy with the page's (set in onSend, after helmet's).
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: ContentSecurityPolicies.docs });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
