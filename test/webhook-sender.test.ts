import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import t, { type Test } from 'tap';
import { readAnswer, type Answer } from '../actors/webhooks/answer.js';
import { createSender, KeptResponseBytes, ReadBytes } from '../actors/webhooks/sender.js';
import { makeTlsFiles } from './support/tls.js';

/**
 * The webhook sender's HTTP/1.1 (actors/webhooks/sender.ts, answer.ts): answers read whole or in
 * pieces, kept connections, and what it refuses, against real sockets.
 */

/** Reads `text` as an answer, given whole and byte by byte: both must read the same. */
function read(text: string, maxBody = ReadBytes): { whole: Answer | undefined; bytewise: Answer | undefined; failed: string | undefined } {
  const bytes = Buffer.from(text, 'latin1');
  const reader = readAnswer(maxBody);
  const whole = reader.push(bytes);
  const pieces = readAnswer(maxBody);
  let bytewise: Answer | undefined;
  for (let i = 0; i < bytes.length && !bytewise; i++) bytewise = pieces.push(bytes.subarray(i, i + 1));
  return { whole, bytewise, failed: reader.failed ?? pieces.failed };
}

t.test('reads answers by their length, chunked, or to the end of the connection', async (t) => {
  const sized = read('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello');
  t.match(sized.whole, { status: 200, reusable: true });
  t.equal(sized.whole?.body.toString(), 'hello');
  t.same(sized.bytewise, sized.whole, 'byte by byte, the same');

  const chunked = read('HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n');
  t.equal(chunked.whole?.body.toString(), 'hello, world', 'chunks joined, extensions and trailers skipped');
  t.match(chunked.whole, { status: 202, reusable: true });
  t.same(chunked.bytewise, chunked.whole);

  const informational = read('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n');
  t.match(informational.whole, { status: 204, reusable: true }, '1xx answers before the final one are skipped');
  t.same(informational.bytewise, informational.whole);

  const closing = readAnswer(ReadBytes);
  t.equal(closing.push(Buffer.from('HTTP/1.0 200 OK\r\n\r\nuntil the ')), undefined, 'a body without a length waits for the connection to end');
  t.equal(closing.push(Buffer.from('end')), undefined);
  const ended = closing.end();
  t.match(ended, { status: 200, reusable: false });
  t.equal(ended?.body.toString(), 'until the end');

  t.match(read('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok').whole, { status: 200, reusable: false }, 'Connection: close');
  t.match(read('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok').whole, { reusable: true }, 'HTTP/1.0 kept alive when it says so');
  t.match(read('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 0\r\n\r\n').whole, { keepAliveMs: 5000 });
  t.match(read('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1').whole, { reusable: false }, 'bytes after the answer: the connection is not used again');
});

t.test('reads at most the first bytes of a long answer, and then stops', async (t) => {
  const long = 'x'.repeat(10_000);
  const sized = read(`HTTP/1.1 500 Internal Server Error\r\nContent-Length: ${long.length}\r\n\r\n${long}`, 100);
  t.match(sized.bytewise, { status: 500, reusable: false }, 'answered once 100 bytes are read, not at the end (and the connection not kept)');
  t.equal(sized.bytewise?.body.length, 100);
  t.match(sized.whole, { status: 500, reusable: true }, 'an answer that came whole is read to its end');
  t.equal(sized.whole?.body.length, 100);
  const chunked = read(`HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n${long.length.toString(16)}\r\n${long}\r\n0\r\n\r\n`, 100);
  t.equal(chunked.bytewise?.body.length, 100);
  t.match(chunked.bytewise, { reusable: false });
});

t.test('what is not an HTTP/1.x answer fails, with why', async (t) => {
  t.match(read('SSH-2.0-OpenSSH_9.2\r\n\r\n').failed, /not an HTTP\/1\.x answer/);
  t.match(read('HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok').failed, /invalid content-length/);
  t.match(read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n').failed, /invalid chunk size/);
  t.match(read('HTTP/1.1 101 Switching Protocols\r\n\r\n').failed, /switched protocols/);
  t.match(read(`HTTP/1.1 200 OK\r\n${'X-Long: y\r\n'.repeat(2000)}`).failed, /head over/);
});

/** A server on loopback; answers its URL and the connections it was opened. */
async function serve(t: Test, handle: Parameters<typeof createHttpServer>[1], setup?: (server: Server) => void) {
  const server = createHttpServer(handle);
  setup?.(server);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_1' };

t.test('sends over kept connections, and does not follow a redirect', async (t) => {
  const bodies: string[] = [];
  const receiver = await serve(t, (request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      bodies.push(`${request.method} ${request.url} ${request.headers['webhook-id']} ${body}`);
      if (request.url === '/moved') response.writeHead(302, { location: '/elsewhere' }).end('moved');
      else response.writeHead(200).end('thanks');
    });
  });
  const sender = createSender({ allowPrivate: true });
  t.teardown(() => sender.close());
  const first = await sender.send(`${receiver.url}/hooks?x=1`, headers, '{"a":1}', 5000);
  t.match(first, { status: '200', delivered: true, response: 'thanks' });
  t.match(await sender.send(`${receiver.url}/hooks?x=1`, headers, '{"a":2}', 5000), { delivered: true });
  t.same(bodies, ['POST /hooks?x=1 msg_1 {"a":1}', 'POST /hooks?x=1 msg_1 {"a":2}'], 'the requests as sent');
  t.equal(receiver.connections(), 1, 'both over one kept connection');
  t.match(await sender.send(`${receiver.url}/moved`, headers, '{}', 5000), { status: '302', delivered: false, response: 'moved' }, 'a redirect is an answer that is not 2xx');
  t.equal(bodies.length, 3, 'its location was not asked');
});

