import { Readable } from 'node:stream';
import { z } from 'zod';
import { Href } from '../../../subjects/common.js';
import {
  ClosingBatches,
  ClosingSchedule,
  ClosingScheduleInput,
  ClosingSummary,
  closings,
  jobPath,
  ReportJob,
  ReportJobRequest,
  ScheduleId,
} from '../../../subjects/closings.js';
import { Pagination } from '../../../subjects/common.js';
import { Order } from '../../../subjects/orders.js';
import { ShopId } from '../../../subjects/shops.js';
import type { ServiceClient } from '../../messaging/client.js';
import { pageOf } from '../paging.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';
import { inParts, jsonArray } from '../streams.js';

const read = { auth: { permissions: ['closingsRead'] } } as const;
const write = { auth: { permissions: ['closingsWrite'] } } as const;
const tags = ['closings'];
/** Closings and orders per message between worker and edge: a page travels in parts. */
const ClosingsPerPart = 200;
const OrdersPerPart = 500;

const ScheduleParams = ProjectParams.extend({ id: ScheduleId });
const ClosingParams = ProjectParams.extend({ shopID: ShopId, seqNum: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) });

const ScheduleList = z.object({ schedules: z.array(ClosingSchedule), links: z.object({ self: Href }) }).meta({ id: 'ClosingScheduleList' });
const Closing = ClosingSummary.extend({ orders: z.array(Order).describe('Its orders by sequence number: the final ones, or all with includeAllStates') }).meta({
  id: 'Closing',
});
const ClosingList = z
  .object({
    closings: z.array(ClosingSummary).describe('Newest first; without their orders (follow links.self)'),
    pagination: Pagination,
    links: z.object({ self: Href, nextPage: Href.optional() }),
  })
  .meta({ id: 'ClosingList' });

const ListQuery = z.object({
  page: z.coerce.number().int().min(0).default(0).describe('Counts from 0'),
  perPage: z.coerce.number().int().min(1).max(30_000).default(1000),
  shopID: ShopId.optional().describe('Only the closings of this shop'),
});

