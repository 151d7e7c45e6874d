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

  /** Each URL's request target, parsed and checked once (the policy is the sender's for its life). */
  const targets = new Map<string, Target | { refused: string }>();
  const targetOf = (url: string) => {
    let target = targets.get(url);
    if (!target) {
      const parsed = new URL(url);
      const refused = urlProblem(parsed, policy);
      target = refused ? { refused } : { transport: parsed.protocol === 'https:' ? https : http, agent: agents[parsed.protocol as keyof typeof agents], hostname: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: parsed.port, path: `${parsed.pathname}${parsed.search}`, host: parsed.host };
      if (targets.size >= 10_000) targets.clear();
      targets.set(url, target);
    }
    return target;
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
      const target = targetOf(url);
      if ('refused' in target) return Promise.resolve(result('connection_failed', `refused destination: ${target.refused}`));
      // The headers as one flat list: written as they are (no per-header bookkeeping), Host among them.
      const raw = ['host', target.host, 'content-length', String(Buffer.byteLength(body))];
      for (const name in headers) raw.push(name, headers[name]!);
      return new Promise((resolve) => {
        let settled = false;
        const settle = (value: SendResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        };
        const request = target.transport.request(
          { method: 'POST', hostname: target.hostname, port: target.port, path: target.path, headers: raw, agent: target.agent },
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

interface Target {
  transport: typeof http | typeof https;
  agent: http.Agent;
  hostname: string;
  port: string;
  path: string;
  /** The Host header: host and port as the URL has them. */
  host: string;
}

export type WebhookSender = ReturnType<typeof createSender>;
