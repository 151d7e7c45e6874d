import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { getCACertificates, setDefaultCACertificates, type TLSSocket } from 'node:tls';
import { createSender, KeptResponseBytes } from '../actors/webhooks/sender.js';
import { startDnsStandIn } from './support/dns-stand-in.js';
import { makeTlsFiles } from './support/tls.js';
import { createResolver } from '../src/infra/destinations.js';
import { createOutgoingHttp } from '../src/infra/outgoing-http.js';
import { startRawHttp } from './support/raw-http.js';

const resolve = createResolver({ timeoutMs: 2000 });

/**
 * The webhook sender on the platform's outgoing HTTP client (actors/webhooks/sender.ts,
 * src/infra/outgoing-http.ts: undici): kept connections, answers kept in part, what it refuses, and
 * the three faults of the hand-written client it replaced (a folded header line failed a whole
 * answer, no TLS session was resumed, only a name's first address was tried), against real sockets.
 * The folded lines are unfolded before undici reads them (src/infra/obs-fold.ts).
 */

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

/** A certificate and key for loopback, the process trusting their CA until the test ends (as NODE_EXTRA_CA_CERTS in the bench). */
async function trustedTls(t: Test) {
  const files = await makeTlsFiles(await mkdtemp(path.join(tmpdir(), 'webhook-tls-')));
  const system = getCACertificates('default');
  setDefaultCACertificates([...system, await readFile(files.caFile, 'utf8')]);
  t.teardown(() => setDefaultCACertificates(system));
  return { cert: await readFile(files.certFile), key: await readFile(files.keyFile) };
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
  const sender = createSender({ allowPrivate: true, resolve }, 16);
  t.teardown(() => sender.close());
  const first = await sender.send(`${receiver.url}/hooks?x=1`, headers, '{"a":1}', 5000);
  t.match(first, { status: '200', delivered: true, response: 'thanks' });
  t.match(await sender.send(`${receiver.url}/hooks?x=1`, headers, '{"a":2}', 5000), { delivered: true });
  t.same(bodies, ['POST /hooks?x=1 msg_1 {"a":1}', 'POST /hooks?x=1 msg_1 {"a":2}'], 'the requests as sent');
  await sleep(20);
  t.match(await sender.send(`${receiver.url}/hooks?x=1`, headers, '{"a":3}', 5000), { delivered: true });
  t.ok(receiver.connections() <= 2, `over kept connections (${receiver.connections()} for three requests)`);
  const before = receiver.connections();
  await sleep(20);
  t.match(await sender.send(`${receiver.url}/moved`, headers, '{}', 5000), { status: '302', delivered: false, response: 'moved' }, 'a redirect is an answer that is not 2xx');
  t.equal(bodies.length, 4, 'its location was not asked');
  t.equal(receiver.connections(), before, 'a connection that was kept carried it');
});

t.test('keeps the first bytes of a chunked answer', async (t) => {
  const receiver = await serve(t, (_request, response) => {
    response.writeHead(500);
    response.write('e'.repeat(300));
    response.end('r'.repeat(300));
  });
  const sender = createSender({ allowPrivate: true, resolve }, 16);
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
  const sender = createSender({ allowPrivate: true, resolve }, 16);
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
  const sender = createSender({ allowPrivate: true, resolve }, 16);
  t.teardown(() => sender.close());
  t.match(await sender.send(url, headers, '{}', 5000), { status: '200', delivered: true });
  await sleep(20);
  t.match(await sender.send(url, headers, '{}', 5000), { status: '200', delivered: true, response: 'ok' }, 'delivered on the second connection');
  t.same(requests, [1, 1, 2], 'sent on the kept connection, then once more on a new one');

  // A new connection that ends without an answer is the attempt's failure, not tried again.
  const closing = createNetServer((socket: Socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => closing.close(() => resolve())));
  let accepted = 0;
  closing.on('connection', () => accepted++);
  t.match(await sender.send(`http://127.0.0.1:${(closing.address() as AddressInfo).port}`, headers, '{}', 5000), { status: 'connection_failed', response: /other side closed|socket/i });
  t.equal(accepted, 1, 'one connection, one try');
});

