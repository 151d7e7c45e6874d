import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ErrorHeaders, ErrorReply, type Endpoint, type ReplyOf, type RequestOf } from '../../subjects/contract.js';
import { performance } from 'node:perf_hooks';
import { AppError } from '../errors.js';
import type { Metrics, NatsOutcome } from '../infra/metrics.js';
import type { Publisher } from './publisher.js';
import { watchWorkers } from './worker-watch.js';

/**
 * The edge side of the message path: send a request on an endpoint's subject and turn what comes
 * back into the typed reply, the AppError the worker sent, or a 503 when no worker answers in time.
 *
 * Replies come to one wildcard inbox subscription and are matched to their request by the last
 * subject token: one subscription and one timer per request, nothing else allocated per call.
 *
 * The loss of a NATS node is hidden where that is safe. A request nobody listens to (no
 * responders: nothing was delivered) is sent again: on a cluster up to its timeout, while workers
 * of a lost node subscribe again through another; on a lone server for 2 s. A request the endpoint
 * declares repeatable (a read, a PUT of a client-chosen id; subjects/contract.ts) is sent again
 * when it may have been lost with a node: when this connection dropped while it was under way
 * (once connected again), or when the cluster lost a node and it is still unanswered a second
 * later. A repeatable request is also sent again when a worker died while it was under way
 * (worker-watch.ts: the edge learns it within a quarter of a second). Any other request keeps
 * waiting for its answer or its timeout (503): only the client knows whether it may be repeated.
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
  /**
   * Whether the connection to NATS is down right now (it reconnects by itself). Calls then answer
   * 503 at once, unless the server named other nodes of a cluster: then they wait (up to their
   * timeout) for the connection to move to one of them.
   */
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

/** A request until it is answered; each attempt has its own reply token. */
interface Call {
  endpoint: Endpoint;
  payload: string | Uint8Array;
  /** The endpoint says that handling this request twice is handling it once (subjects/contract.ts). */
  repeatable: boolean;
  timeoutMs: number;
  resolve(msg: Msg): void;
  reject(err: AppError): void;
  /** `sent`: an attempt is under way (its token in `token`); `parked`: waiting for the connection; `pausing`: for its next attempt. */
  state: 'sent' | 'parked' | 'pausing';
  token: string;
  /** When the attempt under way was sent. */
  sentAt: number;
  /** The timeout of the attempt or of the wait, or the end of the pause. */
  timer?: NodeJS.Timeout;
  firstSentAt: number;
  /** Attempts sent again after a node loss, and after no responders. */
  resent: number;
  unheard: number;
}

