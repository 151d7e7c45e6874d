import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver as an integrator's endpoint: answers 204 at once and keeps, for each delivery,
 * how long after its event it arrived (the body's `timestamp`, the time the change wrote the event,
 * to the arrival; one clock, one machine). Signatures are not checked: that is the receiver's work,
 * not the platform's, and its CPU is not the platform's either.
 */
export async function startWebhookStandIn() {
  let latencies: number[] = [];
  let received = 0;
  let ids = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const arrived = Date.now();
      response.writeHead(204).end();
      received++;
      ids.add(String(request.headers['webhook-id']));
      const { timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
      latencies.push(arrived - Date.parse(timestamp));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    reset() {
      latencies = [];
      received = 0;
      ids = new Set();
    },
    stats() {
      const sorted = [...latencies].sort((a, b) => a - b);
      return { received, distinct: ids.size, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? 0 };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
