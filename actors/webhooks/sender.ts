import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { checkedLookup, urlProblem, type DestinationPolicy } from '../../src/infra/destinations.js';

/**
 * One POST of a webhook delivery: no redirect followed (a 3xx is an answer that is not 2xx), at
 * most the first few KB of the answer read, one timeout for the whole call, and a connection only
 * to an address the destination policy allows, checked when it connects (src/infra/destinations.ts).
 */
export interface SendResult {
  /** The HTTP status, or `timeout`, or `connection_failed`. */
  status: string;
  delivered: boolean;
  durationMs: number;
  /** The first bytes of the answer, or what went wrong. */
  response: string;
}

/** What is kept of an answer. */
export const KeptResponseBytes = 500;
/** What is read of an answer at most: the rest is not waited for. */
const ReadBytes = 4096;

export function createSender(policy: DestinationPolicy) {
  const lookup = checkedLookup(policy);
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 16, lookup }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 16, lookup }),
  };

  return {
    send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult> {
      const started = performance.now();
      const result = (status: string, response: string): SendResult => ({
        status,
        delivered: /^2\d\d$/.test(status),
        durationMs: Math.round(performance.now() - started),
        response: Buffer.from(response).subarray(0, KeptResponseBytes).toString('utf8'),
      });
      const target = new URL(url);
      const refused = urlProblem(target, policy);
      if (refused) return Promise.resolve(result('connection_failed', `refused destination: ${refused}`));
      const transport = target.protocol === 'https:' ? https : http;
      return new Promise((resolve) => {
        let settled = false;
        const settle = (value: SendResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        };
        const request = transport.request(
          target,
          {
            method: 'POST',
            headers: { ...headers, 'content-length': Buffer.byteLength(body) },
            agent: agents[target.protocol as keyof typeof agents],
          },
          (response) => {
            const chunks: Buffer[] = [];
            let length = 0;
            const done = () => settle(result(String(response.statusCode ?? 0), Buffer.concat(chunks).toString('utf8')));
            response.on('data', (chunk: Buffer) => {
              chunks.push(chunk);
              length += chunk.length;
              if (length >= ReadBytes) {
                done();
                response.destroy();
              }
            });
            response.on('end', done);
            response.on('error', done);
          },
        );
        const timer = setTimeout(() => {
          settle(result('timeout', `no answer within ${timeoutMs} ms`));
          request.destroy();
        }, timeoutMs);
        request.on('error', (err: NodeJS.ErrnoException) => settle(result('connection_failed', err.message)));
        request.end(body);
      });
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

export type WebhookSender = ReturnType<typeof createSender>;
