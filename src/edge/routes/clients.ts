import { ClientId, ClientInput, ClientList, Client, clients, CreatedClient, RotateClient } from '../../../subjects/clients.js';
import type { ServiceClient } from '../../messaging/client.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const manage = { auth: { permissions: ['projectsWrite'] } } as const;
const tags = ['clients'];
const ClientParams = ProjectParams.extend({ id: ClientId });

/**
 * Clients: apps and back-office servers that get tokens by themselves (docs/api.md, "Clients and
 * their tokens"). Creating and rotating answer a secret once; like the integrations' routes these
 * take no Idempotency-Key, since a replayed answer would have to keep the secret.
 */
export function clientRoutes(app: ZodApp, client: ServiceClient): void {
  app.post(
    '/:project/clients',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Register a client: an app (the app SDKs sign in with its TOTP key) or a service (OAuth 2.0 client credentials)',
        description:
          'kind `app`: `secret` is the TOTP key (Base32) the app SDK is configured with; its installations make app users and get tokens of the role `retailerApp`. ' +
          'kind `service`: `secret` is the client secret for `POST /oauth/token`; its tokens carry `permissions` or fewer. ' +
          'Tokens live `tokenLifetimeSeconds` (default 3600, 60 to 86400). The secret is in this answer only.',
        params: ProjectParams,
        body: ClientInput,
        response: { 201: CreatedClient, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const created = await client.call(clients.create, { project: request.params.project, client: request.body });
      return reply.code(201).header('location', created.links.self.href).header('cache-control', 'no-store').send(created);
    },
  );

  app.get(
    '/:project/clients',
    { config: manage, schema: { tags, summary: 'The clients of the project, without secrets (apps with how many app users they have)', params: ProjectParams, response: { 200: ClientList, ...ErrorResponses } } },
    async (request) => client.call(clients.list, { project: request.params.project }),
  );

  app.get(
    '/:project/clients/:id',
    { config: manage, schema: { tags, summary: 'A client, without its secret', params: ClientParams, response: { 200: Client, ...ErrorResponses } } },
    async (request) => client.call(clients.get, request.params),
  );

  app.post(
    '/:project/clients/:id/rotate',
    {
      config: manage,
      schema: {
        tags,
        summary: 'A new secret for a client, shown once; the one before is still accepted for 24 hours, or not at all with `revokeOldNow`',
        params: ClientParams,
        body: RotateClient.nullish().describe('Optional'),
        response: { 200: CreatedClient, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const rotated = await client.call(clients.rotate, { ...request.params, revokeOldNow: request.body?.revokeOldNow ?? false });
      return reply.header('cache-control', 'no-store').send(rotated);
    },
  );

  app.delete(
    '/:project/clients/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delete a client: it gets no token any more and its app users end; tokens already issued live until they expire',
        params: ClientParams,
        response: { 200: EmptyBody, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      await client.call(clients.delete, request.params);
      return reply.code(200).send('');
    },
  );
}
