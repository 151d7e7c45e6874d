import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { portalUser } from './support/browser.js';
import { p } from './support/checkout.js';
import { eventually } from './support/closing.js';
import { PasswordHashingEnv, startTestService, TestProject } from './support/service.js';

/**
 * The live event streams (`GET /{project}/checkout/events`, behind the portal's Supervision screen)
 * are bounded on each edge: so many per token and per project (429 with Retry-After past either),
 * and a client that stops reading is disconnected once its waiting bytes pass a bound, so that the
 * edge's memory does not grow with it.
 */
const PerToken = 2;
const PerProject = 3;
const BufferBytes = 256 * 1024;
const svc = await startTestService(t, {
  env: { ...PasswordHashingEnv, LIVE_STREAMS_PER_TOKEN: String(PerToken), LIVE_STREAMS_PER_PROJECT: String(PerProject), LIVE_STREAM_BUFFER_BYTES: String(BufferBytes) },
});
const url = new URL(svc.url);

interface Opened {
  status: number;
  headers: IncomingMessage['headers'];
  /** Everything received so far. */
  text(): string;
  /** The `checkout` events received so far. */
  events(): number;
  /** Resolves once the edge ended the stream (or the connection). */
  closed: Promise<void>;
  close(): void;
}

/** Opens a stream and answers once `ready` came (or the refusal, read whole). */
function openStream(token: string, project = TestProject): Promise<Opened> {
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    req = httpRequest({ host: url.hostname, port: url.port, path: `/${project}/checkout/events`, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      let events = 0;
      let scanned = 0;
      const closed = new Promise<void>((done) => res.once('close', done));
      const opened: Opened = { status: res.statusCode ?? 0, headers: res.headers, text: () => text, events: () => events, closed, close: () => req!.destroy() };
      res.setEncoding('utf8');
      // Counted as it comes (a reader that keeps up): each chunk is scanned once.
      res.on('data', (chunk: string) => {
        text += chunk;
        for (let at = text.indexOf('event: ', scanned); at >= 0 && at + 15 <= text.length; at = text.indexOf('event: ', scanned)) {
          if (text.startsWith('event: ready', at)) resolve(opened);
          if (text.startsWith('event: checkout', at)) events++;
          scanned = at + 7;
        }
      });
      res.on('error', () => {});
      res.once('end', () => resolve(opened));
    });
    req.on('error', reject);
    req.end();
  });
}

function publish(project: string, n: number, bytes = 100): void {
  const payload = JSON.stringify({ project, id: `p-${n}`, event: 'created', pad: 'x'.repeat(bytes) });
  svc.nc.publish(`events.${project}.checkout.p-${n}.created`, payload);
}

t.test('past its token\'s cap a stream is 429 with Retry-After and the error shape; the open ones keep receiving; one that closes frees its slot', async (t) => {
  const token = await svc.token(['supervisor'], { sub: 'screen-a' });
  const streams = [await openStream(token), await openStream(token)];
  t.same(streams.map((s) => s.status), [200, 200], 'two streams open');

  const refused = await openStream(token);
  t.equal(refused.status, 429);
  t.equal(refused.headers['retry-after'], '10', 'with Retry-After');
  t.match(JSON.parse(refused.text()), { type: 'too_many_requests', message: /live streams/ }, 'in the error shape');

  publish(TestProject, 1);
  await svc.nc.flush();
  for (const [i, s] of streams.entries()) await eventually(`stream ${i} receives the event`, async () => (s.text().includes('"id":"p-1"') ? true : undefined));

  streams[0]!.close();
  const again = await eventually('a slot is free again', async () => {
    const s = await openStream(token);
    return s.status === 200 ? s : undefined;
  });
  t.equal(again.status, 200, 'a closed stream frees its slot');
  again.close();
  streams[1]!.close();
});

