import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { connect, errors } from '@nats-io/transport-node';
import fc from 'fast-check';
import postgres from 'postgres';
import t, { type Test } from 'tap';
import { startNatsServer } from '../src/infra/nats.js';
import { poolStats } from '../src/infra/postgres.js';
import { createLogger } from '../src/logger.js';
import { createTestDatabase } from './support/database.js';

/**
 * One test per fix in patches/ (patches/README.md), each asserting what the fix gives, so that an
 * install where a patch did not apply, or a release that dropped the fix, fails here: not only a
 * look at the patched file's text. (`postinstall` runs patch-package with --error-on-fail, and the
 * patched packages are pinned to the versions the patches were made for.)
 */

interface PoolQueue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}

// The package exports neither its internals nor package.json: find its folder from the main entry (cjs/src/index.js).
const postgresDir = path.resolve(path.dirname(createRequire(import.meta.url).resolve('postgres')), '..', '..');
// The pool's internal queue, which the package does not export: loaded from its file.
const { default: Queue } = (await import(pathToFileURL(path.join(postgresDir, 'src/queue.js')).href)) as { default: <T>() => PoolQueue<T> };

const database = await createTestDatabase();
t.teardown(() => database.drop());

t.test("postgres queue.js: the pool's queue behaves like a plain array under any sequence of push, shift and remove", async () => {
  // Weighted so that the queue mostly grows: long runs of shifts without emptying reach the
  // compaction branch (more than 1024 holes), as a saturated pool does.
  const op = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('push' as const) }), weight: 5 },
    { arbitrary: fc.record({ kind: fc.constant('shift' as const) }), weight: 4 },
    { arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }), weight: 1 },
  );
  fc.assert(
    fc.property(fc.array(op, { minLength: 2000, maxLength: 12_000 }), (ops) => {
      const queue = Queue<number>();
      const model: number[] = [];
      let next = 0;
      for (const o of ops) {
        if (o.kind === 'push') {
          queue.push(next);
          model.push(next++);
        } else if (o.kind === 'shift') {
          if (queue.shift() !== model.shift()) return false;
        } else {
          // Remove something present, or something already gone (as the pool does after a shift).
          const candidate = o.pick % (next + 1);
          const at = model.indexOf(candidate);
          const removed = queue.remove(candidate);
          if (at === -1 ? removed !== null : removed !== candidate) return false;
          if (at !== -1) model.splice(at, 1);
        }
        if (queue.length !== model.length) return false;
      }
      return true;
    }),
    { numRuns: 60 },
  );
});

t.test("postgres queue.js: a pipelined query costs the pool's queue as much after 100 000 of them as at the start", async (t) => {
  // What the pool does when it pipelines onto a busy connection and the connections then finish:
  // shift it from `busy`, push it back, remove both. Unpatched, each round left a slot behind that
  // every later remove() scanned (measured: 0.3 µs a round at first, 32 µs after 40 000 rounds).
  // Counted, not timed (a shared machine only ever makes a timing slower): the longest array that
  // remove()'s indexOf walks.
  const round = (queue: PoolQueue<object>, a: object, b: object) => {
    queue.push(a);
    queue.push(b);
    queue.shift();
    queue.push(a);
    queue.remove(b);
    queue.remove(a);
  };
  const [a, b] = [{}, {}];
  const queue = Queue<object>();
  const indexOf = Array.prototype.indexOf;
  let longest = 0;
  Array.prototype.indexOf = function (this: unknown[], ...args: Parameters<typeof indexOf>) {
    longest = Math.max(longest, this.length);
    return indexOf.apply(this, args);
  };
  try {
    for (let i = 0; i < 100_000; i++) round(queue, a, b);
  } finally {
    Array.prototype.indexOf = indexOf;
  }
  t.equal(queue.length, 0);
  t.ok(longest <= 4, `after 100 000 rounds remove() walks an array of ${longest} slots at the most (unpatched: one more every round)`);
});

t.test("postgres index.js: sql.stats() tells the pool's connections in use and its waiting queries", async (t) => {
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  t.match(poolStats(sql), { max: 1, idle: 0, busy: 0, reserved: 0, waiting: 0 }, 'the patch adds stats(); without it poolStats answers undefined');
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let began!: () => void;
  const inTransaction = new Promise<void>((resolve) => (began = resolve));
  const transaction = sql.begin(async (tx) => {
    await tx`select 1`;
    began();
    await held;
  });
  await inTransaction;
  const waiting = sql`select 2`.execute();
  await new Promise(setImmediate);
  t.match(poolStats(sql), { max: 1, reserved: 1, waiting: 1 });
  release();
  await transaction;
  await waiting;
  t.match(poolStats(sql), { max: 1, reserved: 0, busy: 0, waiting: 0, idle: 1 });
});

