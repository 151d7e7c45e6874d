import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { ShopId } from '../../../subjects/shops.js';
import type { EventFeed } from '../../messaging/event-feed.js';
import { ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const HeartbeatMs = 25_000;
const utf8 = new TextDecoder();

/**
 * The checkout process events of a project (or of one of its shops) as server-sent events, for a
 * supervisor's screen that shows what waits for them as it happens (the portal's Supervision). Each
 * event is `event: checkout` with the CheckoutProcessEvent (subjects/events.ts) as its data; `ready`
 * comes once the events are followed, so a client that loads the current list after `ready` misses
 * nothing. EventSource reconnects by itself; after a reconnect `ready` comes again.
 */
export function portalEventRoutes(app: ZodApp, feed: EventFeed): void {
  const open = new Set<() => void>();
  // Streams never end by themselves: closing the edge ends them, or it would wait for every browser.
  app.addHook('preClose', (done) => {
    for (const end of [...open]) end();
    done();
  });

  app.get(
    '/:project/checkout/events',
    {
      config: { auth: { permissions: ['supervisor'] } },
      schema: {
        tags: ['checkout'],
        summary: 'Follow the checkout processes of a project or shop as server-sent events (text/event-stream)',
        description:
          '`event: ready` once following, then `event: checkout` with a CheckoutProcessEvent per change of a process (see /asyncapi.json); a comment every 25 s keeps the connection open. ' +
          'An event may come twice: its `version` orders them.',
        params: ProjectParams,
        querystring: z.object({ shop: ShopId.optional().describe('Only the processes of this shop') }),
        response: { 200: z.string().describe('text/event-stream'), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const { shop } = request.query;
      const stream = new PassThrough();
      const shopMark = shop === undefined ? undefined : `"shopID":${JSON.stringify(shop)}`;
      const stop = await feed.follow(`events.${project}.checkout.*.*`, (payload) => {
        const text = utf8.decode(payload);
        // The payload names its shop once (process.shopID): a text search spares parsing every event.
        if (shopMark && !text.includes(shopMark)) return;
        stream.write(`event: checkout\ndata: ${text.replace(/\n/g, '\ndata: ')}\n\n`);
      });
      const heartbeat = setInterval(() => stream.write(': ping\n\n'), HeartbeatMs);
      const end = () => {
        if (!open.delete(end)) return;
        clearInterval(heartbeat);
        stop();
        stream.end();
      };
      open.add(end);
      request.raw.once('close', end);
      stream.write('retry: 2000\nevent: ready\ndata: {}\n\n');
      return reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-store').header('x-accel-buffering', 'no').send(stream as never);
    },
  );
}
