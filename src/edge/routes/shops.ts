import { z } from 'zod';
import { Shop, ShopId, ShopInput, shops } from '../../../subjects/shops.js';
import type { ServiceClient } from '../../messaging/client.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { sendJsonBytes } from '../json-bytes.js';

const ShopParams = ProjectParams.extend({ id: ShopId });
const read = { auth: { permissions: ['shopsRead'] } } as const;
const write = { auth: { permissions: ['shopsWrite'] } } as const;
const tags = ['shops'];

export function shopRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/shops',
    { config: read, schema: { tags, summary: 'List the shops of the project', params: ProjectParams, response: { 200: z.array(Shop), ...ErrorResponses } } },
    async (request) => client.call(shops.list, { project: request.params.project }),
  );

  app.get(
    '/:project/shops/search',
    {
      config: read,
      schema: {
        tags,
        summary: 'Find the shop with an external id',
        params: ProjectParams,
        querystring: z.object({ externalId: z.string().min(1) }),
        response: { 200: Shop, ...ErrorResponses },
      },
    },
    async (request) => client.call(shops.findByExternalId, { project: request.params.project, externalId: request.query.externalId }),
  );

  app.get(
    '/:project/shops/:id',
    { config: read, schema: { tags, summary: 'Get a shop', params: ShopParams, response: { 200: Shop, ...ErrorResponses } } },
    async (request, reply) => sendJsonBytes(reply, await client.callForJson(shops.get, request.params)),
  );

  app.post(
    '/:project/shops',
    {
      config: { ...write, idempotent: true },
      schema: {
        tags,
        summary: 'Create a shop; its id is generated unless the body gives one',
        params: ProjectParams,
        body: ShopInput,
        response: { 201: Shop, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const shop = await client.call(shops.create, { project: request.params.project, shop: request.body });
      return reply.code(201).header('location', shop.links.self.href).send(shop);
    },
  );

  app.put(
    '/:project/shops/:id',
    {
      config: write,
      schema: { tags, summary: 'Replace a shop', params: ShopParams, body: ShopInput, response: { 200: Shop, ...ErrorResponses } },
    },
    async (request) => client.call(shops.update, { ...request.params, shop: request.body }),
  );

  app.delete(
    '/:project/shops/:id',
    { config: write, schema: { tags, summary: 'Delete a shop', params: ShopParams, response: { 200: EmptyBody, ...ErrorResponses } } },
    async (request, reply) => {
      await client.call(shops.delete, request.params);
      return reply.code(200).send('');
    },
  );
}
