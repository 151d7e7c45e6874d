import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ErrorHeaders, ErrorReply, type Endpoint, type ReplyOf, type RequestOf } from '../../subjects/contract.js';
import { AppError } from '../errors.js';
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

export function createServiceClient(deps: { nc: NatsConnection; publisher: Publisher; timeoutMs: number }): ServiceClient {
  const { nc, publisher, timeoutMs } = deps;
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

  const failAll = (reason: AppError) => {
    for (const token of [...waiting.keys()]) settle(token)?.reject(reason);
  };
  void nc.closed().then(() => failAll(AppError.unavailable('the message broker is not reachable')));

  return {
    async call(endpoint, request, options) {
      const token = (sequence++).toString(36);
      const payload = endpoint.codec.encode(request);
      const msg = await new Promise<Msg>((resolve, reject) => {
        const timer = setTimeout(() => settle(token)?.reject(AppError.unavailable('the service did not answer in time')), options?.timeoutMs ?? timeoutMs);
        waiting.set(token, { resolve, reject, timer });
        publisher.publish(endpoint.subject, payload, { reply: `${inbox}.${token}` }, (err) =>
          settle(token)?.reject(AppError.unavailable('the message broker is not reachable', { cause: err })),
        );
      });
      return decodeReply(endpoint, msg);
    },
    maxPayload: () => nc.info?.max_payload ?? 1024 * 1024,
    close() {
      replies.unsubscribe();
      failAll(AppError.unavailable('the service is shutting down'));
    },
  };
}

export function decodeReply<E extends Endpoint>(endpoint: E, msg: Msg): ReplyOf<E> {
  const json = parseJson(msg, endpoint.subject);
  const code = msg.headers?.get(ErrorHeaders.code);
  if (code) {
    const body = ErrorReply.safeParse(json);
    const status = Number(code);
    if (!body.success || !Number.isInteger(status)) {
      throw AppError.internal({ cause: new Error(`malformed error reply on ${endpoint.subject}`) });
    }
    throw new AppError(status, body.data.type, body.data.message, body.data.details);
  }
  const reply = endpoint.reply.safeParse(json);
  if (!reply.success) {
    throw AppError.internal({ cause: new Error(`reply on ${endpoint.subject} breaks its contract`, { cause: reply.error }) });
  }
  return reply.data as ReplyOf<E>;
}

function parseJson(msg: Msg, subject: string): unknown {
  try {
    return msg.json();
  } catch (err) {
    throw AppError.internal({ cause: new Error(`reply on ${subject} is not JSON`, { cause: err }) });
  }
}
