import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/**
 * A stand-in for the external fulfillment service: a real HTTP server that records every call and
 * answers as the spec's table says (POST /service → 201 allocated, PUT /service → 201 processed or
 * aborted), unless a test tells it otherwise. Like a real service it applies a request once per
 * Idempotency-Key: `effective` counts the keys it applied.
 */
export interface ServiceCall {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: { id?: string; state: string; shopID?: string; lineItems: Array<{ id: string; sku: string; amount: number; scannedCode: string }>; links: { fulfillment: { href: string } } };
  key: string;
  /** 1 for the first call with this Idempotency-Key. */
  attempt: number;
  at: number;
}

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (the platform's timeout may have given up by then). */
  delayMs?: number;
  /**
   * Called once the service has applied the call, before the answer goes out: a test kills the
   * caller there, which then dies between the service's effect and recording its answer (killed
   * after the answer went out, a quick caller could record it first).
   */
  beforeAnswer?: () => void | Promise<void>;
}

export type Behaviour = (call: ServiceCall) => Answer | undefined | Promise<Answer | undefined>;

export interface FulfillmentServiceStandIn {
  url: string;
  calls: ServiceCall[];
  /** Answers of the calls for which this returns one; the standard answer for the rest. */
  behave(behaviour: Behaviour): void;
  /** The calls for one fulfillment (by its platform href, which ends in its id). */
  callsFor(fulfillmentId: string): ServiceCall[];
  /** How many requests of a state the service applied for a fulfillment, once per Idempotency-Key. */
  effective(fulfillmentId: string, state: string): number;
  /** Waits until `predicate` holds for the calls, up to `timeoutMs`. */
  waitFor(predicate: (calls: ServiceCall[]) => boolean, timeoutMs?: number): Promise<void>;
}

export async function startFulfillmentService(t: Test): Promise<FulfillmentServiceStandIn> {
  const calls: ServiceCall[] = [];
  const applied = new Map<string, ServiceCall>();
  let behaviour: Behaviour = () => undefined;
  let next = 1;

  const standard = (call: ServiceCall): Answer => {
    const id = call.body.id ?? `svc-${next++}`;
    if (call.method === 'POST') return { status: 201, headers: { location: `/service/id/${id}` }, body: { id, state: 'allocated', shopID: call.body.shopID, lineItems: call.body.lineItems } };
    return { status: 201, headers: { location: `/service/id/${id}` }, body: { id, state: call.body.state === 'aborted' ? 'aborted' : 'processed', shopID: call.body.shopID, lineItems: call.body.lineItems } };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      void (async () => {
        const key = String(req.headers['idempotency-key'] ?? '');
        const call: ServiceCall = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: JSON.parse(text || '{}') as ServiceCall['body'],
          key,
          attempt: calls.filter((c) => c.key === key).length + 1,
          at: Date.now(),
        };
        calls.push(call);
        // A request applied before (same key) is answered as it was; nothing happens twice.
        const answer = (await behaviour(call)) ?? standard(applied.get(key) ?? call);
        if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
        if (answer.status >= 200 && answer.status < 300 && !applied.has(key)) applied.set(key, call);
        await answer.beforeAnswer?.();
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.on('connection', (socket) => t.teardown(() => void socket.destroy()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const callsFor = (fulfillmentId: string) => calls.filter((c) => c.body.links?.fulfillment?.href?.endsWith(`/${fulfillmentId}`));
  return {
    url,
    calls,
    behave(b) {
      behaviour = b;
    },
    callsFor,
    effective(fulfillmentId, state) {
      return [...applied.values()].filter((c) => c.body.state === state && c.body.links.fulfillment.href.endsWith(`/${fulfillmentId}`)).length;
    },
    async waitFor(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(calls)) {
        if (Date.now() > deadline) throw new Error(`the fulfillment service did not see what was expected within ${timeoutMs} ms (${calls.length} calls)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}
