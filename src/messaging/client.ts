import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ErrorHeaders, ErrorReply, type Endpoint, type ReplyOf, type RequestOf } from '../../subjects/contract.js';
import { performance } from 'node:perf_hooks';
import { AppError } from '../errors.js';
import type { Metrics, NatsOutcome } from '../infra/metrics.js';
import type { Publisher } from './publisher.js';

/**
 * The edge side of the message path: send a request on an endpoint's subject and turn what comes
 * back into the typed reply, the AppError the worker sent, or a 503 when no worker answers in time.
 *
 * Replies come to one wildcard inbox subscription and are matched to their request by the last
 * subject token: one subscription and one timer per request, nothing else allocated per call.
 */
export interface ServiceClient {
  call<E extends Endpoint>(endpoint: E, request: RequestOf<E>, options?: CallOptions): Promise<ReplyOf<E>>;
  /**
   * The reply's JSON as the worker sent it, for a route that answers it unchanged: a large reply
   * (a signed checkout info) is then neither parsed, checked nor stringified again at the edge.
   * Errors are thrown as with `call`. The worker built the reply with its endpoint's type; tests
   * check it against the endpoint's schema.
   */
  callForJson<E extends Endpoint>(endpoint: E, request: RequestOf<E>, options?: CallOptions): Promise<Uint8Array>;
  /** Whether the connection to NATS is down right now (it reconnects by itself); calls then answer 503 at once. */
  disconnected(): boolean;
  /** The largest message the connected NATS server takes, in bytes. */
  maxPayload(): number;
  /** Stops listening for replies; requests still waiting fail with 503. */
  close(): void;
}

export interface CallOptions {
  /** How long to wait for a worker. Defaults to the client's timeout (`REQUEST_TIMEOUT_MS`). */
  timeoutMs?: number;
}

interface Waiting {
  resolve(msg: Msg): void;
  reject(err: AppError): void;
  timer: NodeJS.Timeout;
}

export interface ServiceClientDeps {
  nc: NatsConnection;
  publisher: Publisher;
  timeoutMs: number;
  /** Observes each request's latency by subject and outcome (`checkout_nats_request_duration_seconds`). */
  metrics?: Pick<Metrics, 'natsRequests'>;
}

export function createServiceClient(deps: ServiceClientDeps): ServiceClient {
  const { nc, publisher, timeoutMs, metrics } = deps;
  const inbox = createInbox();
  const waiting = new Map<string, Waiting>();
  let sequence = 0;

  const settle = (token: string): Waiting | undefined => {
    const entry = waiting.get(token);
    if (entry) {
      waiting.delete(token);
      clearTimeout(entry.timer);
    }
    return entry;
  };

  const replies: Subscription = nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (err) return;
      const entry = settle(msg.subject.slice(inbox.length + 1));
      if (!entry) return; // a reply after its request timed out
      // The server answers a request nobody subscribes to with an empty 503 status message.
      if (msg.data.length === 0 && msg.headers?.code === 503) entry.reject(AppError.unavailable('no worker is available to handle this request'));
      else entry.resolve(msg);
    },
  });

  const maxPayload = () => nc.info?.max_payload ?? 1024 * 1024;

  const failAll = (reason: AppError) => {
    for (const token of [...waiting.keys()]) settle(token)?.reject(reason);
  };
  void nc.closed().then(() => failAll(AppError.unavailable('the message broker is not reachable')));
  // While the connection is down (it reconnects by itself) a request is answered 503 at once
  // instead of waiting out its timeout in the client's buffer.
  let disconnected = false;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') disconnected = true;
      else if (status.type === 'reconnect') disconnected = false;
    }
  })();

  const send = (endpoint: Endpoint, request: unknown, options: CallOptions | undefined) => {
    const payload = endpoint.codec.encode(request);
    // A request the broker cannot carry is the client's too-large input, not an outage.
    const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
    if (size > maxPayload()) return Promise.reject(new AppError(413, 'payload_too_large', 'the request is too large to be handled'));
    if (disconnected) return Promise.reject(AppError.unavailable('the message broker is not reachable'));
    const token = (sequence++).toString(36);
    const reply = new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => settle(token)?.reject(AppError.unavailable('the service did not answer in time')), options?.timeoutMs ?? timeoutMs);
      waiting.set(token, { resolve, reject, timer });
      publisher.publish(endpoint.subject, payload, { reply: `${inbox}.${token}` }, (err) =>
        settle(token)?.reject(AppError.unavailable('the message broker is not reachable', { cause: err })),
      );
    });
    return metrics ? observed(metrics, endpoint.subject, reply) : reply;
  };

  return {
    async call(endpoint, request, options) {
      return decodeReply(endpoint, await send(endpoint, request, options));
    },
    async callForJson(endpoint, request, options) {
      const msg = await send(endpoint, request, options);
      throwErrorReply(endpoint, msg);
      return msg.data;
    },
    disconnected: () => disconnected,
    maxPayload,
    close() {
      replies.unsubscribe();
      failAll(AppError.unavailable('the service is shutting down'));
    },
  };
}

/** A request's latency by subject and outcome: a reply, an error reply, or none (every rejection is a 503). */
function observed(metrics: Pick<Metrics, 'natsRequests'>, subject: string, reply: Promise<Msg>): Promise<Msg> {
  const started = performance.now();
  const observe = (outcome: NatsOutcome) => metrics.natsRequests.observe({ subject, outcome }, (performance.now() - started) / 1000);
  return reply.then(
    (msg) => {
      observe(msg.headers?.get(ErrorHeaders.code) ? 'error' : 'ok');
      return msg;
    },
    (err: unknown) => {
      observe('unavailable');
      throw err;
    },
  );
}

export function decodeReply<E extends Endpoint>(endpoint: E, msg: Msg): ReplyOf<E> {
  throwErrorReply(endpoint, msg);
  const reply = endpoint.reply.safeParse(parseJson(msg, endpoint.subject));
  if (!reply.success) {
    throw AppError.internal({ cause: new Error(`reply on ${endpoint.subject} breaks its contract`, { cause: reply.error }) });
  }
  return reply.data as ReplyOf<E>;
}

/** An error reply (marked by its headers) becomes the AppError the worker threw. */
function throwErrorReply(endpoint: Endpoint, msg: Msg): void {
  const code = msg.headers?.get(ErrorHeaders.code);
  if (!code) return;
  const body = ErrorReply.safeParse(parseJson(msg, endpoint.subject));
  const status = Number(code);
  if (!body.success || !Number.isInteger(status)) {
    throw AppError.internal({ cause: new Error(`malformed error reply on ${endpoint.subject}`) });
  }
  throw new AppError(status, body.data.type, body.data.message, body.data.details);
}

function parseJson(msg: Msg, subject: string): unknown {
  try {
    return msg.json();
  } catch (err) {
    throw AppError.internal({ cause: new Error(`reply on ${subject} is not JSON`, { cause: err }) });
  }
}
