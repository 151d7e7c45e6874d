import { performance } from 'node:perf_hooks';
import { Socket } from 'node:net';
import { Agent, buildConnector, errors, type Dispatcher } from 'undici';
import { checkedLookup, urlProblem, type DestinationPolicy } from './destinations.js';
import { unfoldAnswers } from './obs-fold.js';

/**
 * Every call the platform makes to an outside service (webhook receivers, a cloud TSE, the
 * fulfillment service) goes through one of these: undici (Node's own HTTP engine) over kept-alive
 * connections, at most `connectionsPerOrigin` to one origin, TLS sessions resumed on new
 * connections, and connections made only to addresses the destination policy allows, checked when
 * each connection is made (its `lookup`; every address of a name is tried in turn until one
 * answers). Per call: one deadline for the whole call, answer included (`timeout`); no redirect
 * followed (a 3xx is an answer like any other); at most `maxBodyBytes` of the answer's body read
 * (the rest is not waited for, and that connection is not used again). A folded header line in an
 * answer is read as spaces, as RFC 9112 asks (./obs-fold.ts: undici's parser refuses them).
 *
 * With `resendUnanswered` (webhooks), a request whose kept connection ended before its answer came
 * (most likely closed by the receiver as the request went out: its idle timeout) goes once more, on
 * a new connection, within the same deadline; a receiver that did take it gets it twice, as at
 * least once allows. Other callers' jobs try again on their own schedule.
 */
export interface OutgoingOptions {
  policy: DestinationPolicy;
  /** Connections to one origin (scheme, host, port) at most; more calls to it wait for one. */
  connectionsPerOrigin: number;
  /** What is read of an answer's body at most. */
  maxBodyBytes: number;
  /** Sends a request once more on a new connection when its kept connection ended before its answer (default false). */
  resendUnanswered?: boolean;
}

export interface OutgoingRequest {
  /** No HEAD: ./obs-fold.ts frames answers without their request, and an answer to HEAD has no body whatever its Content-Length says. */
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** The whole call, answer included. */
  timeoutMs: number;
}

export type OutgoingResult =
  | { kind: 'answer'; status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }
  | { kind: 'timeout' }
  | { kind: 'failed'; reason: string };

/**
 * How long an idle connection is kept: under the 5 s after which common servers (Node's among
 * them) close theirs, so that a request rarely meets a connection the receiver is closing. A
 * receiver's `Keep-Alive: timeout=N` shortens it (undici keeps N - 1 s).
 */
const IdleMs = 4000;

export interface OutgoingHttp {
  request(url: string | URL, request: OutgoingRequest): Promise<OutgoingResult>;
  close(): Promise<void>;
}

