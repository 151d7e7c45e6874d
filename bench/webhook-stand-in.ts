import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { makeTlsFiles } from '../test/support/tls.js';

/**
 * A webhook receiver as an integrator's endpoint: answers 204 at once and keeps, for each delivery,
 * how long after its event it arrived (the body's `timestamp`, the time the change wrote the event,
 * to the arrival; one clock, one machine). Signatures are not checked: that is the receiver's work,
 * not the platform's, and its CPU is not the platform's either.
 *
 * HTTP/1.1 on raw sockets, reading only what it counts: an endpoint stands on another machine, and
 * on the bench's two cores a node:http server (0.15 ms of CPU a delivery, seven deliveries a sale)
 * took time from the platform's processes even at the lowest priority.
 *
 * It listens twice: on plain http (`url`) and on https (`tlsUrl`, a certificate for 127.0.0.1 and
 * localhost signed by a CA of its own, `caFile`, which the service trusts through
 * NODE_EXTRA_CA_CERTS), one receiver behind both.
 */
export async function startWebhookStandIn() {
  let latencies: number[] = [];
  let received = 0;
  let ids = new Set<string>();
  const HeadEnd = Buffer.from('\r\n\r\n');
  const receive = (socket: Socket) => {
    let pending: Buffer = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        const headEnd = pending.indexOf(HeadEnd);
        if (headEnd < 0) return;
        const head = pending.subarray(0, headEnd).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        const end = headEnd + HeadEnd.length + length;
        if (pending.length < end) return;
        // The body begins {"type":...,"timestamp":"...": its first bytes are enough.
        const start = pending.subarray(headEnd + HeadEnd.length, Math.min(end, headEnd + HeadEnd.length + 200)).toString('utf8');
        pending = pending.subarray(end);
        socket.write('HTTP/1.1 204 No Content\r\n\r\n');
        const arrived = Date.now();
        received++;
        ids.add(/\r\nwebhook-id: *([^\r]*)/i.exec(head)?.[1] ?? '');
        const timestamp = /"timestamp":"([^"]+)"/.exec(start)?.[1];
        if (timestamp) latencies.push(arrived - Date.parse(timestamp));
      }
    });
  };
  const server = createServer(receive);
  const dir = await mkdtemp(path.join(tmpdir(), 'webhook-stand-in-'));
  const files = await makeTlsFiles(dir);
  const tlsServer = createTlsServer({ cert: await readFile(files.certFile), key: await readFile(files.keyFile) }, receive);
  tlsServer.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    tlsUrl: `https://localhost:${(tlsServer.address() as AddressInfo).port}/hooks`,
    caFile: files.caFile,
    reset() {
      latencies = [];
      received = 0;
      ids = new Set();
    },
    stats() {
      const sorted = [...latencies].sort((a, b) => a - b);
      return { received, distinct: ids.size, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? 0 };
    },
    async close() {
      await Promise.all([server, tlsServer].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
