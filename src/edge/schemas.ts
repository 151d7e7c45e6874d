import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ProjectId } from '../../subjects/common.js';
import { ErrorReply } from '../../subjects/contract.js';

/** The Fastify instance routes are declared on: zod schemas give the handlers their types. */
export type ZodApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, ZodTypeProvider>;

export const ProjectParams = z.object({ project: ProjectId });

/** Error responses every operation can give, for the OpenAPI document. */
export const ErrorResponses = {
  '4xx': ErrorReply.describe('Client error: bad_request (with zod issues in details), forbidden, not_found, conflict, ...'),
  '5xx': ErrorReply.describe('internal_error, or service_unavailable when no worker answers in time'),
};

/** The body of a success that has nothing to say (the spec's plain `200`). */
export const EmptyBody = z.literal('').describe('empty body');

const documentedOnly = new WeakSet<object>();

/**
 * A body schema for the OpenAPI document only. Batch bodies are checked line by line by the workers
 * (a bad line is one error result, not a refused batch), so the edge passes them through as read.
 */
export function documentedBody<T extends z.ZodType>(schema: T): T {
  documentedOnly.add(schema);
  return schema;
}

export function isDocumentedOnly(schema: object): boolean {
  return documentedOnly.has(schema);
}
