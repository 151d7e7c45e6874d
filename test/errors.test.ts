import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import t from 'tap';
import { isDatabaseUnreachable } from '../src/infra/postgres.js';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const token = await svc.token(['shopsRead', 'shopsWrite']);

t.test('answers 404 not_found for an unknown route', async (t) => {
  for (const path of ['/nope', `/${TestProject}/nothing-here`, `/${TestProject}/shops/a/b/c`]) {
    const res = await svc.request('GET', path, { token });
    t.equal(res.status, 404, path);
    t.equal(res.body.type, 'not_found');
  }
});

t.test('answers 405 with Allow for a method the path does not support', async (t) => {
  const res = await svc.request('PATCH', `/${TestProject}/shops`, { token });
  t.equal(res.status, 405);
  t.equal(res.body.type, 'method_not_allowed');
  t.same(res.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD', 'POST']);

  const one = await svc.request('POST', `/${TestProject}/shops/some-id/`, { token });
  t.equal(one.status, 405, 'also with a trailing slash');
  t.same(one.headers.get('allow')?.split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PUT']);
});

t.test('answers 415 for a body type the route does not read', async (t) => {
  const res = await svc.request('POST', `/${TestProject}/shops`, { token, raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(res.status, 415);
  t.equal(res.body.type, 'unsupported_media_type');
});

t.test('answers 400 for malformed JSON and for an empty JSON body', async (t) => {
  const broken = await svc.request('POST', `/${TestProject}/shops`, { token, raw: '{"name":', headers: { 'content-type': 'application/json' } });
  t.equal(broken.status, 400);
  t.same(broken.body, { type: 'bad_request', message: 'the body is not valid JSON' });
  const empty = await svc.request('POST', `/${TestProject}/shops`, { token, raw: '', headers: { 'content-type': 'application/json' } });
  t.equal(empty.status, 400);
  t.equal(empty.body.type, 'bad_request');
});

t.test('answers 413 for a body above the size limit', async (t) => {
  const res = await svc.request('POST', `/${TestProject}/shops`, { token, body: { name: 'big', external: { blob: 'x'.repeat(1_100_000) } } });
  t.equal(res.status, 413);
  t.equal(res.body.type, 'payload_too_large');
});

t.test('lists validation issues of path parameters', async (t) => {
  const res = await svc.request('GET', `/${TestProject}/shops/${'x'.repeat(200)}`, { token });
  t.equal(res.status, 400);
  t.match(res.body, { type: 'bad_request', details: [{ path: 'id', code: 'too_big' }] });
});

t.test('answers 500 internal_error without internals when a worker fails', async (t) => {
  // Break the storage under the worker: the statement fails inside the actor.
  await svc.sql`alter table shops rename to shops_moved`;
  t.teardown(() => svc.sql`alter table shops_moved rename to shops`);
  const res = await svc.request('GET', `/${TestProject}/shops/any`, { token });
  t.equal(res.status, 500);
  t.same(res.body, { type: 'internal_error', message: 'internal server error' });
  t.notMatch(res.text, /shops|relation|postgres|stack|at /i, 'no SQL, table name or stack in the answer');
});

t.test('answers 503 service_unavailable with Retry-After, not 500, when the database connection is lost under a request', async (t) => {
  // Hold the shops table so that the worker's statement waits on it, then end that worker's connection.
  const blocker = await svc.sql.reserve();
  t.teardown(() => blocker.release());
  await blocker`begin`;
  await blocker`lock table shops in access exclusive mode`;
  const pending = svc.request('GET', `/${TestProject}/shops`, { token });
  let terminated: readonly unknown[] = [];
  for (let i = 0; i < 100 && terminated.length === 0; i++) {
    terminated = await svc.sql`
      select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name like 'checkout-platform%' and wait_event_type = 'Lock'`;
    if (terminated.length === 0) await sleep(20);
  }
  t.equal(terminated.length, 1, 'the waiting worker connection was ended');
  const res = await pending;
  await blocker`rollback`;
  t.equal(res.status, 503);
  t.equal(res.body.type, 'service_unavailable');
  t.ok(Number(res.headers.get('retry-after')) > 0, 'with Retry-After in seconds');
  t.notMatch(res.text, /terminat|postgres|57P01/i, 'no internals in the answer');

  const again = await svc.request('GET', `/${TestProject}/shops`, { token });
  t.equal(again.status, 200, 'the pool connects again on the next request');
});

t.test('tells an unreachable database from a wrong statement by codes alone', async (t) => {
  const pg = (code: string) => new postgres.PostgresError({ code, message: 'any text' } as never);
  const system = (code: string) => Object.assign(new Error('any text'), { code });
  for (const err of [pg('08006'), pg('08001'), pg('57P01'), pg('57P02'), pg('57P03'), pg('53300'), system('CONNECTION_CLOSED'), system('CONNECT_TIMEOUT'), system('ECONNREFUSED')]) {
    t.ok(isDatabaseUnreachable(err), `${(err as { code: string }).code} is unreachable`);
  }
  t.ok(isDatabaseUnreachable(new Error('wrapped', { cause: system('CONNECTION_ENDED') })), 'also as the cause of a wrapping error');
  for (const err of [pg('42P01'), pg('23505'), pg('40001'), system('08006'), new Error('connection refused'), 'ECONNREFUSED']) {
    t.notOk(isDatabaseUnreachable(err), `${String((err as { code?: string }).code ?? err)} is not`);
  }
});
