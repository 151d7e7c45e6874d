import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { errors, type Msg } from '@nats-io/transport-node';
import t from 'tap';
import { signToken } from '../src/auth/tokens.js';
import { loadConfig } from '../src/config.js';
import { freePort } from '../src/infra/processes.js';
import { createLogger } from '../src/logger.js';
import { startService, type RunningService } from '../service/start.js';
import { runBuilt, waitForHttp } from './support/process.js';
import { provisionInfrastructure, startTestService, TestCheckoutSecret, TestProject, TestSecret } from './support/service.js';

/**
 * Graceful shutdown: SIGTERM (the one path of SIGINT, SIGTERM and SIGHUP in service/main.ts) drains.
 * An edge answers /health/ready 503 at once, then refuses new connections, finishes the requests in
 * flight and exits 0; a worker stops taking requests, finishes the ones it holds and exits 0; a
 * rolling restart of every process under load answers no 5xx. Run `npm run build` first.
 */
const infra = await provisionInfrastructure(t);
const nc = await infra.connectAs('admin');
t.teardown(() => nc.close());

async function eventually<T>(read: () => Promise<T>, holds: (value: T) => boolean, tries = 400): Promise<T> {
  let value = await read();
  for (let i = 0; i < tries && !holds(value); i++) {
    await sleep(50);
    value = await read();
  }
  return value;
}

/** A fetch that answers its status and body, or `refused` when no connection could be made. */
async function get(url: string): Promise<{ status: number; body: any } | 'refused'> {
  try {
    const res = await fetch(url);
    return { status: res.status, body: await res.json().catch(() => undefined) };
  } catch {
    return 'refused';
  }
}

const token = (permissions: string[]) =>
  signToken({ project: TestProject, permissions: permissions as never }, { secret: TestSecret, issuer: 'checkout-platform', audience: 'checkout-platform' });

const heldShop = (id: string) => ({
  id, project: TestProject, externalId: '', name: 'Held', email: '', phone: '', street: '', zip: '', city: '', state: '', country: '',
  lat: 0, lon: 0, openingHoursSpecification: [], services: [], external: {}, links: { self: { href: `/${TestProject}/shops/${id}` } },
});

t.test('SIGTERM drains an edge: not ready at once, then no new connections, the request in flight answered, exit 0', async (t) => {
  // This test plays the workers: it holds the shop request and answers the health question.
  const held: Msg[] = [];
  const shops = nc.subscribe('svc.shops.get', { queue: 'shops', callback: (_err, msg) => void held.push(msg) });
  const health = nc.subscribe('svc.system.health', {
    queue: 'system',
    callback: (_err, msg) => void msg.respond(JSON.stringify({ postgres: 'ok', migrations: 'ok', pendingMigrations: [] })),
  });
  t.teardown(() => {
    shops.unsubscribe();
    health.unsubscribe();
  });
  await nc.flush();

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = runBuilt(t, 'service/main.js', {
    NODE_ENV: 'test', ROLE: 'edge', ...infra.natsEnv('edge'), JWT_SECRET: TestSecret, PORT: String(port), DATA_DIR: infra.dataDir,
    LOG_LEVEL: 'info', LOG_FORMAT: 'json', SHUTDOWN_DELAY_MS: '5000', SHUTDOWN_GRACE_MS: '60000', REQUEST_TIMEOUT_MS: '60000',
  });
  await waitForHttp(`${base}/health/live`, 60_000, service);
  t.match(await get(`${base}/health/ready`), { status: 200 }, 'ready before');

  const inFlight = fetch(`${base}/${TestProject}/shops/slow`, { headers: { authorization: `Bearer ${await token(['shopsRead'])}` } });
  await eventually(async () => held.length, (n) => n === 1);
  t.equal(held.length, 1, 'the request reached the worker, which holds it');

  service.child.kill('SIGTERM');
  const draining = await eventually(() => get(`${base}/health/ready`), (r) => r !== 'refused' && r.status === 503);
  t.match(draining, { status: 503, body: { status: 'unavailable', draining: true } }, 'not ready while draining (SHUTDOWN_DELAY_MS)');
  t.match(await get(`${base}/health/live`), { status: 200 }, 'alive meanwhile');

  const refused = await eventually(() => get(`${base}/health/live`), (r) => r === 'refused');
  t.equal(refused, 'refused', 'then new connections are refused');
  t.equal(service.child.exitCode, null, 'while the request in flight runs, the process waits');

  held[0]!.respond(JSON.stringify(heldShop('slow')));
  const answer = await inFlight;
  t.equal(answer.status, 200, 'the request in flight is answered');
  t.equal(((await answer.json()) as { id: string }).id, 'slow');
  t.equal(await service.exited, 0, 'and the process exits 0');
  t.match(service.output(), /"msg":"shutting down"/);
});

