import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TlsOptions } from 'node:tls';
import type { Test } from 'tap';

/**
 * An HTTP/1.1 server on loopback that answers in bytes of its own (what node:http will not write:
 * folded header lines, odd framing): each request (its head and Content-Length body) is answered
 * by `answer`, as one write or as the pieces it gives, on kept connections. Over TLS with `tls`.
 */
export interface RawRequest {
  head: string;
  body: string;
  /** The request's place on its connection, from 0. */
  onConnection: number;
}

export async function startRawHttp(t: Pick<Test, 'teardown'>, answer: (request: RawRequest) => string | string[], tls?: TlsOptions) {
  const requests: RawRequest[] = [];
  let connections = 0;
  const onSocket = (socket: Socket) => {
    connections++;
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    let onConnection = 0;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = pending.subarray(0, end).toString('latin1');
        const length = Number(/^content-length:\s*(\d+)/im.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const request = { head, body: pending.subarray(end + 4, end + 4 + length).toString('utf8'), onConnection: onConnection++ };
        pending = pending.subarray(end + 4 + length);
        requests.push(request);
        const pieces = answer(request);
        if (typeof pieces === 'string') socket.write(pieces, 'latin1');
        // Pieces each in a write of its own, each after the one before has gone out.
        else void pieces.reduce((before, piece) => before.then(() => new Promise<void>((resolve) => socket.write(piece, 'latin1', () => setImmediate(resolve)))), Promise.resolve());
      }
    });
  };
  const server: Server = tls ? createTlsServer(tls, onSocket) : createNetServer(onSocket);
  if (tls) server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  return { url: `${tls ? 'https://localhost' : 'http://127.0.0.1'}:${port}`, requests, connections: () => connections };
}