t.test('a receiver that does not answer in time, closes the connection, or is not there fails the attempt', async (t) => {
  const hanging = await serve(t, () => {});
  const sender = createSender({ allowPrivate: true, resolve }, 16);
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

t.test('an answer with a folded header line is read as RFC 9112 asks: delivered, the fold read as spaces', async (t) => {
  // obs-fold (RFC 9112 5.2): a header value continued on the next line after SP or HTAB. undici's
  // parser refuses it; src/infra/obs-fold.ts replaces each fold with spaces before it reads.
  const folded = 'HTTP/1.1 200 OK\r\nX-Note: first part\r\n  and the second\r\nContent-Length: 8\r\n\r\nreceived';
  const raw = await startRawHttp(t, (request) => (request.head.startsWith('POST /cut') ? folded.match(/[^]{1,5}/g)! : folded));
  const sender = createSender({ allowPrivate: true, resolve }, 16);
  t.teardown(() => sender.close());
  t.match(await sender.send(`${raw.url}/`, headers, '{}', 5000), { status: '200', delivered: true, response: 'received' });
  t.match(await sender.send(`${raw.url}/cut`, headers, '{}', 5000), { status: '200', delivered: true, response: 'received' }, 'in reads of five bytes (the fold cut across them)');
  const http = createOutgoingHttp({ policy: { allowPrivate: true, resolve }, connectionsPerOrigin: 1, maxBodyBytes: 100 });
  t.teardown(() => http.close());
  const answer = await http.request(`${raw.url}/`, { method: 'GET', headers: {}, timeoutMs: 5000 });
  t.match(answer, { kind: 'answer', status: 200, headers: { 'x-note': 'first part    and the second', 'content-length': '8' } }, 'the fold (CRLF and two SP) as four SP');
});

t.test('a folded answer over TLS is delivered: the fold is undone above TLS', async (t) => {
  const raw = await startRawHttp(t, () => 'HTTP/1.1 202 Accepted\r\nX-Note: a\r\n\tb\r\nContent-Length: 2\r\n\r\nok', await trustedTls(t));
  const sender = createSender({ allowPrivate: true, resolve }, 1);
  t.teardown(() => sender.close());
  t.match(await sender.send(`${raw.url}/hooks`, headers, '{}', 5000), { status: '202', delivered: true, response: 'ok' });
  t.match(await sender.send(`${raw.url}/hooks`, headers, '{}', 5000), { status: '202', delivered: true, response: 'ok' });
  t.equal(raw.connections(), 1, 'on one kept connection (one a receiver at most)');
});

t.test('on a kept connection, an answer after bodies and chunks that hold CRLF and a space is unfolded, and they pass untouched', async (t) => {
  const answers = [
    'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nok\r\n X: y\r\n',
    // Chunks whose bytes look like folds, and a folded trailer.
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n7\r\nline\r\n \r\n6\r\n\tnext\n\r\n0\r\nX-Trailer: t\r\n u\r\n\r\n',
    'HTTP/1.1 200 OK\r\nX-Note: a\r\n b\r\nContent-Length: 4\r\n\r\nlast',
  ];
  const raw = await startRawHttp(t, (request) => answers[request.onConnection]!);
  const sender = createSender({ allowPrivate: true, resolve }, 1);
  t.teardown(() => sender.close());
  const sent = [];
  for (let i = 0; i < answers.length; i++) sent.push(await sender.send(`${raw.url}/hooks`, headers, '{}', 5000));
  t.match(sent, [
    { status: '200', delivered: true, response: 'ok\r\n X: y\r\n' },
    { status: '200', delivered: true, response: 'line\r\n \tnext\n' },
    { status: '200', delivered: true, response: 'last' },
  ]);
  t.same(raw.requests.map((r) => r.onConnection), [0, 1, 2], 'all three on one connection (one a receiver at most)');
  t.equal(raw.connections(), 1);
});

t.test('bytes after an answer\'s end still end the kept connection before it carries another request', async (t) => {
  // A 204 with a body: undici reads the body as the start of the next answer and closes the
  // connection; the unfolder hands such bytes on at once rather than hold them as a head.
  let answered = 0;
  const raw = await startRawHttp(t, () => (answered++ === 0 ? 'HTTP/1.1 204 No Content\r\n\r\nok' : 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
  const sender = createSender({ allowPrivate: true, resolve }, 1);
  t.teardown(() => sender.close());
  t.match(await sender.send(`${raw.url}/hooks`, headers, '{}', 5000), { status: '204', delivered: true });
  await sleep(20);
  t.match(await sender.send(`${raw.url}/hooks`, headers, '{}', 5000), { status: '200', delivered: true });
  t.same(raw.requests.map((r) => r.onConnection), [0, 0], 'each request sent once, the second on a new connection');
  t.equal(raw.connections(), 2);
});

t.test('a fold does not make what undici refuses readable: a length across lines, a space before the first field, bare LF', async (t) => {
  const answers: Record<string, string> = {
    '/length': 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 0\r\n\r\n0123456789',
    '/first': 'HTTP/1.1 200 OK\r\n X-Note: a\r\nContent-Length: 2\r\n\r\nok',
    '/lf': 'HTTP/1.1 200 OK\nX-Note: a\n b\nContent-Length: 2\n\nok',
  };
  const raw = await startRawHttp(t, (request) => answers[request.head.split(' ')[1]!]!);
  const sender = createSender({ allowPrivate: true, resolve }, 16);
  t.teardown(() => sender.close());
  // "1   0" once unfolded: undici and its parser do not agree on it, and the call fails.
  t.match(await sender.send(`${raw.url}/length`, headers, '{}', 5000), { status: 'connection_failed', delivered: false, response: /content-length/i }, 'a length across lines');
  for (const path of ['/first', '/lf']) {
    t.match(await sender.send(`${raw.url}${path}`, headers, '{}', 5000), { status: 'connection_failed', delivered: false, response: /does not match the HTTP\/1\.1 protocol/ }, path);
  }
});

t.test('a new TLS connection to a receiver resumes the session of the one before', async (t) => {
  const resumed: boolean[] = [];
  const server = createTlsServer(await trustedTls(t), (socket: TLSSocket) => {
    resumed.push(socket.isSessionReused());
    socket.on('error', () => {});
    // Answers, then closes: the next delivery needs a new connection.
    socket.once('data', () => socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n'));
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const sender = createSender({ allowPrivate: true, resolve }, 16);
  t.teardown(() => sender.close());
  const url = `https://localhost:${(server.address() as AddressInfo).port}/hooks`;
  for (let i = 0; i < 3; i++) {
    t.match(await sender.send(url, headers, '{}', 5000), { status: '204', delivered: true });
    await sleep(20);
  }
  t.same(resumed, [false, true, true], 'a full handshake once, then sessions resumed');
});

t.test('a name whose first address does not answer is reached at its next one', async (t) => {
  const receiver = await serve(t, (_request, response) => response.writeHead(204).end());
  const port = new URL(receiver.url).port;
  // ::1 comes first and nothing listens there on this port; 127.0.0.1 does.
  const dns = await startDnsStandIn(t, { 'two.example': ['::1', '127.0.0.1'] });
  const sender = createSender({ allowPrivate: true, resolve: createResolver({ timeoutMs: 1000, servers: [dns.server] }) }, 16);
  t.teardown(() => sender.close());
  t.match(await sender.send(`http://two.example:${port}/`, headers, '{}', 5000), { status: '204', delivered: true });
  t.equal(receiver.connections(), 1);
});

t.test('checks where a name leads when it connects, and speaks TLS with checked certificates', async (t) => {
  const receiver = await serve(t, (_request, response) => response.writeHead(204).end());
  const port = new URL(receiver.url).port;
  const strict = createSender({ allowPrivate: false, resolve }, 16);
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
  const sender = createSender({ allowPrivate: true, resolve }, 16);
  t.teardown(() => sender.close());
  const sent = await sender.send(`https://localhost:${(tls.address() as AddressInfo).port}/`, headers, '{}', 5000);
  t.match(sent, { status: 'connection_failed', delivered: false }, 'a certificate no trusted CA signed is refused');
  t.match(sent.response, /certificate/i);
});