t.test('a project holds at most its cap of streams, whichever tokens hold them; other projects are not touched', async (t) => {
  const tokens = await Promise.all(['b', 'c', 'd'].map((sub) => svc.token(['supervisor'], { sub: `screen-${sub}` })));
  const open = [await openStream(tokens[0]!), await openStream(tokens[0]!), await openStream(tokens[1]!)];
  t.same(open.map((s) => s.status), [200, 200, 200]);
  const refused = await openStream(tokens[2]!);
  t.equal(refused.status, 429, 'a token with no stream of its own is refused once the project holds its cap');
  t.ok(refused.headers['retry-after']);

  const other = await openStream(await svc.token(['supervisor'], { project: 'other-test02', sub: 'screen-b' }), 'other-test02');
  t.equal(other.status, 200, "another project's token opens its own");
  other.close();
  for (const s of open) s.close();
});

t.test("a portal session's streams count as its own, under the same cap", async (t) => {
  const user = await portalUser(svc, 'supervisor', 'screens@example.com');
  const origin = new URL(svc.url).origin;
  const signIn = await svc.request('POST', '/portal/api/session', { body: { project: TestProject, ...user }, headers: { origin } });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  const open = () =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: `${p}/checkout/events`, headers: { cookie } }, resolve);
      req.on('error', reject);
      req.end();
    });
  const held = [await open(), await open()];
  t.same(held.map((r) => r.statusCode), [200, 200]);
  const refused = await open();
  t.equal(refused.statusCode, 429, 'the third stream of one session is refused');
  t.ok(refused.headers['retry-after']);
  for (const r of [...held, refused]) r.destroy();
});

/** A raw client that sends the request, reads up to `ready`, then stops reading. */
function slowReader(token: string, project: string): Promise<{ socket: Socket; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('event: ready')) return;
      socket.off('data', onData);
      socket.pause();
      resolve({ socket, head });
    };
    socket.on('data', onData);
    socket.on('error', () => {});
    socket.once('connect', () => socket.write(`GET /${project}/checkout/events HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`));
    socket.once('close', () => reject(new Error(`closed before ready: ${head}`)));
  });
}

t.test('a client that stops reading is dropped once its bytes pass the bound; a reading one gets every event and the edge stays up', async (t) => {
  const project = 'slow-test03';
  const token = await svc.token(['supervisor'], { project, sub: 'slow' });
  const slow = await slowReader(token, project);
  t.match(slow.head, /^HTTP\/1\.1 200/, 'the slow reader was let in');
  const reader = await openStream(token, project);
  t.equal(reader.status, 200);

  // 16 KiB events, 128 KiB at a time (a burst under the bound: the reading client shares this
  // process's event loop with the edge), until the slow reader's slot is free (it was dropped), at most 64 MiB.
  let published = 0;
  let freed: Opened | undefined;
  while (!freed && published < 4096) {
    for (let i = 0; i < 8; i++) publish(project, published++, 16 * 1024);
    await svc.nc.flush();
    const attempt = await openStream(token, project);
    if (attempt.status === 200) freed = attempt;
  }
  t.ok(freed, `the slow reader was dropped (after ${published} events of 16 KiB)`);
  t.ok(published < 4096, 'long before 64 MiB were sent');

  await eventually('the reading client receives every event', async () => (reader.events() >= published ? true : undefined));
  t.equal(reader.events(), published, 'the reading client got each event once');
  t.ok(reader.text().endsWith(`"id":"p-${published - 1}"` + ',"event":"created","pad":"' + 'x'.repeat(16 * 1024) + '"}\n\n'), 'the last one last');

  // The slow reader reads what its kernel buffers hold, then finds its connection ended by the edge.
  let drained = 0;
  slow.socket.on('data', (chunk: Buffer) => (drained += chunk.length));
  const ended = new Promise<void>((resolve) => slow.socket.once('close', () => resolve()));
  slow.socket.resume();
  await ended;
  t.ok(drained < published * 16 * 1024, `the slow reader got only part of the events (${drained} bytes)`);

  t.equal((await svc.request('GET', '/health/ready')).status, 200, 'the edge stays up');
  freed?.close();
  reader.close();
});