t.test('SIGTERM drains a worker: it takes no new request, answers the one it holds, and exits 0', async (t) => {
  const db = (await import('postgres')).default(infra.databaseUrl, { max: 2, onnotice: () => {} });
  t.teardown(() => db.end());
  const service = runBuilt(t, 'service/main.js', {
    NODE_ENV: 'test', ROLE: 'workers', ...infra.natsEnv('workers'), DATABASE_URL: infra.databaseUrl, CHECKOUT_SIGNING_SECRET: TestCheckoutSecret,
    DATA_DIR: infra.dataDir, LOG_LEVEL: 'info', LOG_FORMAT: 'json', CLOSING_SCHEDULER_ENABLED: 'false',
  });
  const up = await eventually(
    () => nc.request('svc.system.health', '{}', { timeout: 1000 }).then(() => true, () => false),
    (ok) => ok,
    1200,
  );
  t.ok(up, 'the worker answers', { output: service.output() });

  let answer: Promise<Msg> | undefined;
  await db.begin(async (tx) => {
    // The shops table locked: the worker's insert waits, holding the request.
    await tx`lock table shops in exclusive mode`;
    answer = nc.request('svc.shops.create', JSON.stringify({ project: TestProject, shop: { id: 'held-by-worker', name: 'Held' } }), { timeout: 60_000 });
    const waiting = await eventually(
      // In this test's database only: beside it, other test files share the server, and a waiting
      // insert of theirs made this one SIGTERM a worker that had not yet received the request.
      async () => (await db`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'insert into shops%'`)[0]!.n as number,
      (n) => n > 0,
    );
    t.equal(waiting, 1, 'the worker holds the request');
    service.child.kill('SIGTERM');
    // No worker is "no responders" from the server once the worker's subscription is gone; a
    // request that only timed out may have met a worker too busy to answer within the second.
    const refused = await eventually(
      () =>
        nc.request('svc.shops.get', JSON.stringify({ project: TestProject, id: 'x' }), { timeout: 1000 }).then(
          () => 'answered',
          (err: unknown) => (err instanceof errors.NoRespondersError || (err instanceof errors.RequestError && err.isNoResponders()) ? 'no worker' : 'timed out'),
        ),
      (r) => r === 'no worker',
    );
    t.equal(refused, 'no worker', 'it takes no new request');
    t.equal(service.child.exitCode, null, 'it waits for the request it holds');
  });
  const reply = await answer!;
  t.equal((reply.json() as { id: string }).id, 'held-by-worker', 'the request it held is answered');
  t.equal(await service.exited, 0);
  t.match(service.output(), /"msg":"shutting down"/);
});

t.test('a rolling restart of every edge and worker under load answers no 5xx', async (t) => {
  const svc = await startTestService(t, { env: { ROLE: 'workers' } });
  const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const common = {
    NODE_ENV: 'test', DATA_DIR: svc.config.dataDir, LOG_LEVEL: 'silent', AUTH_FAILURE_LIMIT: '100000', CLOSING_SCHEDULER_ENABLED: 'false',
  };
  const start = (role: 'edge' | 'workers') =>
    startService(
      loadConfig({
        ...common, ...svc.infra.natsEnv(role), ROLE: role, JWT_SECRET: TestSecret, HOST: '127.0.0.1', PORT: '0',
        ...(role === 'workers' ? { DATABASE_URL: svc.databaseUrl, DATABASE_POOL_MAX: '4', CHECKOUT_SIGNING_SECRET: TestCheckoutSecret } : {}),
      }),
      log,
    );
  const running = new Set<RunningService>([svc.service]);
  t.teardown(async () => {
    for (const s of running) await s.stop();
  });
  const launch = async (role: 'edge' | 'workers') => {
    const s = await start(role);
    running.add(s);
    return s;
  };
  const workers = [svc.service, await launch('workers')];
  const edges = [await launch('edge'), await launch('edge')];
  const writer = `Bearer ${await token(['shopsRead', 'shopsWrite'])}`;

  // Clients retry a request whose connection failed (refused, reset) on the next edge, with the same Idempotency-Key.
  const statuses = new Map<number, number>();
  const created = new Set<string>();
  let turn = 0;
  let retried = 0;
  const send = async (path: string, init: RequestInit): Promise<Response> => {
    for (;;) {
      const edge = edges[turn++ % edges.length]!;
      try {
        const res = await fetch(`${edge.url}${path}`, init);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        return res;
      } catch {
        retried++;
        await sleep(20);
      }
    }
  };
  let loading = true;
  const client = async () => {
    while (loading) {
      const key = randomUUID();
      const create = () =>
        send(`/${TestProject}/shops`, {
          method: 'POST',
          headers: { authorization: writer, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ name: `rolling ${key}` }),
        });
      let res = await create();
      // A retry that overtook its first try (still running) is told to come back: it does.
      while (res.status === 409) {
        await res.arrayBuffer();
        res = await create();
      }
      if (res.status !== 201) continue;
      const { id } = (await res.json()) as { id: string };
      created.add(id);
      await (await send(`/${TestProject}/shops/${id}`, { headers: { authorization: writer } })).arrayBuffer();
    }
  };
  const clients = Array.from({ length: 6 }, client);

  // Each process in turn: its replacement starts, then it drains and stops (as SIGTERM does).
  for (const [list, role] of [[workers, 'workers'], [edges, 'edge'], [workers, 'workers'], [edges, 'edge']] as const) {
    await sleep(300);
    const old = list[0]!;
    list.push(await launch(role));
    await old.stop();
    list.splice(list.indexOf(old), 1);
    running.delete(old);
  }
  await sleep(300);
  loading = false;
  await Promise.all(clients);

  const answered = [...statuses.entries()].sort(([a], [b]) => a - b);
  t.same(answered.filter(([status]) => status >= 500), [], `no 5xx (answers by status: ${JSON.stringify(answered)}, connections retried: ${retried})`);
  t.ok(created.size > 10, `the load ran throughout (${created.size} shops)`);
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from shops where name like 'rolling %'`;
  t.equal(row?.n, created.size, 'a retried create ran once');
});
