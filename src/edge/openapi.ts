import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { ContentSecurityPolicies } from './security-headers.js';

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
          'Every path below `/{project}` needs `Authorization: Bearer <JWT>`; each operation names the permission it needs.',
          'The POST routes that create take an `Idempotency-Key` header (a random key per operation, per project): the same key and body within 24 hours answer the first answer again, with `Idempotent-Replayed: true`; the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_key_in_progress` with Retry-After. A 5xx is not kept, so a retry runs the request again.',
          'Shop ids are strings everywhere. Where the spec types a shop id as int (Order, Closing, ClosingSchedule), the API carries the same string: one identity for a shop across the API.',
        ].join('\n\n'),
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          posBasicAuth: { type: 'http', scheme: 'basic', description: 'A PoS credential of the project (PoS routes only)' },
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
