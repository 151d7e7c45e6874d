import { headers } from '@nats-io/transport-node';
import t from 'tap';
import { createLogger } from '../src/logger.js';
import { createPublisher } from '../src/messaging/publisher.js';
import { route, serveEndpoints } from '../src/messaging/worker.js';
import { ErrorHeaders } from '../subjects/contract.js';
import { shops } from '../subjects/shops.js';
import { startTestService, TestProject } from './support/service.js';

t.test('a worker answers malformed messages with a typed error reply, never a crash', async (t) => {
  const svc = await startTestService(t);

  const notJson = await svc.nc.request(shops.get.subject, 'not json', { timeout: 2000 });
  t.equal(notJson.headers?.get(ErrorHeaders.code), '400');
  t.match(notJson.json(), { type: 'bad_request' });

  const wrongShape = await svc.nc.request(shops.get.subject, JSON.stringify({ project: TestProject }), { timeout: 2000 });
  t.equal(wrongShape.headers?.get(ErrorHeaders.code), '400');
  t.match(wrongShape.json(), { type: 'bad_request', details: [{ path: 'id' }] });

  const h = headers();
  h.set('x-anything', 'ignored');
  const good = await svc.nc.request(shops.get.subject, JSON.stringify({ project: TestProject, id: 'nope' }), { timeout: 2000, headers: h });
  t.equal(good.headers?.get(ErrorHeaders.code), '404', 'a worker error crosses with its status');
  t.same(good.json(), { type: 'not_found', message: 'no shop with id nope' });

  // The worker is still serving.
  const token = await svc.token(['shopsRead']);
  t.equal((await svc.request('GET', `/${TestProject}/shops`, { token })).status, 200);
});

t.test('answers 503 service_unavailable at once when no worker runs', async (t) => {
  // A long timeout, so that an answer well before it can only be NATS's "no responders".
  const svc = await startTestService(t, { env: { ROLE: 'edge', REQUEST_TIMEOUT_MS: '30000' } });
  const token = await svc.token(['shopsRead']);
  const started = Date.now();
  const res = await svc.request('GET', `/${TestProject}/shops`, { token });
  t.equal(res.status, 503);
  t.same(res.body, { type: 'service_unavailable', message: 'no worker is available to handle this request' });
  t.ok(Date.now() - started < 10_000, 'NATS reports "no responders" instead of a wait for the timeout');
});

t.test('answers 503 service_unavailable when the worker does not answer in time', async (t) => {
  const svc = await startTestService(t, { env: { ROLE: 'edge', REQUEST_TIMEOUT_MS: '300' } });
  // A worker that takes the request and never answers.
  const stuck = svc.nc.subscribe(shops.list.subject, { queue: shops.list.queue, callback: () => {} });
  t.teardown(() => stuck.unsubscribe());
  await svc.nc.flush();
  const token = await svc.token(['shopsRead']);
  const res = await svc.request('GET', `/${TestProject}/shops`, { token });
  t.equal(res.status, 503);
  t.same(res.body, { type: 'service_unavailable', message: 'the service did not answer in time' });
});

t.test('answers 500 when a reply breaks its contract, without showing it', async (t) => {
  const svc = await startTestService(t, { env: { ROLE: 'edge' } });
  // An endpoint whose reply the edge reads (shops.get's it passes on as the worker wrote it).
  const liar = svc.nc.subscribe(shops.findByExternalId.subject, {
    queue: shops.findByExternalId.queue,
    callback: (_err, msg) => {
      msg.respond(JSON.stringify({ id: 'x', secret: 'internal detail' }));
    },
  });
  t.teardown(() => liar.unsubscribe());
  await svc.nc.flush();
  const token = await svc.token(['shopsRead']);
  const res = await svc.request('GET', `/${TestProject}/shops/search?externalId=x`, { token });
  t.equal(res.status, 500);
  t.same(res.body, { type: 'internal_error', message: 'internal server error' });
});

t.test('spreads requests over the workers of a queue group', async (t) => {
  const svc = await startTestService(t);
  const counted: string[] = [];
  // A second worker of the shops domain beside the service's own.
  const second = svc.nc.subscribe(shops.list.subject, {
    queue: shops.list.queue,
    callback: (_err, msg) => {
      counted.push(msg.subject);
      msg.respond('[]');
    },
  });
  t.teardown(() => second.unsubscribe());
  await svc.nc.flush();
  const token = await svc.token(['shopsRead']);
  for (let i = 0; i < 40; i++) t.equal((await svc.request('GET', `/${TestProject}/shops`, { token })).status, 200);
  t.ok(counted.length > 0 && counted.length < 40, `both workers served (${counted.length} of 40 by the second)`);
});

t.test('a repeatable request that found the database unreachable runs again; any other answers 503 at once', async (t) => {
  const svc = await startTestService(t, { env: { ROLE: 'edge', REQUEST_TIMEOUT_MS: '5000' } });
  // A pool that handed out a connection which died with a restarted server: the first query fails.
  const deadConnection = () => Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' });
  const calls = { get: 0, create: 0 };
  const shop = {
    id: 's1', project: TestProject, externalId: '', name: 'Bahnhof', email: '', phone: '', street: '', zip: '', city: '', state: '', country: 'DE',
    lat: 0, lon: 0, openingHoursSpecification: [], services: [], external: {}, links: { self: { href: `/${TestProject}/shops/s1` } },
  };
  const server = serveEndpoints({ nc: svc.nc, publisher: createPublisher(svc.nc), log: createLogger({ level: 'silent' }) }, [
    route(shops.get, async () => {
      if (calls.get++ === 0) throw deadConnection();
      return shop;
    }),
    route(shops.create, async () => {
      calls.create++;
      throw deadConnection();
    }),
  ]);
  t.teardown(() => server.stop());
  await svc.nc.flush();

  const read = await svc.request('GET', `/${TestProject}/shops/s1`, { token: await svc.token(['shopsRead']) });
  t.equal(read.status, 200, `the read ran again and answered: ${read.text}`);
  t.equal(calls.get, 2);
  const created = await svc.request('POST', `/${TestProject}/shops`, { token: await svc.token(['shopsWrite']), body: { name: 'Bahnhof' } });
  t.equal(created.status, 503, created.text);
  t.equal(created.body.message, 'the database is not reachable; try again');
  t.equal(calls.create, 1, 'a create without its id runs once');
});
