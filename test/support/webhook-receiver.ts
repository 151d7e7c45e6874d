import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Test } from 'tap';

/**
 * A webhook receiver as an integrator runs one: a real HTTP server on loopback that keeps every
 * request (headers, body, when) by path. Each path answers 200 unless told otherwise: `failNext`
 * answers the next n requests with a status, leaves them hanging, or closes their connection.
 */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  /** What it was answered. */
  answer: number | 'hang' | 'close';
  /** When it was answered (a 2xx after a delay: `slowDown`). */
  answeredAt?: number;
}

export type Misbehaviour = number | 'hang' | 'close';

export interface WebhookReceiver {
  url: string;
  received(path?: string): ReceivedWebhook[];
  /** Answers the next `times` requests to `path` with `how` (a status, no answer, or a closed connection). */
  failNext(path: string, times: number, how: Misbehaviour): void;
  /** Every request of `path` from now on, until `recover`. */
  failAlways(path: string, how: Misbehaviour): void;
  recover(path: string): void;
  /** Answers every request of `path` with 200 after `ms` (0: at once again). */
  slowDown(path: string, ms: number): void;
  close(): Promise<void>;
}

/** The most requests of `records` that were open (arrived and not yet answered) at one time. */
export function peakOpen(records: readonly ReceivedWebhook[]): number {
  const moments = records.flatMap((r) => [[r.at, 1], [r.answeredAt ?? Number.POSITIVE_INFINITY, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let peak = 0;
  for (const [, change] of moments) peak = Math.max(peak, (open += change));
  return peak;
}

export async function startWebhookReceiver(t: Pick<Test, 'teardown'>): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const plans = new Map<string, { times: number; how: Misbehaviour }>();
  const delays = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createServer((request, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const plan = plans.get(path);
      const how: Misbehaviour = plan && plan.times > 0 ? plan.how : 200;
      if (plan && plan.times > 0 && Number.isFinite(plan.times)) plan.times--;
      const record: ReceivedWebhook = { path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), answer: how };
      received.push(record);
      if (how === 'hang') return;
      if (how === 'close') return void request.socket.destroy();
      const answer = () => {
        record.answeredAt = Date.now();
        response.writeHead(how, { 'content-type': 'text/plain' }).end(how < 300 ? 'ok' : `failing on purpose (${how})`);
      };
      const delay = delays.get(path) ?? 0;
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  t.teardown(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: (path) => received.filter((r) => path === undefined || r.path === path),
    failNext: (path, times, how) => plans.set(path, { times, how }),
    failAlways: (path, how) => plans.set(path, { times: Number.POSITIVE_INFINITY, how }),
    recover: (path) => plans.delete(path),
    slowDown: (path, ms) => delays.set(path, ms),
    close,
  };
}