export function closingRoutes(app: ZodApp, client: ServiceClient): void {
  app.get(
    '/:project/closings/schedules',
    { config: read, schema: { tags, summary: 'List the closing schedules', params: ProjectParams, response: { 200: ScheduleList, ...ErrorResponses } } },
    async (request) => {
      const { schedules } = await client.call(closings.listSchedules, request.params);
      return { schedules, links: { self: { href: `/${request.params.project}/closings/schedules` } } };
    },
  );

  app.post(
    '/:project/closings/schedules',
    {
      config: { ...write, idempotent: true },
      schema: {
        tags,
        summary: 'Create a closing schedule',
        description:
          'Fires on its days at hour:minute in its location (IANA zone); docs/api.md ("When a schedule fires") says what happens on DST days. ' +
          'With appendBatchEvery and batchFormats ' +
          '(aggregated_receipts), every multiple of that interval the orders that came since the last batch are appended to the coming ' +
          "closing's batch logs (GET /{project}/closings/shops/{shopID}/batches). A bad body is 400 naming the field.",
        params: ProjectParams,
        body: ClosingScheduleInput,
        response: { 201: ClosingSchedule, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const schedule = await client.call(closings.createSchedule, { project: request.params.project, schedule: request.body });
      return reply.code(201).header('location', schedule.links.self.href).send(schedule);
    },
  );

  app.get(
    '/:project/closings/schedules/id/:id',
    { config: read, schema: { tags, summary: 'Get a closing schedule', params: ScheduleParams, response: { 200: ClosingSchedule, ...ErrorResponses } } },
    async (request) => client.call(closings.getSchedule, request.params),
  );

  app.put(
    '/:project/closings/schedules/id/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Replace a closing schedule',
        description: 'It fires only at fire times after the change.',
        params: ScheduleParams,
        body: ClosingScheduleInput,
        response: { 200: ClosingSchedule, ...ErrorResponses },
      },
    },
    async (request) => client.call(closings.updateSchedule, { ...request.params, schedule: request.body }),
  );

  app.delete(
    '/:project/closings/schedules/id/:id',
    { config: write, schema: { tags, summary: 'Delete a closing schedule', params: ScheduleParams, response: { 200: EmptyBody, ...ErrorResponses } } },
    async (request, reply) => {
      await client.call(closings.deleteSchedule, request.params);
      return reply.code(200).send('');
    },
  );

  app.post(
    '/:project/closings/jobs',
    {
      config: { ...write, idempotent: true },
      schema: {
        tags,
        summary: 'Close a shop now (report job)',
        description: 'Answers 202 with the job; follow links.self until it is `done` (links.closing) or `failed` (reason).',
        params: ProjectParams,
        body: ReportJobRequest,
        response: { 202: ReportJob, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const job = await client.call(closings.createJob, { project: request.params.project, job: request.body });
      return reply.code(202).header('location', jobPath(request.params.project, job.id)).send(job);
    },
  );

  app.get(
    '/:project/closings/jobs/:id',
    {
      config: read,
      schema: { tags, summary: 'Get a report job', params: ProjectParams.extend({ id: z.string().min(1).max(64) }), response: { 200: ReportJob, ...ErrorResponses } },
    },
    async (request) => client.call(closings.getJob, request.params),
  );

  app.get(
    '/:project/closings',
    {
      config: read,
      schema: {
        tags,
        summary: 'List closings, newest first',
        description: 'Each without its orders (follow links.self). Streamed, in parts.',
        params: ProjectParams,
        querystring: ListQuery,
        response: { 200: ClosingList, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const { page, perPage, shopID } = request.query;
      const offset = page * perPage;
      const first = await client.call(closings.listPart, { project, shopID, offset, limit: Math.min(ClosingsPerPart, perPage), count: true });
      const totalItems = first.totalItems ?? 0;
      const onPage = Math.max(0, Math.min(perPage, totalItems - offset));
      const texts = (items: readonly unknown[]) => items.map((item) => JSON.stringify(item));
      const nextPart = async (after: string, remaining: number) => {
        const part = await client.call(closings.listPart, { project, shopID, offset: 0, after, limit: Math.min(ClosingsPerPart, remaining), count: false });
        return { items: texts(part.closings), next: part.next };
      };
      const items = inParts({ items: texts(first.closings), next: first.next }, onPage, nextPart);
      const { pagination, links } = pageOf(request.url, page, perPage, totalItems);
      const close = `],"pagination":${JSON.stringify(pagination)},"links":${JSON.stringify(links)}}`;
      return reply.type('application/json').send(Readable.from(jsonArray(items, '{"closings":[', close)) as never);
    },
  );

  app.get(
    '/:project/closings/shops/:shopID/sequenceNumbers/:seqNum',
    {
      config: read,
      schema: {
        tags,
        summary: 'Get a closing with its orders',
        description: "Streamed: the orders of a large closing travel in parts. Its logs include the batch logs of its day (kind batch, linked as batch_<format>).",
        params: ClosingParams,
        response: { 200: Closing, ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project, shopID, seqNum } = request.params;
      const scope = { project, shopID, sequenceNumber: seqNum };
      const summary = await client.call(closings.get, scope);
      const nextPart = async (after: string) => {
        const part = await client.call(closings.ordersPart, { ...scope, after: Number(after), limit: OrdersPerPart });
        return { items: part.orders, next: part.next === null ? null : String(part.next) };
      };
      const orders = inParts({ items: [], next: '0' }, Number.MAX_SAFE_INTEGER, nextPart);
      const head = JSON.stringify(summary);
      return reply.type('application/json').send(Readable.from(jsonArray(orders, `${head.slice(0, -1)},"orders":[`, ']}')) as never);
    },
  );

  app.get(
    '/:project/closings/shops/:shopID/batches',
    {
      config: read,
      schema: {
        tags,
        summary: "List the batches and batch logs of a shop's coming closing",
        description:
          "While the day runs, before the closing exists: the batch logs the shop's schedules (appendBatchEvery, batchFormats) append to, with " +
          'the batches that appended orders. Download a log at links.batch_<format> (GET /{project}/closings/logs/{id}). With sequenceNumber, ' +
          'those of an earlier closing (whose logs list them too).',
        params: ProjectParams.extend({ shopID: ShopId }),
        querystring: z.object({ sequenceNumber: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().describe('Default: the coming closing') }),
        response: { 200: ClosingBatches, ...ErrorResponses },
      },
    },
    async (request) => client.call(closings.batches, { ...request.params, sequenceNumber: request.query.sequenceNumber }),
  );

  app.get(
    '/:project/closings/logs/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'Download a closing log',
        description:
          'The generated file with its content type (application/zip for dsfinvk_2023_03, text/csv for aggregated_receipts) and a file name. 404 while it is not_present. ' +
          'A batch log is readable while the day runs: each download is the file as of the last batch appended.',
        params: ProjectParams.extend({ id: ScheduleId }),
        response: { ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project, id } = request.params;
      const info = await client.call(closings.logInfo, { project, id });
      async function* chunks(): AsyncGenerator<Buffer> {
        for (let n = 0; n < info.chunks; n++) yield Buffer.from((await client.call(closings.logChunk, { project, id, n })).data, 'base64');
      }
      return reply
        .type(info.contentType)
        .header('content-disposition', `attachment; filename="${info.fileName.replace(/["\\]/g, '_')}"`)
        .header('content-length', String(info.size))
        .send(Readable.from(chunks()) as never);
    },
  );
}
