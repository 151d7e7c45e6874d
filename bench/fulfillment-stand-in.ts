import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in of the external fulfillment service (POST|PUT /service) answering at once, or 503 for a
 * share of the calls, and applying each Idempotency-Key once as a real service would: the fulfillment
 * bench scenario and scripts/chaos.ts count on it that every paid process got exactly one delivery.
 */
export interface StandIn {
  url: string;
  /** Share of calls answered 503. */
  failureRate: number;
  /** Idempotency keys the service applied, per state. */
  applied: Map<string, string>;
  calls: number;
  server: Server;
}

export async function startStandIn(): Promise<StandIn> {
  const standIn = { url: '', failureRate: 0, applied: new Map<string, string>(), calls: 0 } as StandIn;
  standIn.server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      standIn.calls++;
      if (Math.random() < standIn.failureRate) {
        res.writeHead(503).end();
        return;
      }
      const body = JSON.parse(text) as { state: string; id?: string };
      const key = String(req.headers['idempotency-key']);
      standIn.applied.set(key, body.state);
      const id = body.id ?? key.split('.')[0];
      res.writeHead(201, { 'content-type': 'application/json', location: `/service/id/${id}` });
      res.end(JSON.stringify({ id, state: req.method === 'POST' ? 'allocated' : body.state === 'aborted' ? 'aborted' : 'processed' }));
    });
  });
  await new Promise<void>((resolve) => standIn.server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(standIn.server.address() as AddressInfo).port}`;
  return standIn;
}
