import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

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
