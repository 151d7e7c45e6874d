import { Readable } from 'node:stream';
import { z } from 'zod';
import { Order, OrderList, orders } from '../../../subjects/orders.js';
import { ShopId } from '../../../subjects/shops.js';
import type { ServiceClient } from '../../messaging/client.js';
import { pageOf } from '../paging.js';
import { ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { inParts, jsonArray } from '../streams.js';

const read = { auth: { permissions: ['ordersRead'] } } as const;
const tags = ['orders'];
/** Orders per message between worker and edge: a page of up to 30000 travels in parts. */
const PartSize = 500;
const DayMs = 86_400_000;

const Instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text).toISOString())
  .describe('An RFC 3339 date-time, or a date (midnight UTC)');

const ListQuery = z
  .object({
    from: Instant.optional().describe('Orders finalized at or after this time'),
    to: Instant.optional().describe('Orders finalized before this time'),
    date: Instant.optional().describe('Orders finalized from this time to one day later; not with from or to'),
    page: z.coerce.number().int().min(0).default(0).describe('Counts from 0'),
    perPage: z.coerce.number().int().min(1).max(30_000).default(1000),
    shopID: ShopId.optional(),
    'shop.externalID': z.string().min(1).max(200).optional(),
    includeAllStates: z.stringbool().default(false).describe('Also the orders of aborted and failed processes (userAborted, paymentFailed)'),
  })
  .refine((q) => q.date === undefined || (q.from === undefined && q.to === undefined), { message: 'date cannot be combined with from or to', path: ['date'] });

export function orderRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/orders',
    {
      config: read,
      schema: {
        tags,
        summary: 'List orders by finalizedAt',
        description:
          'Only `final` orders unless includeAllStates. Streamed, in parts, so a page of 30000 is never held whole. ' +
          'A query matching more orders than the configured ceiling (ORDERS_LIST_MAX_RECORDS) is 403 `too_many_records`.',
        params: ProjectParams,
        querystring: ListQuery,
        response: { 200: OrderList, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const { page, perPage, date, 'shop.externalID': shopExternalID, ...query } = request.query;
      const scope = {
        project,
        from: date ?? query.from,
        to: date ? new Date(Date.parse(date) + DayMs).toISOString() : query.to,
        shopID: query.shopID,
        shopExternalID,
        includeAllStates: query.includeAllStates,
      };
      const first = await client.call(orders.listPart, { ...scope, offset: page * perPage, limit: Math.min(PartSize, perPage) });
      const totalItems = first.totalItems ?? 0;
      const onPage = Math.max(0, Math.min(perPage, totalItems - page * perPage));

      const nextPart = async (after: string, remaining: number) => {
        const part = await client.call(orders.listPart, { ...scope, offset: 0, after, limit: Math.min(PartSize, remaining) });
        return { items: part.orders, next: part.next };
      };
      const items = inParts({ items: first.orders, next: first.next }, onPage, nextPart);
      const { pagination, links } = pageOf(request.url, page, perPage, totalItems);
      const close = `],"pagination":${JSON.stringify(pagination)},"links":${JSON.stringify(links)}}`;
      return reply.type('application/json').send(Readable.from(jsonArray(items, '{"resources":[', close)) as never);
    },
  );

  app.get(
    '/:project/orders/:id',
    {
      config: read,
      schema: { tags, summary: 'Get an order', params: ProjectParams.extend({ id: z.string().min(1).max(200) }), response: { 200: Order, ...ErrorResponses } },
    },
    async (request, reply) => reply.type('application/json').send((await client.call(orders.get, request.params)).order as never),
  );
}