t.test('keeps the first bytes of a chunked answer', async (t) => {
  const receiver = await serve(t, (_request, response) => {
    response.writeHead(500);
    response.write('e'.repeat(300));
    response.end('r'.repeat(300));
  });
  const sender = createSender({ allowPrivate: true });
  t.teardown(() => sender.close());
  const sent = await sender.send(receiver.url, headers, '{}', 5000);
  t.match(sent, { status: '500', delivered: false });
  t.equal(sent.response, `${'e'.repeat(300)}${'r'.repeat(KeptResponseBytes - 300)}`);
});

t.test('a connection the receiver closed while idle is not used again', async (t) => {
  const receiver = await serve(
    t,
    (_request, response) => response.writeHead(204).end(),
    (server) => (server.keepAliveTimeout = 100),
  );
  const sender = createSender({ allowPrivate: true });
  t.teardown(() => sender.close());
  t.match(await sender.send(receiver.url, headers, '{}', 5000), { status: '204', delivered: true });
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.match(await sender.send(receiver.url, headers, '{}', 5000), { status: '204', delivered: true }, 'the next one on a new connection');
  t.equal(receiver.connections(), 2);
});

t.test('a kept connection the receiver closes as a request goes out: the request goes again on a new one', async (t) => {
  // Each connection answers its first request and closes on the second without a word, as a
  // receiver whose idle timeout ends just as the request arrives.
  const requests: number[] = [];
  let connections = 0;
  const receiver = createNetServer((socket: Socket) => {
    const connection = ++connections;
    let seen = 0;
    socket.on('data', (chunk: Buffer) => {
      for (const _request of chunk.toString().matchAll(/^POST /gm)) {
        requests.push(connection);
        if (++seen > 1) return socket.destroy();
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const sender = createSender({ allowPrivate: true });
  t.teardown(() => sender.close());
  t.match(await sender.send(url, headers, '{}', 5000), { status: '200', delivered: true });
  t.match(await sender.send(url, headers, '{}', 5000), { status: '200', delivered: true, response: 'ok' }, 'delivered on the second connection');
  t.same(requests, [1, 1, 2], 'sent on the kept connection, then once more on a new one');

  // A new connection that ends without an answer is the attempt's failure, not tried again.
  const closing = createNetServer((socket: Socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => closing.close(() => resolve())));
  let accepted = 0;
  closing.on('connection', () => accepted++);
  t.match(await sender.send(`http://127.0.0.1:${(closing.address() as AddressInfo).port}`, headers, '{}', 5000), { status: 'connection_failed' });
  t.equal(accepted, 1, 'one connection, one try');
});

t.test('a receiver that does not answer in time, closes the connection, or is not there fails the attempt', async (t) => {
  const hanging = await serve(t, () => {});
  const sender = createSender({ allowPrivate: true });
  t.teardown(() => sender.close());
  const started = Date.now();
  t.match(await sender.send(hanging.url, headers, '{}', 300), { status: 'timeout', delivered: false, response: 'no answer within 300 ms' });
  t.ok(Date.now() - started < 2000, 'within its timeout');

  const closing = createNetServer((socket: Socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => closing.close(() => resolve())));
  t.match(await sender.send(`http://127.0.0.1:${(closing.address() as AddressInfo).port}`, headers, '{}', 5000), { status: 'connection_failed', delivered: false });

  const gone = createNetServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  const port = (gone.address() as AddressInfo).port;
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  t.match(await sender.send(`http://127.0.0.1:${port}`, headers, '{}', 5000), { status: 'connection_failed', response: /ECONNREFUSED/ });
});

t.test('checks where a name leads when it connects, and speaks TLS with checked certificates', async (t) => {
  const receiver = await serve(t, (_request, response) => response.writeHead(204).end());
  const port = new URL(receiver.url).port;
  const strict = createSender({ allowPrivate: false });
  t.teardown(() => strict.close());
  t.match(await strict.send(`https://localhost:${port}/`, headers, '{}', 5000), { status: 'connection_failed', response: /loopback or private address/ }, 'a name that resolves to loopback, refused when it connects');

  const dir = await mkdtemp(path.join(tmpdir(), 'webhook-tls-'));
  const files = await makeTlsFiles(dir);
  const tls = createTlsServer({ cert: await readFile(files.certFile), key: await readFile(files.keyFile) }, (socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end('HTTP/1.1 204 No Content\r\n\r\n'));
  });
  tls.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => tls.close(() => resolve())));
  const sender = createSender({ allowPrivate: true });
  t.teardown(() => sender.close());
  const sent = await sender.send(`https://localhost:${(tls.address() as AddressInfo).port}/`, headers, '{}', 5000);
  t.match(sent, { status: 'connection_failed', delivered: false }, 'a certificate no trusted CA signed is refused');
  t.match(sent.response, /certificate/i);
});
