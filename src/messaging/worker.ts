import { headers, nuid, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ErrorHeaders, type Endpoint, type ParsedRequestOf, type ReplyOf } from '../../subjects/contract.js';
import { WorkerPresence } from '../../subjects/system.js';
import { AppError, isAppError } from '../errors.js';
import type { Metrics } from '../infra/metrics.js';
import { isDatabaseUnreachable } from '../infra/postgres.js';
import { describeUnstorable, findUnstorableText } from '../../subjects/formats/json.js';
import type { Publisher } from './publisher.js';

/**
 * The worker side of the message path. Each endpoint is served on its subject in its domain's queue
 * group; every message is parsed with the endpoint's request schema (a worker never trusts a cast),
 * the handler runs, and the result or the error goes back to the requester.
 */
export type Handler<E extends Endpoint> = (request: ParsedRequestOf<E>) => Promise<ReplyOf<E> | JsonText<ReplyOf<E>>>;

/**
 * A reply the handler has already written as JSON text (of the endpoint's reply shape), sent as it
 * is: a large reply the handler had to serialize anyway (the signed checkout info, whose canonical
 * text is JSON) is not serialized a second time.
 */
export class JsonText<T = unknown> {
  declare readonly shape?: T;
  /** The JSON, as text or as its UTF-8 bytes. */
  constructor(readonly text: string | Uint8Array) {}
}

export interface Route {
  readonly endpoint: Endpoint;
  readonly handler: (request: unknown) => Promise<unknown>;
}

/** Pairs an endpoint with its handler; the types make the handler take and return the contract's shapes. */
export function route<E extends Endpoint>(endpoint: E, handler: Handler<E>): Route {
  return { endpoint, handler: handler as Route['handler'] };
}

export interface EndpointServer {
  /** Stops taking messages, then waits for the handlers that are running. */
  stop(): Promise<void>;
}

export interface EndpointDeps {
  nc: NatsConnection;
  publisher: Publisher;
  log: Logger;
  /** Counts the messages handled, by subject and result (`checkout_worker_messages_total`). */
  metrics?: Pick<Metrics, 'workerMessages'>;
  /**
   * How long a repeatable request that found the database unreachable may run again, from its first
   * try (config.ts `database.waitMs`); default 400 ms.
   */
  databaseWaitMs?: number;
}

export function serveEndpoints(deps: EndpointDeps, routes: readonly Route[]): EndpointServer {
  const { nc, publisher, log, metrics } = deps;
  const waitMs = deps.databaseWaitMs ?? 400;
  const running = new Set<Promise<void>>();

  // Its presence: the edges probe it while it holds their requests (src/messaging/worker-watch.ts).
  const id = nuid.next();
  const presence = [WorkerPresence.census, WorkerPresence.probe(id)].map((subject) =>
    nc.subscribe(subject, {
      callback: (_err, msg) => {
        if (msg.reply) publisher.publish(msg.reply, subject === WorkerPresence.census ? JSON.stringify({ id }) : '{}');
      },
    }),
  );

  const subscriptions: Subscription[] = routes.map((r) =>
    nc.subscribe(r.endpoint.subject, {
      queue: r.endpoint.queue,
      callback: (err, msg) => {
        if (err) {
          log.error({ err, subject: r.endpoint.subject }, 'subscription failed');
          return;
        }
        const work = answer(r, msg, publisher, log, metrics, waitMs).finally(() => running.delete(work));
        running.add(work);
      },
    }),
  );

  return {
    async stop() {
      await Promise.allSettled(subscriptions.map((s) => s.drain()));
      await Promise.allSettled([...running]);
      publisher.flush();
      // Present until every request it held is answered: an edge that found it gone would send them again.
      for (const s of presence) s.unsubscribe();
    },
  };
}

async function answer(r: Route, msg: Msg, publisher: Publisher, log: Logger, metrics: EndpointDeps['metrics'], waitMs: number): Promise<void> {
  const subject = r.endpoint.subject;
  if (!msg.reply) {
    log.warn({ subject }, 'request without a reply subject dropped');
    return;
  }
  let payload: string | Uint8Array;
  let failure: AppError | undefined;
  try {
    const result = await handle(r, parseRequest(r.endpoint, msg), waitMs);
    payload = result instanceof JsonText ? result.text : JSON.stringify(result ?? null);
  } catch (err) {
    failure = toFailure(err);
    if (failure.status === 503 && !isAppError(err)) log.warn({ err, subject }, 'request failed: the database is unreachable');
    else if (failure.status >= 500) log.error({ err, subject }, 'request handler failed');
    payload = JSON.stringify(failure.body());
  }
  metrics?.workerMessages.inc({ subject, result: !failure ? 'ok' : failure.status < 500 ? 'rejected' : 'failed' });
  const reply = msg.reply;
  const onError = (err: unknown) => log.warn({ err, subject }, 'reply could not be sent');
  if (failure) {
    const h = headers();
    h.set(ErrorHeaders.code, String(failure.status));
    // Header values cannot hold line breaks; the body keeps the full message.
    h.set(ErrorHeaders.message, failure.message.replace(/[\r\n]+/g, ' '));
    publisher.publish(reply, payload, { headers: h }, onError);
  } else {
    publisher.publish(reply, payload, undefined, onError);
  }
}

/**
 * Runs the handler. A repeatable request (subjects/contract.ts) that found the database unreachable
 * runs again after a pause (0.1 s, doubling up to 1 s) while `waitMs` has not passed since its
 * first try: a connection cut by a restart or a failover (the query was sent, the answer lost), or
 * a primary that took longer than the pool's wait to come back, costs the client a pause, not an
 * error. Handling it twice is handling it once: the version compare and the unique keys find what
 * the first try wrote. Any other request is not run again here: its statements waited for a primary
 * in the pool (postgres.ts), and its transactions ran again when they had not committed
 * (inTransaction); what is left may have been written, and only the client knows whether to ask again.
 */
async function handle(r: Route, request: unknown, waitMs: number): Promise<unknown> {
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await r.handler(request);
    } catch (err) {
      const pause = Math.min(100 * 2 ** attempt, 1000);
      if (!isDatabaseUnreachable(err) || !r.endpoint.repeatable(request) || performance.now() - started + pause > waitMs) throw err;
      await sleep(pause);
    }
  }
}

/** An outage is 503 (the client may try again), anything else unexpected a 500 (a bug). */
function toFailure(err: unknown): AppError {
  if (isAppError(err)) return err;
  if (isDatabaseUnreachable(err)) return AppError.unavailable('the database is not reachable; try again', { cause: err });
  return AppError.internal({ cause: err });
}

function parseRequest(endpoint: Endpoint, msg: Msg): unknown {
  let input: unknown;
  try {
    input = endpoint.codec.decode(msg.data);
  } catch {
    throw AppError.badRequest(`request on ${endpoint.subject} cannot be read`);
  }
  const parsed = endpoint.request.safeParse(input);
  if (!parsed.success) throw AppError.validation(parsed.error, 'request');
  const unstorable = endpoint.codec.mayBeUnstorable?.(msg.data) === false ? undefined : findUnstorableText(parsed.data);
  if (unstorable) throw AppError.badRequest(describeUnstorable(unstorable), [{ code: 'unstorable_text', path: unstorable.path.join('.'), message: unstorable.reason }]);
  return parsed.data;
}