/** How long a request nobody listens to is sent again on a lone server (on a cluster: up to its timeout, while workers of a lost node subscribe through another). */
const NoResponderGraceMs = 2000;
/** A repeatable request still unanswered this long after the cluster lost a node is taken as lost with it. */
const LostAfterMs = 1000;
/** How many times a call is sent again after node losses (then its timeout decides). */
const MaxResends = 3;

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
  /** Calls with an attempt under way, by its reply token. */
  const sent = new Map<string, Call>();
  /** Every call not answered yet. */
  const open = new Set<Call>();
  let sequence = 0;
  let disconnected = false;
  // How many nodes the connected server names (none: a lone server). While there are others, a
  // dropped connection moves to one of them at once: worth waiting for.
  let nodes = nc.info?.connect_urls?.length ?? 0;

  /** Ends the attempt under way (a reply to it is ignored from now on), not the call. */
  const stopAttempt = (call: Call) => {
    if (call.state === 'sent') sent.delete(call.token);
    clearTimeout(call.timer);
  };
  const fail = (call: Call, err: AppError) => {
    stopAttempt(call);
    open.delete(call);
    call.reject(err);
  };
  const unreachable = (cause?: unknown) => AppError.unavailable('the message broker is not reachable', cause === undefined ? undefined : { cause });

  const park = (call: Call) => {
    call.state = 'parked';
    call.timer = setTimeout(() => fail(call, unreachable()), call.timeoutMs);
  };
  const attempt = (call: Call) => {
    if (disconnected) {
      // A lone server is being restarted: 503 at once. A cluster's: the client is moving to another node.
      if (nodes <= 1) return fail(call, unreachable());
      return park(call);
    }
    const token = (sequence++).toString(36);
    call.state = 'sent';
    call.token = token;
    call.sentAt = Date.now();
    sent.set(token, call);
    call.timer = setTimeout(() => fail(call, AppError.unavailable('the service did not answer in time')), call.timeoutMs);
    publisher.publish(call.endpoint.subject, call.payload, { reply: `${inbox}.${token}` }, (err) => {
      if (call.token === token && open.has(call)) fail(call, unreachable(err));
    });
  };
  const sendAgain = (call: Call) => {
    stopAttempt(call);
    call.resent++;
    attempt(call);
  };

  const replies: Subscription = nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (err) return;
      const call = sent.get(msg.subject.slice(inbox.length + 1));
      if (!call) return; // a reply after its request timed out, or to an attempt sent again
      stopAttempt(call);
      // The server answers a request nobody subscribes to with an empty 503 status message: nothing
      // was delivered, so any request may go again.
      if (msg.data.length === 0 && msg.headers?.code === 503) {
        const pause = 100 * 2 ** Math.min(call.unheard, 2);
        // A lone server: no worker runs, say so soon. A cluster: workers are moving to another node.
        const grace = nodes > 1 ? call.timeoutMs : Math.min(NoResponderGraceMs, call.timeoutMs);
        if (Date.now() - call.firstSentAt + pause >= grace) {
          return fail(call, AppError.unavailable('no worker is available to handle this request'));
        }
        call.state = 'pausing';
        call.timer = setTimeout(() => attempt(call), pause);
        call.unheard++;
        return;
      }
      open.delete(call);
      call.resolve(msg);
    },
  });

  const maxPayload = () => nc.info?.max_payload ?? 1024 * 1024;

  const failAll = (reason: AppError) => {
    for (const call of [...open]) fail(call, reason);
  };
  void nc.closed().then(() => failAll(unreachable()));

  /** The cluster lost a node: repeatable calls under way may have been lost with it; those still unanswered a moment later go again. */
  const nodeLost = () => {
    const suspects = [...sent.values()].filter((c) => c.repeatable && c.resent < MaxResends).map((c) => ({ call: c, token: c.token }));
    if (suspects.length === 0) return;
    setTimeout(() => {
      for (const { call, token } of suspects) if (call.state === 'sent' && call.token === token && open.has(call)) sendAgain(call);
    }, LostAfterMs).unref();
  };
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        disconnected = true;
        // Replies on their way to the lost server are lost with it: repeatable calls go again once
        // connected; the others wait for their answer (a worker's reply may still come) or their timeout.
        for (const call of [...sent.values()]) {
          if (!call.repeatable || call.resent >= MaxResends) continue;
          stopAttempt(call);
          call.resent++;
          park(call);
        }
      } else if (status.type === 'reconnect') {
        disconnected = false;
        for (const call of [...open]) {
          if (call.state !== 'parked') continue;
          clearTimeout(call.timer);
          attempt(call);
        }
      } else if (status.type === 'update') {
        // Each INFO of the server (at connect, and when the cluster changes) names the nodes it knows.
        const now = nc.info?.connect_urls?.length ?? 0;
        if (now < nodes) nodeLost();
        nodes = now;
      }
    }
  })();

  // A worker that died with requests in hand: the repeatable ones go again at once (another worker
  // answers within a second of the death), the others wait for their answer or their timeout.
  const watch = watchWorkers({
    nc,
    waiting(olderThanMs) {
      const before = Date.now() - olderThanMs;
      for (const call of sent.values()) if (call.sentAt < before) return true;
      return false;
    },
    onLost() {
      for (const call of [...sent.values()]) if (call.repeatable && call.resent < MaxResends) sendAgain(call);
    },
  });

  const send = (endpoint: Endpoint, request: unknown, options: CallOptions | undefined) => {
    const payload = endpoint.codec.encode(request);
    // A request the broker cannot carry is the client's too-large input, not an outage.
    const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
    if (size > maxPayload()) return Promise.reject(new AppError(413, 'payload_too_large', 'the request is too large to be handled'));
    const reply = new Promise<Msg>((resolve, reject) => {
      const call: Call = {
        endpoint,
        payload,
        repeatable: endpoint.repeatable(request),
        timeoutMs: options?.timeoutMs ?? timeoutMs,
        resolve,
        reject,
        state: 'sent',
        token: '',
        sentAt: 0,
        firstSentAt: Date.now(),
        resent: 0,
        unheard: 0,
      };
      open.add(call);
      attempt(call);
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
      watch.stop();
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
