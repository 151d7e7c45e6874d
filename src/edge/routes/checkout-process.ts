import { z } from 'zod';
import {
  CheckoutApproval,
  CheckoutProcess,
  CheckoutProcessChange,
  CheckoutProcessList,
  checkoutProcess,
  CreateCheckoutProcessRequest,
  ProcessId,
} from '../../../subjects/checkout-process.js';
import { ShopId } from '../../../subjects/shops.js';
import type { Permission } from '../../auth/permissions.js';
import type { ServiceClient } from '../../messaging/client.js';
import { callerOf, requirePermission } from '../auth.js';
import { idFromIdempotencyKey } from '../idempotency.js';
import { ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const ProcessParams = ProjectParams.extend({ id: ProcessId });
const tags = ['checkout'];

const CreateErrors =
  'Errors: 400 `invalid_signature` (the checkout info is not exactly as signed), 400 `checkout_info_expired` (older than its time to live), ' +
  '400 `invalid_payment_method` (not among its availableMethods), 400 `bad_request`.';

/** The permissions a PATCH needs: each part its own (the spec's table). */
function permissionsFor(change: CheckoutProcessChange): Permission[] {
  const needed: Permission[] = [];
  if (change.aborted) needed.push('productsRead');
  if (change.paymentState) needed.push('setPaymentState');
  if (change.pricing) needed.push('updatePricingCheckoutProcess');
  return needed;
}

export function checkoutProcessRoutes(app: ZodApp, client: ServiceClient): void {
  app.post(
    '/:project/checkout/process',
    {
      config: { auth: { permissions: ['productsRead'] }, errorEnvelope: 'both', idempotent: true },
      schema: {
        tags,
        summary: 'Create a checkout process from a signed checkout info',
        description: `201 with Location. The process waits for a supervisor approval when it has age-restricted or controlled items. ${CreateErrors}`,
        params: ProjectParams,
        body: CreateCheckoutProcessRequest,
        response: { 201: CheckoutProcess, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      // With an Idempotency-Key the id follows from the key: a try sent again finds the process the first one made.
      const id = idFromIdempotencyKey(request, 'checkout-process');
      const { process } = await client.call(checkoutProcess.create, { project: request.params.project, id, request: request.body });
      return reply.code(201).header('location', process.links.self.href).send(process);
    },
  );

  app.put(
    '/:project/checkout/process/:id',
    {
      config: { auth: { permissions: ['productsRead'] }, errorEnvelope: 'both' },
      schema: {
        tags,
        summary: 'Create a checkout process with an id of your choosing, idempotently',
        description:
          `201 with Location when created; the same request again answers 200 with the process as it is now; another request for an existing id is 409 \`conflict\`. ` +
          `Choose the id at random (a UUID v4): knowing it is part of the permission. ${CreateErrors}`,
        params: ProcessParams,
        body: CreateCheckoutProcessRequest,
        response: { 200: CheckoutProcess, 201: CheckoutProcess, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { process, created } = await client.call(checkoutProcess.create, { ...request.params, request: request.body });
      if (created) reply.code(201).header('location', process.links.self.href);
      return process;
    },
  );

  app.get(
    '/:project/checkout/process/:id',
    {
      config: { auth: { permissions: ['checkoutRead'] }, errorEnvelope: 'both' },
      schema: { tags, summary: 'Get a checkout process', params: ProcessParams, response: { 200: CheckoutProcess, ...ErrorResponses } },
    },
    async (request) => client.call(checkoutProcess.get, request.params),
  );

  app.get(
    '/:project/checkout/process',
    {
      config: { auth: { permissions: ['supervisor'] }, errorEnvelope: 'both' },
      schema: {
        tags,
        summary: 'The checkout processes of a shop, newest first (for supervisors)',
        params: ProjectParams,
        querystring: z.object({
          shop: ShopId.describe('The shop id'),
          limit: z.coerce.number().int().min(1).max(1000).default(100).describe('At most this many (default 100)'),
        }),
        response: { 200: CheckoutProcessList, ...ErrorResponses },
      },
    },
    async (request) => client.call(checkoutProcess.listByShop, { project: request.params.project, ...request.query }),
  );

  app.patch(
    '/:project/checkout/process/:id',
    {
      config: { auth: { permissions: [] }, errorEnvelope: 'both' },
      schema: {
        tags,
        summary: 'Abort a checkout process, set its payment state, or update its pricing',
        description: [
          'Shapes, each part with its permission: `{aborted: true}` (productsRead), `{paymentState, paymentResult?}` (setPaymentState),',
          '`{pricing}` (updatePricingCheckoutProcess; stored as given with what can be derived filled in, and sets `modified`), or `{pricing, paymentState}` (both, applied in that order).',
          'Payment moves: pending → processing, successful, failed or transferred; processing → successful, failed or transferred.',
          'successful, failed and transferred are final; an abort ends the process as failed. A move the machine does not allow is 409 `invalid_state_transition`',
          'with the process unchanged; so is `successful` before a required supervisor approval, unless the token also holds `supervisor`:',
          "a supervisor's payment success passes the pending checks in the same change (supervisorApproval, the `approved` event, then the payment's), performed by the token's `sub`.",
          'Asking for the state the process is in answers 200 and changes nothing.',
        ].join(' '),
        params: ProcessParams,
        body: CheckoutProcessChange,
        response: { 200: CheckoutProcess, ...ErrorResponses },
      },
    },
    async (request) => {
      for (const permission of permissionsFor(request.body)) requirePermission(request, permission);
      return client.call(checkoutProcess.change, { ...request.params, change: request.body, caller: callerOf(request) });
    },
  );

  app.post(
    '/:project/checkout/process/:id/approval',
    {
      config: { auth: { permissions: ['supervisor'] }, errorEnvelope: 'both' },
      schema: {
        tags,
        summary: 'Approve a checkout process as its supervisor',
        description:
          "Sets supervisorApproval; the checks record the token's `sub` as their performer. 201 also when it was approved before (the first performer stays); " +
          '409 `invalid_state_transition` once the process is finished.',
        params: ProcessParams,
        body: CheckoutApproval,
        response: { 201: CheckoutApproval, ...ErrorResponses },
      },
    },
    async (request, reply) => reply.code(201).send(await client.call(checkoutProcess.approve, { ...request.params, approval: request.body, caller: callerOf(request) })),
  );
}
