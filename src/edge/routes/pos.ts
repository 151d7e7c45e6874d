import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ProcessId } from '../../../subjects/checkout-process.js';
import { PosCheckoutProcess, PosCheckoutProcessInput, pos } from '../../../subjects/pos.js';
import { AppError } from '../../errors.js';
import type { ServiceClient } from '../../messaging/client.js';
import { callerOf } from '../auth.js';
import { documentedBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { sendJsonBytes } from '../json-bytes.js';

export const MergePatchType = 'application/merge-patch+json';

const PosParams = ProjectParams.extend({ id: ProcessId });
const update = { auth: { permissions: ['updatePricingCheckoutProcess'], basic: 'pos' } } as const;
const tags = ['pos'];

const Moves = [
  'A PoS moves the state pending → processing (may set processedBy) → successful (may set lineItems, taxShares, netPrice, totalPrice, loyaltyCard)',
  'or failed (may set failedReason). Changing another field in a move is 400 `bad_request`; a move the state does not allow, or a processing PoS other',
  'than the one holding the checkout, is 409 `invalid_state_transition`, state unchanged. Repeating the state it is in changes nothing (200).',
  'The final figures must add up (line items and tax shares to totalPrice; nets to netPrice; net + share = total per rate).',
  'A PoS that takes a process over (processing or successful) is its supervision: its pending checks pass, performed by its processedBy',
  '(else its credential or token `sub`).',
].join(' ');

function mediaType(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function requireMediaType(request: FastifyRequest, wanted: string): void {
  if (mediaType(request) !== wanted) throw new AppError(415, 'unsupported_media_type', `${request.method} on a PoS checkout takes ${wanted}`);
}

function jsonObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw AppError.badRequest('the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** A PoS that signed in with a credential and names no processedBy when it takes a checkout is the credential. */
function withDefaultProcessedBy(request: FastifyRequest, patch: Record<string, unknown>): Record<string, unknown> {
  const name = request.principal?.posName;
  return name && patch.state === 'processing' && patch.processedBy === undefined ? { ...patch, processedBy: name } : patch;
}

/** The PoS handover: the checkout process seen by a point of sale (QR code `service:<id>`). */
export function posRoutes(app: ZodApp, client: ServiceClient): void {
  // RFC 7386 bodies are JSON; Fastify's own parser keeps its protection against prototype poisoning.
  app.addContentTypeParser(MergePatchType, { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));

  app.get(
    '/:project/pos/checkout/id/:id',
    {
      config: { auth: { permissions: ['checkoutRead'], basic: 'pos' } },
      schema: { tags, summary: 'Get the PoS view of a checkout process', params: PosParams, response: { 200: PosCheckoutProcess, ...ErrorResponses } },
    },
    async (request) => client.call(pos.get, request.params),
  );

  app.put(
    '/:project/pos/checkout/id/:id',
    {
      config: update,
      schema: {
        tags,
        summary: 'Update the PoS view of a checkout process (application/json)',
        description: `The fields the body carries replace the stored ones. ${Moves} Another content type is 415.`,
        params: PosParams,
        body: documentedBody(PosCheckoutProcessInput.partial().extend({ state: PosCheckoutProcessInput.shape.state })),
        response: { 200: PosCheckoutProcess, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      requireMediaType(request, 'application/json');
      const body = jsonObject(request.body);
      if (body.state === undefined) throw AppError.badRequest('a PoS checkout process names its state');
      return sendJsonBytes(reply, await client.callForJson(pos.update, { ...request.params, patch: withDefaultProcessedBy(request, body), caller: callerOf(request) }));
    },
  );

  app.patch(
    '/:project/pos/checkout/id/:id',
    {
      config: update,
      schema: {
        tags,
        summary: `Move the PoS view of a checkout process with a merge patch (${MergePatchType}, RFC 7386)`,
        description: `${Moves} Another content type is 415.`,
        consumes: [MergePatchType],
        params: PosParams,
        body: documentedBody(z.record(z.string(), z.unknown()).describe('A merge patch of the PoS Checkout Process')),
        response: { 200: PosCheckoutProcess, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      requireMediaType(request, MergePatchType);
      return sendJsonBytes(reply, await client.callForJson(pos.update, { ...request.params, patch: withDefaultProcessedBy(request, jsonObject(request.body)), caller: callerOf(request) }));
    },
  );
}
