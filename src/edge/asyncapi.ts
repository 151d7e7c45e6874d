import { z } from 'zod';
import { buildAsyncApi } from '../messaging/asyncapi.js';
import type { ZodApp } from './schemas.js';

const AsyncApiDocument = z.looseObject({ asyncapi: z.literal('3.0.0') }).describe('An AsyncAPI 3.0.0 document');

/**
 * `/asyncapi.json`: the message contract (request/reply subjects, events, jobs) as AsyncAPI 3.0,
 * public like `/openapi.json`. Built on the first request and kept, as the OpenAPI document is:
 * it costs about 100 ms, which a start (and every test's start) need not pay.
 */
export function asyncApiRoutes(app: ZodApp, version: string): void {
  let document: Buffer | undefined;
  app.get(
    '/asyncapi.json',
    {
      schema: {
        tags: ['system'],
        summary: 'The message contract as AsyncAPI 3.0: request/reply subjects, event subjects and job subjects with their payload schemas',
        description: 'Public: no token. Generated from subjects/ (the zod schemas both sides of the message path use).',
        response: { 200: AsyncApiDocument },
      },
    },
    async (_request, reply) => {
      document ??= Buffer.from(JSON.stringify(buildAsyncApi({ version })));
      // Bytes: the route's serializer would stringify a string again.
      return reply.type('application/json; charset=utf-8').send(document as never);
    },
  );
}