/** A pool of one connection whose sockets the test holds (postgres.js's `socket` option), to close one when it chooses. */
function poolWithSockets(t: Test) {
  const sockets: net.Socket[] = [];
  const url = new URL(database.url);
  // A documented option (README "Custom socket") that the package's types leave out.
  const options = {
    max: 1,
    connect_timeout: 3,
    onnotice: () => {},
    socket: () => {
      const socket = net.connect(Number(url.port || 5432), url.hostname);
      sockets.push(socket);
      return socket;
    },
  };
  const sql = postgres(database.url, options as postgres.Options<Record<string, never>>);
  t.teardown(() => sql.end({ timeout: 1 }));
  return { sql, sockets };
}

t.test('postgres connection.js: a connection that closed with a write queued sends the next query after it reconnects', async (t) => {
  const { sql, sockets } = poolWithSockets(t);
  t.same(await sql`select 1 as n`, [{ n: 1 }]);
  // In an immediate callback: the query's write waits for the next immediate, and the socket's
  // close (in this turn of the event loop) comes before it. Unpatched, the closed connection kept
  // that dead timer, never armed another, and the next connection's startup was never sent: the
  // query hung until the connect timeout.
  const cut = await new Promise<Promise<unknown>>((resolve) =>
    setImmediate(() => {
      const query = sql`select 2`.execute();
      sockets[0]!.destroy();
      resolve(query.then(() => undefined, (err: unknown) => err));
    }),
  );
  t.match(await cut, { code: 'CONNECTION_CLOSED' }, 'the query on the closed connection fails as closed');
  const started = performance.now();
  t.same(await sql`select 3 as n`, [{ n: 3 }], 'the next query is answered');
  t.ok(performance.now() - started < 2500, 'without waiting for the connect timeout');
  t.equal(sockets.length, 2, 'on a new connection');
});

t.test("postgres connection.js: a query on a transaction's connection that closed fails as closed; the process lives", async (t) => {
  const { sql, sockets } = poolWithSockets(t);
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', record);
  t.teardown(() => process.off('uncaughtException', record));

  let after: Promise<unknown> | undefined;
  const transaction = sql.begin(async (tx) => {
    await tx`select 1`;
    const socket = sockets[0]!;
    socket.destroy();
    await once(socket, 'close');
    // The transaction goes on on its connection, which has no socket now. Unpatched, the write was
    // queued for an immediate that called write() on the null socket: a TypeError thrown from a
    // timer, which ends the process (a worker died at every Postgres restart).
    after = tx`select 2`.then(
      () => undefined,
      (err: unknown) => err,
    );
    await after;
  });
  t.match(await transaction.then(() => undefined, (err: unknown) => err), { code: 'CONNECTION_CLOSED' }, 'the transaction fails as closed');
  t.match(await after, { code: 'CONNECTION_CLOSED' }, 'and so does the query written after the close');
  // The transaction's own rollback after its callback: written (and failed) on an immediate too.
  await sleep(50);
  t.same(uncaught, [], 'nothing was thrown from a timer');
  t.same(await sql`select 4 as n`, [{ n: 4 }], 'the pool goes on');
});

t.test('nats-core request.js: an answered request builds no error', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'cp-patch-nats-'));
  const server = await startNatsServer({ storeDir: dir, log: createLogger({ level: 'silent' }) });
  // As the platform connects (src/infra/nats.ts): no error made per request for its stack.
  const nc = await connect({ servers: server.url, noAsyncTraces: true });
  t.teardown(async () => {
    await nc.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });
  nc.subscribe('echo', {
    callback: (_err, msg) => {
      msg.respond(msg.data);
    },
  });

  // Counts the RequestErrors made: the constructor sets `name`, which lands on this setter.
  let made = 0;
  Object.defineProperty(errors.RequestError.prototype, 'name', {
    configurable: true,
    get: () => 'RequestError',
    set(this: Error, value: string) {
      made++;
      Object.defineProperty(this, 'name', { value, writable: true, configurable: true });
    },
  });
  t.teardown(() => delete (errors.RequestError.prototype as { name?: string }).name);

  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => nc.request('echo', `n${i}`, { timeout: 5000 })));
  t.same(
    answers.map((m) => m.string()),
    Array.from({ length: 50 }, (_, i) => `n${i}`),
  );
  t.equal(made, 0, 'fifty answered requests made no RequestError (unpatched: one each, stack trace and all)');

  // What the patch keeps: requests that fail still fail as before.
  const unanswered = await nc.request('nobody.listens', 'x', { timeout: 2000 }).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(unanswered instanceof errors.RequestError && unanswered.isNoResponders(), 'a request nobody serves fails with no responders');
  nc.subscribe('silent', { callback: () => {} });
  const late = await nc.request('silent', 'x', { timeout: 200 }).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(late instanceof errors.TimeoutError, 'a request nobody answers in time fails with a timeout');
});
