import { createServer, connect, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { startMoreEdge, startMoreWorkers, startTestService, TestProject } from './support/service.js';

t.test('is 200 when NATS and Postgres answer and every migration is applied', async (t) => {
  const svc = await startTestService(t);
  const res = await svc.request('GET', '/health');
  t.equal(res.status, 200);
  t.same(res.body, { status: 'ok', checks: { nats: 'ok', postgres: 'ok', migrations: 'ok' } });
});

t.test('is 503 when a migration is missing from the database', async (t) => {
  const svc = await startTestService(t);
  await svc.sql`delete from schema_migrations where id = (select max(id) from schema_migrations)`;
  const res = await svc.request('GET', '/health');
  t.equal(res.status, 503);
  t.same(res.body, { status: 'unavailable', checks: { nats: 'ok', postgres: 'ok', migrations: 'pending' } });
  t.equal(res.headers.get('retry-after'), '2', 'a 503 says when to ask again');
});

t.test('is 503 when no worker can check Postgres', async (t) => {
  const svc = await startTestService(t, { env: { ROLE: 'edge' } });
  const res = await svc.request('GET', '/health');
  t.equal(res.status, 503);
  t.same(res.body, { status: 'unavailable', checks: { nats: 'ok', postgres: 'unknown', migrations: 'unknown' } });

  const call = await svc.request('GET', `/${TestProject}/shops`, { token: await svc.token(['shopsRead']) });
  t.equal(call.status, 503, 'a call no worker takes is 503 too');
  t.equal(call.body.type, 'service_unavailable');
  t.equal(call.headers.get('retry-after'), '2', 'with Retry-After');
});

/**
 * A TCP proxy in front of Postgres or NATS that a test can cut (connections refused, open ones
 * dropped) and restore on the same port: the service behind it finds the server unreachable.
 */
interface Cuttable {
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
}

async function cuttableProxy(t: Test, target: string): Promise<Cuttable> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(Number(to.port), to.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server = undefined;
      for (const s of sockets) s.destroy();
    });
  await open();
  t.teardown(cut);
  const url = new URL(target);
  url.port = String(port);
  return { url: url.toString().replace(/\/$/, ''), cut, restore: open };
}

/** Polls until the check holds (a connection notices a cut server within moments, not at once). */
async function eventually<T>(read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 200 && !holds(value); i++) {
    await sleep(50);
    value = await read();
  }
  return value;
}

t.test('/health/live is 200 while the process runs; /health/ready is 200 when it can serve', async (t) => {
  const svc = await startTestService(t);
  const live = await svc.request('GET', '/health/live');
  t.equal(live.status, 200);
  t.same(live.body, { status: 'ok' });
  const ready = await svc.request('GET', '/health/ready');
  t.equal(ready.status, 200);
  t.same(ready.body, { status: 'ok', checks: { nats: 'ok', postgres: 'ok', migrations: 'ok' } });
});

t.test('/health/ready is 503 naming Postgres while it is unreachable, and 200 again after', async (t) => {
  const svc = await startTestService(t, { env: { ROLE: 'edge' } });
  const postgres = await cuttableProxy(t, svc.databaseUrl);
  await startMoreWorkers(t, svc, { DATABASE_URL: postgres.url });
  t.equal((await svc.request('GET', '/health/ready')).status, 200);

  await postgres.cut();
  const down = await eventually(() => svc.request('GET', '/health/ready'), (r) => r.status === 503);
  t.equal(down.status, 503);
  t.same(down.body, { status: 'unavailable', checks: { nats: 'ok', postgres: 'unavailable', migrations: 'pending' } });
  t.equal(down.headers.get('retry-after'), '2');
  t.equal((await svc.request('GET', '/health/live')).status, 200, 'alive all the same');

  await postgres.restore();
  const up = await eventually(() => svc.request('GET', '/health/ready'), (r) => r.status === 200);
  t.equal(up.status, 200, 'ready again once Postgres answers');
});

t.test('/health/ready is 503 naming NATS while it is unreachable, and 200 again after', async (t) => {
  const svc = await startTestService(t);
  const nats = await cuttableProxy(t, svc.natsUrl);
  const edge = await startMoreEdge(t, svc, { NATS_URL: nats.url });
  t.equal((await edge.request('GET', '/health/ready')).status, 200);

  await nats.cut();
  const down = await eventually(() => edge.request('GET', '/health/ready'), (r) => r.status === 503);
  t.equal(down.status, 503);
  t.match(down.body, { status: 'unavailable', checks: { nats: 'unavailable' } });
  t.equal((await edge.request('GET', '/health/live')).status, 200, 'alive all the same');

  await nats.restore();
  const up = await eventually(() => edge.request('GET', '/health/ready'), (r) => r.status === 200);
  t.equal(up.status, 200, 'ready again once it reconnected');
});
