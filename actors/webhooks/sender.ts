import { performance } from 'node:perf_hooks';
import type { DestinationPolicy } from '../../src/infra/destinations.js';
import { createOutgoingHttp } from '../../src/infra/outgoing-http.js';

/**
 * One POST of a webhook delivery, through the platform's one outgoing HTTP client
 * (src/infra/outgoing-http.ts): no redirect followed (a 3xx is an answer that is not 2xx), at most
 * the first few KB of the answer read, one timeout for the whole call, and a connection only to an
 * address the destination policy allows, checked when it connects.
 */
export interface SendResult {
  /** The HTTP status, or `timeout`, or `connection_failed`. */
  status: string;
  delivered: boolean;
  durationMs: number;
  /** The first bytes of the answer, or what went wrong. */
  response: string;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult>;
  close(): Promise<void>;
}

/** What is kept of an answer. */
export const KeptResponseBytes = 500;
/** What is read of an answer's body at most: the rest is not waited for (and the connection not kept). */
export const ReadBytes = 4096;

export function createSender(policy: DestinationPolicy, connectionsPerOrigin: number): Sender {
  const http = createOutgoingHttp({ policy, connectionsPerOrigin, maxBodyBytes: ReadBytes, resendUnanswered: true });
  return {
    async send(url, headers, body, timeoutMs) {
      const started = performance.now();
      const sent = await http.request(url, { method: 'POST', headers, body, timeoutMs });
      const result = (status: string, response: string | Buffer): SendResult => ({
        status,
        delivered: /^2\d\d$/.test(status),
        durationMs: Math.round(performance.now() - started),
        response: (typeof response === 'string' ? Buffer.from(response) : response).subarray(0, KeptResponseBytes).toString('utf8'),
      });
      if (sent.kind === 'answer') return result(String(sent.status), sent.body);
      return sent.kind === 'timeout' ? result('timeout', `no answer within ${timeoutMs} ms`) : result('connection_failed', sent.reason);
    },
    close: () => http.close(),
  };
}
