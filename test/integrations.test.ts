import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

/**
 * The integrations resource over HTTP (docs/integrators.md): who may manage it, input that could
 * reach outside the project refused at its field with nothing made, credentials answered once.
 * What a NATS credential may do on the wire is test/nats-auth.test.ts; webhooks test/webhooks*.
 */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const owner = await svc.token(['projectsWrite']);

const list = async () => (await svc.request('GET', `${p}/integrations`, { token: owner })).body.integrations as any[];

t.test('refuses a filter that could reach outside the project, and a name over 100 characters, at its field; nothing is made', async (t) => {
  const bad: Array<[object, string]> = [
    [{ filter: 'pos..x' }, 'filter'],
    [{ filter: '.pos' }, 'filter'],
    [{ filter: 'pos.' }, 'filter'],
    [{ filter: 'po*s.>' }, 'filter'],
    [{ filter: 'pos>.x' }, 'filter'],
    [{ filter: '>.pos' }, 'filter'],
    [{ filter: 'pos. x' }, 'filter'],
    [{ filter: '' }, 'filter'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: '' }, 'name'],
  ];
  for (const [change, field] of bad) {
    const res = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'Kasse', kind: 'nats', ...change } });
    t.equal(res.status, 400, JSON.stringify(change));
    t.equal(res.body.type, 'bad_request');
    t.same(
      res.body.details.map((d: any) => d.path),
      [field],
      `the detail names ${field}`,
    );
  }
  const unknownKind = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'Kasse', kind: 'kafka' } });
  t.equal(unknownKind.status, 400);
  t.same(unknownKind.body.details.map((d: any) => d.path), ['kind']);
  t.same(await list(), [], 'nothing was made');
});

t.test('takes filters inside the project: whole-token wildcards, > last', async (t) => {
  for (const filter of ['>', 'pos.>', 'order.*.final', '*.*.created', 'pos.abc-123.pending']) {
    const res = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: filter, kind: 'nats', filter } });
    t.equal(res.status, 201, `${filter}: ${res.text}`);
    t.equal(res.body.nats.filterSubject, `events.${TestProject}.${filter}`);
    t.equal(res.headers.get('location'), res.body.links.self.href);
  }
});

t.test('answers the credential once: never in a list or a read', async (t) => {
  const made = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'Once', kind: 'nats' } });
  t.equal(made.status, 201);
  t.ok(made.body.creds);
  const read = await svc.request('GET', `${p}/integrations/${made.body.id}`, { token: owner });
  t.equal(read.status, 200);
  t.notOk('creds' in read.body);
  t.notOk(read.text.includes('NKEY'), 'no seed in the read');
  const listed = await svc.request('GET', `${p}/integrations`, { token: owner });
  t.notOk(listed.text.includes('NKEY'), 'no seed in the list');
  t.ok(listed.body.integrations.some((i: any) => i.id === made.body.id));
  // A user seed is SU and 56 base32 letters; the stored JWT is base64url and may hold "SU" anywhere.
  const seed = /SU[A-Z2-7]{56}/.exec(made.body.creds)?.[0];
  t.ok(seed, 'the creds hold the user seed');
  const stored = JSON.stringify(await svc.sql`select * from integrations where id = ${made.body.id}`);
  t.notOk(stored.includes(seed!) || /SU[A-Z2-7]{56}/.test(stored), 'the platform keeps no seed');
});

t.test('an unknown id is 404, and a malformed one 400; another permission is 403', async (t) => {
  const unknown = 'abcdefghijklmnopqrst';
  for (const [method, path] of [['GET', `${p}/integrations/${unknown}`], ['DELETE', `${p}/integrations/${unknown}`], ['POST', `${p}/integrations/${unknown}/rotate`], ['PATCH', `${p}/integrations/${unknown}`]] as const) {
    const res = await svc.request(method, path, { token: owner, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
    t.equal(res.status, 404, `${method} ${path}`);
    t.equal(res.body.type, 'not_found');
  }
  t.equal((await svc.request('GET', `${p}/integrations/not-an-id`, { token: owner })).status, 400);
  const reader = await svc.token(['ordersRead']);
  t.equal((await svc.request('GET', `${p}/integrations`, { token: reader })).status, 403);
  t.equal((await svc.request('POST', `${p}/integrations`, { token: reader, body: { name: 'x', kind: 'nats' } })).status, 403);
});

t.test('a nats integration has no url, event types or state to change', async (t) => {
  const made = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'Fixed', kind: 'nats' } });
  const res = await svc.request('PATCH', `${p}/integrations/${made.body.id}`, { token: owner, body: { url: 'https://example.com/hook', state: 'disabled' } });
  t.equal(res.status, 400);
  t.same(res.body.details.map((d: any) => d.path).sort(), ['state', 'url']);
  const renamed = await svc.request('PATCH', `${p}/integrations/${made.body.id}`, { token: owner, body: { name: 'Renamed' } });
  t.equal(renamed.status, 200, renamed.text);
  t.equal(renamed.body.name, 'Renamed');
});