export function createOutgoingHttp(options: OutgoingOptions): OutgoingHttp {
  const { policy } = options;
  const agent = new Agent({
    connections: options.connectionsPerOrigin,
    keepAliveTimeout: IdleMs,
    keepAliveMaxTimeout: IdleMs,
    keepAliveTimeoutThreshold: 1000,
    // The call's own deadline (an AbortSignal) ends it; undici's timers must not end it sooner.
    headersTimeout: 0,
    bodyTimeout: 0,
    // One connector for every connection of the client, so one TLS session cache: undici's default
    // is a connector (and a cache) per connection pool client, and a new client of an origin began
    // with none, so a quiet receiver's next connection paid a full handshake (test/webhook-sender.test.ts).
    connect: unfolding(buildConnector({ lookup: checkedLookup(policy), autoSelectFamily: true, maxCachedSessions: 1000 })),
  });
  /** Each URL parsed and judged once (the policy is the client's for its life). */
  const targets = new Map<string, { origin: string; path: string } | { refused: string }>();
  const targetOf = (url: string | URL) => {
    const key = String(url);
    let target = targets.get(key);
    if (!target) {
      const parsed = typeof url === 'string' ? new URL(url) : url;
      const refused = urlProblem(parsed, policy);
      target = refused ? { refused } : { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (targets.size >= 10_000) targets.clear();
      targets.set(key, target);
    }
    return target;
  };

  /**
   * One try of a request: undici's dispatch with a handler of our own, which keeps the status, the
   * headers and the body's first bytes and nothing else (no stream, no promise per chunk).
   * `unanswered`: a kept connection ended before an answer's head came.
   */
  const once = (target: { origin: string; path: string }, request: OutgoingRequest, deadline: number) =>
    new Promise<OutgoingResult & { unanswered?: boolean }>((resolve) => {
      let controller: Dispatcher.DispatchController | undefined;
      let status = 0;
      let headers: Record<string, string | string[] | undefined> = {};
      const kept: Buffer[] = [];
      let size = 0;
      let settled = false;
      const answer = (): OutgoingResult => ({ kind: 'answer', status, headers, body: kept.length === 1 ? kept[0]! : Buffer.concat(kept) });
      const finish = (result: OutgoingResult & { unanswered?: boolean }, stop?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
        if (stop && controller && !controller.aborted) controller.abort(stop);
      };
      const timer = setTimeout(() => finish({ kind: 'timeout' }, new Error('the call\'s deadline passed')), Math.max(0, deadline - performance.now()));
      agent.dispatch(
        { origin: target.origin, path: target.path, method: request.method, headers: request.headers, body: request.body ?? null },
        {
          onRequestStart(c) {
            controller = c;
            if (settled) c.abort(new Error('the call\'s deadline passed'));
          },
          onResponseStart(_c, statusCode, responseHeaders) {
            if (statusCode < 200) return; // informational (100 Continue, 103 Early Hints): the answer follows
            status = statusCode;
            headers = responseHeaders;
          },
          onResponseData(_c, chunk) {
            const part = chunk.subarray(0, options.maxBodyBytes - size);
            kept.push(part);
            size += part.length;
            // Enough read: the rest is not waited for, and the connection goes with it.
            if (size >= options.maxBodyBytes) finish(answer(), new Error('the first bytes of the answer are read'));
          },
          onResponseEnd() {
            finish(answer());
          },
          onResponseError(_c, err) {
            // An answer whose body was cut short is the answer its status says, as far as it came.
            if (status >= 200) return finish(answer());
            // Kept: the connection had read before (an answer to an earlier request; on TLS, its handshake too).
            const kept = err instanceof errors.SocketError && (err.socket?.bytesRead ?? 0) > 0;
            finish({ kind: 'failed', reason: reasonOf(err), unanswered: kept });
          },
        },
      );
    });

  return {
    async request(url, request) {
      const target = targetOf(url);
      if ('refused' in target) return { kind: 'failed', reason: `refused destination: ${target.refused}` };
      const deadline = performance.now() + request.timeoutMs;
      const first = await once(target, request, deadline);
      if (!options.resendUnanswered || first.kind !== 'failed' || !first.unanswered || performance.now() >= deadline) return strip(first);
      return strip(await once(target, request, deadline));
    },
    close: () => agent.close(),
  };
}

/**
 * The connector's sockets, their answers unfolded from their first byte on: undici's connector
 * returns the socket it makes (not in its types; the callback's socket is the fallback, before
 * undici writes a request on it).
 */
function unfolding(connector: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    const made: unknown = connector(options, (...args) => {
      if (args[1]) unfoldAnswers(args[1]);
      callback(...args);
    });
    if (made instanceof Socket) unfoldAnswers(made);
  };
}

function strip(result: OutgoingResult & { unanswered?: boolean }): OutgoingResult {
  if (result.kind !== 'failed') return result;
  return { kind: 'failed', reason: result.reason };
}

/** What went wrong, in words that say where (a refused destination, a certificate, a reset). */
function reasonOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
  const own = err instanceof Error ? err.message : String(err);
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? (err as NodeJS.ErrnoException).code;
  const text = cause && !own.includes(cause.message) ? `${own}: ${cause.message}` : own;
  return code && !text.includes(code) ? `${text} (${code})` : text;
}

/** An answer read whole (up to the client's maxBodyBytes) as text, for callers that parse it. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A call whose answer the caller classifies itself (the fulfillment service, fiskaly): the answer,
 * or an error: `TimeoutError` when the deadline passed, else why the call failed.
 */
export async function send(http: OutgoingHttp, url: URL, method: OutgoingRequest['method'], headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<HttpAnswer> {
  const result = await http.request(url, { method, headers, body, timeoutMs });
  if (result.kind === 'answer') return { status: result.status, headers: result.headers, text: result.body.toString('utf8') };
  if (result.kind === 'timeout') throw Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' });
  throw new Error(result.reason);
}

export function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
}

/** A header of an answer, the first when it came more than once. */
export function header(answer: { headers: Record<string, string | string[] | undefined> }, name: string): string | null {
  const value = answer.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** Retry-After in seconds or as an HTTP date, as milliseconds (at most a day). */
export function retryAfterMs(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 86_400_000) : undefined;
}
