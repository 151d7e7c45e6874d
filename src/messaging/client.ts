import { errors, TimeoutError, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { ErrorHeaders, ErrorReply, type Endpoint, type ReplyOf, type RequestOf } from '../../subjects/contract.js';
import { AppError } from '../errors.js';

/**
 * The edge side of the message path: send a request on an endpoint's subject and turn what comes
 * back into the typed reply, an AppError the worker sent, or a 503 when no worker answers in time.
 */
export interface ServiceClient {
  call<E extends Endpoint>(endpoint: E, request: RequestOf<E>, options?: CallOptions): Promise<ReplyOf<E>>;
}

export interface CallOptions {
  /** How long to wait for a worker. Defaults to the client's timeout (`REQUEST_TIMEOUT_MS`). */
  timeoutMs?: number;
}

export function createServiceClient(deps: { nc: NatsConnection; timeoutMs: number }): ServiceClient {
  const { nc, timeoutMs } = deps;
  return {
    async call(endpoint, request, options) {
      let msg: Msg;
      try {
        msg = await nc.request(endpoint.subject, JSON.stringify(request), { timeout: options?.timeoutMs ?? timeoutMs });
      } catch (err) {
        throw unavailable(err, endpoint.subject);
      }
      return decodeReply(endpoint, msg);
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

function unavailable(err: unknown, subject: string): AppError {
  if (err instanceof errors.RequestError && err.isNoResponders()) {
    return AppError.unavailable('no worker is available to handle this request', { cause: err });
  }
  if (err instanceof TimeoutError) {
    return AppError.unavailable('the service did not answer in time', { cause: err });
  }
  // A closed, draining or reconnecting connection: the broker is out of reach for now.
  return AppError.unavailable('the message broker is not reachable', { cause: new Error(subject, { cause: err }) });
}
