import { z } from 'zod';
import {
  CreatedIntegration, DeliveryCursor, deliveryCursor, Integration, IntegrationId, IntegrationInput, IntegrationList, IntegrationPatch, integrations, WebhookDeliveryList, WebhookEventId,
} from '../../../subjects/integrations.js';
import { AppError } from '../../errors.js';
import { keysetPageOf } from '../paging.js';
import type { ServiceClient } from '../../messaging/client.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const manage = { auth: { permissions: ['projectsWrite'] } } as const;
const tags = ['integrations'];
const IntegrationParams = ProjectParams.extend({ id: IntegrationId });

/**
 * Integrations: how outside systems follow the project's events (docs/integrators.md). Creating and
 * rotating answer a credential or secret once; these routes take no Idempotency-Key, since a
 * replayed answer would have to be kept, secret and all.
 */
export function integrationRoutes(app: ZodApp, client: ServiceClient): void {
  app.post(
    '/:project/integrations',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Make an integration: a NATS consumer with its credential, or a webhook with its signing secret',
        description:
          'kind `nats`: a durable pull consumer on EVENTS filtered to `events.<project>.<filter>` and a NATS user (`creds`, a .creds file) that may read only it. ' +
          'kind `webhook`: an https URL that receives the event types asked for, signed with `secret`. The credential or secret is in this answer only.',
        params: ProjectParams,
        body: IntegrationInput,
        response: { 201: CreatedIntegration, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const created = await client.call(integrations.create, { project: request.params.project, integration: request.body });
      return reply.code(201).header('location', created.links.self.href).send(created);
    },
  );

  app.get(
    '/:project/integrations',
    { config: manage, schema: { tags, summary: 'The integrations of the project, without credentials or secrets', params: ProjectParams, response: { 200: IntegrationList, ...ErrorResponses } } },
    async (request) => client.call(integrations.list, { project: request.params.project }),
  );

  app.get(
    '/:project/integrations/:id',
    { config: manage, schema: { tags, summary: 'An integration, without its credential or secret', params: IntegrationParams, response: { 200: Integration, ...ErrorResponses } } },
    async (request) => client.call(integrations.get, request.params),
  );

  app.patch(
    '/:project/integrations/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Change a webhook\'s url, event types or state (disabled stops its deliveries), or an integration\'s name',
        params: IntegrationParams,
        body: IntegrationPatch,
        response: { 200: Integration, ...ErrorResponses },
      },
    },
    async (request) => client.call(integrations.update, { ...request.params, patch: request.body }),
  );

  app.post(
    '/:project/integrations/:id/rotate',
    {
      config: manage,
      schema: {
        tags,
        summary: 'A new credential (nats: the one before is revoked on every node) or signing secret (webhook: the one before signs too for 24 h)',
        params: IntegrationParams,
        body: z.unknown().optional(),
        response: { 200: CreatedIntegration, ...ErrorResponses },
      },
    },
    async (request) => client.call(integrations.rotate, request.params),
  );

  app.get(
    '/:project/integrations/:id/deliveries',
    {
      config: manage,
      schema: {
        tags,
        summary: "A webhook's delivery attempts, newest first, paged by key",
        description:
          'For each attempt: the event, its type, the attempt number, when, the status (HTTP status, `timeout` or `connection_failed`), how long it took and the first 500 bytes of the answer. ' +
          'The first page is asked without `after`; each next page by its link, `links.nextPage` (which carries `page` and `after`): the list pages by key, so a page after the first cannot be asked by its number alone. ' +
          'Attempts are kept WEBHOOK_LOG_DAYS (30 days).',
        params: IntegrationParams,
        querystring: z.object({
          page: z.coerce.number().int().min(0).default(0).describe('Counts from 0; a page after the first comes with its `after`'),
          perPage: z.coerce.number().int().min(1).max(1000).default(100),
          after: DeliveryCursor.optional(),
        }),
        response: { 200: WebhookDeliveryList, ...ErrorResponses },
      },
    },
    async (request) => {
      const { page, perPage, after } = request.query;
      if (page > 0 && !after) {
        throw AppError.badRequest('a page after the first is asked for by its link (links.nextPage), which carries its `after`: the list pages by key', [
          { code: 'missing_cursor', path: 'after', message: 'required with a page after the first: follow links.nextPage' },
        ]);
      }
      const { deliveries, totalItems, next } = await client.call(integrations.deliveries, { ...request.params, ...(after ? { after } : {}), limit: perPage });
      return { deliveries, ...keysetPageOf(request.url, page, perPage, totalItems, next && { after: deliveryCursor(next) }) };
    },
  );

  app.post(
    '/:project/integrations/:id/deliveries/:eventId/redeliver',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Send one event to a webhook again (a new attempt with the same webhook-id)',
        params: IntegrationParams.extend({ eventId: WebhookEventId }),
        body: z.unknown().optional(),
        response: { 202: z.object({ eventId: z.string(), queued: z.literal(true) }), ...ErrorResponses },
      },
    },
    async (request, reply) => reply.code(202).send(await client.call(integrations.redeliver, request.params)),
  );

  app.delete(
    '/:project/integrations/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'End an integration: a NATS credential is revoked on every node and its consumer removed; a webhook is sent nothing more',
        params: IntegrationParams,
        response: { 200: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      await client.call(integrations.delete, request.params);
      return reply.code(200).send('');
    },
  );
}
