import { Fulfillment, FulfillmentId, FulfillmentUpdate, fulfillments } from '../../../subjects/fulfillments.js';
import type { ServiceClient } from '../../messaging/client.js';
import { ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const FulfillmentParams = ProjectParams.extend({ id: FulfillmentId });
const tags = ['fulfillments'];

/** Fulfillments: what the platform asked an external fulfillment service to reserve and hand out. */
export function fulfillmentRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/fulfillments/:id',
    {
      config: { auth: { permissions: ['fulfillmentsRead'] } },
      schema: {
        tags,
        summary: 'Get a fulfillment (its path is the links.fulfillment.href the fulfillment service receives)',
        params: FulfillmentParams,
        response: { 200: Fulfillment, ...ErrorResponses },
      },
    },
    async (request) => client.call(fulfillments.get, request.params),
  );

  app.patch(
    '/:project/fulfillments/:id',
    {
      config: { auth: { permissions: ['fulfillmentsWrite'] } },
      schema: {
        tags,
        summary: 'Report the state of a fulfillment (by the fulfillment service)',
        description:
          'Moves the state table allows: allocating → allocated or allocationFailed; allocated → processing, processed, failed or allocationTimedOut; ' +
          'processing → processed or failed. Handing goods out (processing, processed) needs a paid process. Another move is 409 `invalid_state_transition`, nothing changed. ' +
          'A reservation that fails or times out fails a process that is still open; for a paid process the event `undeliverable` says it (a refund case).',
        params: FulfillmentParams,
        body: FulfillmentUpdate,
        response: { 200: Fulfillment, ...ErrorResponses },
      },
    },
    async (request) => client.call(fulfillments.update, { ...request.params, update: request.body }),
  );
}
