import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { ShopId } from '../../../subjects/shops.js';
import type { EventFeed } from '../../messaging/event-feed.js';
import { liveStreamSlots, type LiveStreamLimits } from '../live-streams.js';
import { ErrorResponses, ProjectParams, type ZodApp } from '../schemas.js';

const HeartbeatMs = 25_000;
const utf8 = new TextDecoder();

/**
 * The checkout process events of a project (or of one of its shops) as server-sent events, for a
 * supervisor's screen that shows what waits for them as it happens (the portal's Supervision). Each
 * event is `event: checkout` with the CheckoutProcessEvent (subjects/events.ts) as its data; `ready`
 * comes once the events are followed, so a client that loads the current list after `ready` misses
 * nothing. EventSource reconnects by itself; after a reconnect `ready` comes again.
 *
 * Streams are bounded (live-streams.ts): so many per token and per project on each edge process,
 * and a client that stops reading is dropped once `bufferBytes` wait for it here (in the stream, the
 * response and the socket's buffer): the edge's memory does not grow with a slow reader.
 */
export function portalEventRoutes(app: ZodApp, feed: EventFeed, limits: LiveStreamLimits): void {
  const open = new Set<() => void>();
  const slots = liveStreamSlots(limits);
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
          'An event may come twice: its `version` orders them. ' +
          'A token holds at most LIVE_STREAMS_PER_TOKEN streams at once (5) and a project LIVE_STREAMS_PER_PROJECT (50) on each edge: past either, 429 `too_many_requests` with Retry-After. ' +
          'A client that stops reading is disconnected once LIVE_STREAM_BUFFER_BYTES (1 MiB) wait for it; EventSource connects again.',
        params: ProjectParams,
        querystring: z.object({ shop: ShopId.optional().describe('Only the processes of this shop') }),
        response: { 200: z.string().describe('text/event-stream'), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const { shop } = request.query;
      const release = slots.take(request.principal!);
      const stream = new PassThrough();
      const shopMark = shop === undefined ? undefined : `"shopID":${JSON.stringify(shop)}`;
      let stop: (() => void) | undefined;
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        open.delete(end);
        clearInterval(heartbeat);
        stop?.();
        release();
        stream.end();
      };
      /**
       * Writes unless the client lets too much wait: what the stream holds, and what the response
       * and its socket hold once the stream stops flowing into them (write() answering false only
       * says that some waits, and the stream would keep every byte).
       */
      const write = (text: string) => {
        if (ended) return;
        if (stream.writableLength + stream.readableLength + reply.raw.writableLength > limits.bufferBytes) {
          request.log.warn({ project, bytes: limits.bufferBytes }, 'a live event stream whose client stopped reading was dropped');
          end();
          stream.destroy();
          reply.raw.destroy();
          return;
        }
        stream.write(text);
      };
      const heartbeat = setInterval(() => write(': ping\n\n'), HeartbeatMs);
      try {
        stop = await feed.follow(`events.${project}.checkout.*.*`, (payload) => {
          const text = utf8.decode(payload);
          // The payload names its shop once (process.shopID): a text search spares parsing every event.
          if (shopMark && !text.includes(shopMark)) return;
          write(`event: checkout\ndata: ${text.replace(/\n/g, '\ndata: ')}\n\n`);
        });
      } catch (err) {
        end();
        throw err;
      }
      if (ended) stop();
      else open.add(end);
      // The response closes when its connection does; one that went while the feed was followed ends now.
      reply.raw.once('close', end);
      if (request.raw.socket.destroyed) end();
      stream.write('retry: 2000\nevent: ready\ndata: {}\n\n');
      return reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-store').header('x-accel-buffering', 'no').send(stream as never);
    },
  );
}
