import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AppUserId, OrderId, PurchaseHistory, receipts, type ReceiptPart } from '../../../subjects/receipts.js';
import { AppError } from '../../errors.js';
import type { ServiceClient } from '../../messaging/client.js';
import { pageOf } from '../paging.js';
import { EmptyBody, ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

/**
 * Receipts (PDF) and an app user's purchase history. Both admit any token of the project
 * (config.auth) and decide in the handler: `ordersRead` reads every order; a token with an
 * `appUserID` claim reads that app user's orders only. Whether someone else's order exists is
 * never told: their receipts and their history are 403 alike.
 */
const anyToken = { auth: { permissions: [] } } as const;
const tags = ['orders'];
const HistoryPerPage = 50;

/** Receipts never change once made; clients and their private caches may keep them. */
const CacheControl = 'private, max-age=86400';

const ReceiptParams = ProjectParams.extend({ id: OrderId });
const HistoryParams = ProjectParams.extend({ appUserID: AppUserId });
const HistoryQuery = z.object({
  page: z.coerce.number().int().min(0).default(0).describe('Counts from 0'),
  perPage: z.coerce.number().int().min(1).max(1000).default(HistoryPerPage).describe(`Orders per page (default ${HistoryPerPage})`),
});

/**
 * A request that finds no receipt yet makes it: behind other first-time receipts on the render
 * threads, or on a render thread that starts with it, that takes longer than a plain request.
 */
const ReceiptCall = { timeoutMs: 30_000 };

const PdfBody = z.string().meta({ format: 'binary' }).describe('The receipt as application/pdf');

/** Who may read what: undefined for every order (ordersRead), else the one app user's. */
function readerOf(request: FastifyRequest): { appUserID?: string } {
  const principal = request.principal;
  if (principal?.permissions.has('ordersRead')) return {};
  // An empty claim is no app user: it must never match orders that carry none.
  if (principal?.appUserID) return { appUserID: principal.appUserID };
  throw AppError.forbidden('the token needs the permission ordersRead or an appUserID claim');
}

export function receiptRoutes(app: ZodApp, client: ServiceClient): void {
  const receiptSchema = (alias: boolean) => ({
    tags,
    summary: alias ? "Get an order's receipt (PDF): the path the iOS SDK builds" : "Get an order's receipt (PDF)",
    description: alias
      ? 'The same as `GET /{project}/orders/{id}/receipt`, at the path the iOS SDK (SnabbleNetwork) builds itself.'
      : 'The receipt of a `final` order as `application/pdf`, made on the first request and kept (a final order never changes). ' +
        'Answers with an `ETag` (a matching `If-None-Match` is `304`) and `Cache-Control: ' + CacheControl + '`. ' +
        'An order that is not final has no receipt: `404 not_found`. ' +
        "A token with the permission `ordersRead` reads every receipt; a token with an `appUserID` claim the receipts of that app user's orders, " +
        'and `403` for every other id, whether such an order exists or not.',
    params: ReceiptParams,
    response: {
      200: { description: 'The receipt', content: { 'application/pdf': { schema: PdfBody } } },
      304: EmptyBody.describe("Not modified: the If-None-Match header names the receipt's ETag"),
      ...ErrorResponses,
    },
  });
  const handler = async (request: FastifyRequest<{ Params: z.infer<typeof ReceiptParams> }>, reply: FastifyReply) => {
    const reader = readerOf(request);
    const { project, id } = request.params;
    const ifNoneMatch = request.headers['if-none-match'];
    const first = await client.call(receipts.get, { project, id, ...reader, ...(ifNoneMatch && { ifNoneMatch: ifNoneMatch.slice(0, 2000) }) }, ReceiptCall);
    reply.header('etag', first.etag).header('cache-control', CacheControl);
    if (first.notModified) return reply.code(304).send('');
    reply
      .type('application/pdf')
      .header('content-length', first.size)
      .header('content-disposition', `inline; filename="receipt-${id.replace(/[^\w.-]/g, '_')}.pdf"`);
    const head = Buffer.from(first.data, 'base64');
    if (first.next === null) return reply.send(head);
    return reply.send(Readable.from(parts(client, { project, id, ...reader, etag: first.etag }, head, first.next)));
  };
  app.get('/:project/orders/:id/receipt', { config: anyToken, schema: receiptSchema(false) }, handler);
  app.get('/:project/orders/id/:id/receipt', { config: anyToken, schema: receiptSchema(true) }, handler);

  app.get(
    '/:project/users/:appUserID/orders',
    {
      config: anyToken,
      schema: {
        tags,
        summary: "An app user's purchase history",
        description:
          'The app user\'s `final` orders, newest first, in the shape the app SDKs decode: `{orders: [{project, id, date, shopID, shopName, price, links: {receipt}}]}`, ' +
          `with pagination (page from 0, perPage 1-1000, default ${HistoryPerPage}). ` +
          'A token whose `appUserID` claim is the path\'s reads it, and so does one with the permission `ordersRead`; another user\'s history is `403` and tells nothing.',
        params: HistoryParams,
        querystring: HistoryQuery,
        response: { 200: PurchaseHistory, ...ErrorResponses },
      },
    },
    async (request) => {
      const { project, appUserID } = request.params;
      const reader = readerOf(request);
      if (reader.appUserID !== undefined && reader.appUserID !== appUserID) throw AppError.forbidden("the token may read its own app user's history only");
      const { page, perPage } = request.query;
      const { orders, totalItems } = await client.call(receipts.history, { project, appUserID, offset: page * perPage, limit: perPage });
      return { orders, ...pageOf(request.url, page, perPage, totalItems) };
    },
  );
}

/** The receipt's bytes: the first part as it came, then each further part as the worker reads it. */
async function* parts(client: ServiceClient, scope: { project: string; id: string; appUserID?: string; etag: string }, head: Buffer, next: number): AsyncGenerator<Buffer> {
  yield head;
  let offset: number | null = next;
  while (offset !== null) {
    const part: ReceiptPart = await client.call(receipts.part, { ...scope, offset });
    yield Buffer.from(part.data, 'base64');
    offset = part.next;
  }
}
