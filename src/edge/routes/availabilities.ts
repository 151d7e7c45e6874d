import { z } from 'zod';
import { AvailabilityBatchItem, AvailabilityList, availabilities } from '../../../subjects/availabilities.js';
import { AvailabilityResult, imports } from '../../../subjects/imports.js';
import { Sku } from '../../../subjects/products.js';
import type { ServiceClient } from '../../messaging/client.js';
import { BatchBodyLimit, batchItems, fieldOf, NdjsonTypes, sendBatch } from '../batch.js';
import { documentedBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

// "availabilites": spelled as the spec spells it.
const tags = ['availabilities'];

export function availabilityRoutes(app: ZodApp, client: ServiceClient): void {
  app.post(
    '/:project/availabilites/_batch',
    {
      config: { auth: { permissions: ['availabilitiesWrite'] } },
      bodyLimit: BatchBodyLimit,
      schema: {
        tags,
        summary: 'Put and delete availabilities: ndjson of {op: put|delete, availability: {shopID, sku, value}} (at most 20000), or a JSON array (at most 500)',
        description: 'Answers 200 with one result `{availability, status, message?, line?}` per item, in input order, streamed. A later line about the same shop and SKU wins.',
        consumes: [...NdjsonTypes, 'application/json'],
        params: ProjectParams,
        body: documentedBody(z.array(AvailabilityBatchItem)),
        response: { 200: z.array(AvailabilityResult), ...ErrorResponses },
      },
    },
    async (request, reply) =>
      sendBatch(request, reply, {
        client,
        endpoint: imports.availabilities,
        project: request.params.project,
        items: batchItems(request.body),
        failed: ([line, text], message): AvailabilityResult => ({
          availability: { shopID: fieldOf(text, 'availability', 'shopID'), sku: fieldOf(text, 'availability', 'sku') },
          status: 'error',
          message,
          line,
        }),
      }),
  );

  app.get(
    '/:project/availabilites/sku/:sku',
    {
      config: { auth: { permissions: ['availabilitiesRead'] } },
      schema: {
        tags,
        summary: 'The availabilities of a product in every shop (an empty list for an unknown product)',
        params: ProjectParams.extend({ sku: Sku }),
        response: { 200: AvailabilityList, ...ErrorResponses },
      },
    },
    async (request) => client.call(availabilities.bySku, request.params),
  );
}
