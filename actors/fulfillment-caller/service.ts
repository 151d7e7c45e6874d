import { causeOf, header, retryAfterMs, send, type HttpAnswer, type OutgoingHttp } from '../../src/infra/outgoing-http.js';
import type { FulfillmentError } from '../../subjects/checkout-process.js';
import type { CallOutcome, FulfillmentCall, FulfillmentLineItem } from '../../subjects/fulfillments.js';
import { isRecord, tryParseJson } from '../../subjects/formats/json.js';

/**
 * One call to the external fulfillment service, as the spec's table shows it: `POST /service` with
 * state `allocating` (reserve), `PUT /service` with `processing` (deliver) or `aborted` (release),
 * the fulfillment's own line items and `links.fulfillment.href`. The answer is classified:
 * connection errors, timeouts, 5xx and 429 are tried again (429 and 503 after their Retry-After);
 * an allocation's 400 is its result (allocationFailed, with the service's errors); any other 4xx
 * is final.
 */
export interface ServiceConfig {
  url: string;
  /** The client the calls go through (src/infra/outgoing-http.ts). */
  http: OutgoingHttp;
  token?: string;
  timeoutMs: number;
  /** Where clients reach the platform, to make links.fulfillment.href absolute; relative when unset. */
  publicBaseUrl?: string;
}

export type CallResult = { kind: 'answered'; outcome: CallOutcome } | { kind: 'retry'; reason: string; afterMs?: number };

/** What a call sends of a fulfillment. */
export interface CallRequest {
  /** The fulfillment's platform path (links.fulfillment.href). */
  href: string;
  shopID: string;
  lineItems: readonly FulfillmentLineItem[];
  serviceID?: string;
}

const Requests: Record<FulfillmentCall, { method: 'POST' | 'PUT'; state: string }> = {
  allocate: { method: 'POST', state: 'allocating' },
  deliver: { method: 'PUT', state: 'processing' },
  abort: { method: 'PUT', state: 'aborted' },
};

export async function callService(config: ServiceConfig, request: CallRequest, call: FulfillmentCall, idempotencyKey: string): Promise<CallResult> {
  const { method, state } = Requests[call];
  const body = {
    ...(request.serviceID ? { id: request.serviceID } : {}),
    state,
    shopID: request.shopID,
    lineItems: request.lineItems,
    links: { fulfillment: { href: `${config.publicBaseUrl ?? ''}${request.href}` } },
  };
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    'idempotency-key': idempotencyKey,
    ...(config.token ? { authorization: `Bearer ${config.token}` } : {}),
  };
  let response: HttpAnswer;
  try {
    response = await send(config.http, new URL(`${config.url}/service`), method, headers, JSON.stringify(body), config.timeoutMs);
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    return { kind: 'retry', reason: timedOut ? `no answer within ${config.timeoutMs} ms` : `the service cannot be reached (${causeOf(err)})` };
  }
  const { status, text } = response;
  if (status >= 500 || status === 429) {
    return { kind: 'retry', reason: `the service answered ${status}`, afterMs: retryAfterMs(header(response, 'retry-after')) };
  }
  const answer = parseObject(text);
  if (status >= 200 && status < 300) {
    const serviceID = typeof answer.id === 'string' && answer.id ? answer.id : lastSegment(header(response, 'location'));
    if (call === 'allocate') return answered({ kind: 'allocated', ...(serviceID ? { serviceID } : {}) });
    if (call === 'deliver') return answered({ kind: 'delivered', state: answer.state === 'processing' ? 'processing' : 'processed', ...(serviceID ? { serviceID } : {}) });
    return answered({ kind: 'aborted' });
  }
  const errors = errorsOf(answer.errors);
  if (call === 'allocate' && status === 400) return answered({ kind: 'allocationFailed', errors });
  return answered({
    kind: 'refused',
    status,
    errors: errors.length ? errors : [{ type: 'rejected', message: `the fulfillment service answered ${status}${text ? `: ${text.slice(0, 500)}` : ''}` }],
  });
}

function answered(outcome: CallOutcome): CallResult {
  return { kind: 'answered', outcome };
}

function parseObject(text: string): Record<string, unknown> {
  const value = tryParseJson(text);
  return isRecord(value) ? value : {};
}

/** The service's errors as the platform keeps them: every field it gave, a message always (apps need one). */
function errorsOf(value: unknown): FulfillmentError[] {
  if (!Array.isArray(value)) return [];
  return value.slice(0, 200).flatMap((e): FulfillmentError[] => {
    if (typeof e !== 'object' || e === null) return [];
    const { refersTo, type, itemsAvailable, message } = e as Record<string, unknown>;
    const kind = typeof type === 'string' && type ? type.slice(0, 200) : 'unknown';
    return [
      {
        type: kind,
        ...(typeof refersTo === 'string' ? { refersTo: refersTo.slice(0, 200) } : {}),
        ...(typeof itemsAvailable === 'number' && Number.isFinite(itemsAvailable) ? { itemsAvailable } : {}),
        message: typeof message === 'string' && message ? message.slice(0, 2000) : kind,
      },
    ];
  });
}

function lastSegment(location: string | null): string | undefined {
  const segment = location?.split('?')[0]?.split('/').filter(Boolean).at(-1);
  return segment ? decodeURIComponent(segment) : undefined;
}
