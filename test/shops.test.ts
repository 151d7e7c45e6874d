import t from 'tap';
import { Shop } from '../subjects/shops.js';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const reader = await svc.token(['shopsRead']);
const writer = await svc.token(['shopsRead', 'shopsWrite']);
const base = `/${TestProject}/shops`;

const mitte = {
  externalId: 'B-001',
  name: 'Acme Berlin Mitte',
  email: 'mitte@acme.example',
  phone: '+49 30 123456',
  street: 'Torstraße 1',
  zip: '10119',
  city: 'Berlin',
  state: 'Berlin',
  country: 'DE',
  lat: 52.5291,
  lon: 13.4013,
  openingHoursSpecification: [
    { dayOfWeek: 'MONDAY', opens: '08:00', closes: '13:00' },
    { dayOfWeek: 'MONDAY', opens: '14:00', closes: '20:00' },
    { dayOfWeek: 'SATURDAY', opens: '09:00', closes: '24:00' },
  ],
  services: ['parking', 'bakery'],
  external: { region: { id: 7, name: 'Nord' }, tags: ['flagship'], vending: null },
};

async function shopCount(): Promise<number> {
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from shops`;
  return row?.n ?? 0;
}

t.test('creates a shop with a generated id, answers 201 with Location, and returns every field', async (t) => {
  const res = await svc.request('POST', base, { token: writer, body: mitte });
  t.equal(res.status, 201);
  t.match(res.body.id, /^[0-9a-f-]{36}$/, 'the platform generated the id');
  t.equal(res.headers.get('location'), `${base}/${res.body.id}`);
  t.match(res.body, { ...mitte, project: TestProject, links: { self: { href: `${base}/${res.body.id}` } } });
  t.same(res.body.external, mitte.external, 'the external object comes back whole');

  const got = await svc.request('GET', `${base}/${res.body.id}`, { token: reader });
  t.equal(got.status, 200);
  t.same(got.body, res.body, 'what is read is what was created');
  t.equal(got.headers.get('content-type'), 'application/json; charset=utf-8');
  const contract = Shop.safeParse(got.body);
  t.ok(contract.success, contract.error?.message ?? 'the shop the worker wrote (the edge passes it on unparsed) follows the Shop schema');
});

t.test('creates a shop with the id the client gives', async (t) => {
  const res = await svc.request('POST', base, { token: writer, body: { id: '42', name: 'Acme 42' } });
  t.equal(res.status, 201);
  t.equal(res.body.id, '42');
  t.equal(res.headers.get('location'), `${base}/42`);
  t.match(res.body, { externalId: '', street: '', openingHoursSpecification: [], services: [], external: {} }, 'unset fields have empty values');
  t.same([res.body.lat, res.body.lon], [0, 0], 'an unknown position is 0,0: the app SDKs need numbers');

  const again = await svc.request('POST', base, { token: writer, body: { id: '42', name: 'Other' } });
  t.equal(again.status, 409);
  t.equal(again.body.type, 'conflict');
  t.equal((await svc.request('GET', `${base}/42`, { token: reader })).body.name, 'Acme 42', 'the first shop is unchanged');
});

t.test('lists the shops of the project only', async (t) => {
  const other = await svc.token(['shopsWrite'], { project: 'other-project' });
  t.equal((await svc.request('POST', '/other-project/shops', { token: other, body: { name: 'Elsewhere' } })).status, 201);

  const res = await svc.request('GET', base, { token: reader });
  t.equal(res.status, 200);
  t.ok(Array.isArray(res.body));
  t.ok(res.body.length >= 2);
  t.ok(res.body.every((s: { project: string }) => s.project === TestProject), 'no shop of another project');
});

t.test('finds a shop by its external id, with or without the trailing slash', async (t) => {
  const slash = await svc.request('GET', `${base}/search/?externalId=B-001`, { token: reader });
  t.equal(slash.status, 200);
  t.equal(slash.body.name, mitte.name);
  const noSlash = await svc.request('GET', `${base}/search?externalId=B-001`, { token: reader });
  t.same(noSlash.body, slash.body);

  const unknown = await svc.request('GET', `${base}/search/?externalId=nope`, { token: reader });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.type, 'not_found');

  const missing = await svc.request('GET', `${base}/search/`, { token: reader });
  t.equal(missing.status, 400);
  t.equal(missing.body.type, 'bad_request');
});

t.test('accepts the externalID spelling of sample payloads', async (t) => {
  const res = await svc.request('POST', base, { token: writer, body: { name: 'Spelled', externalID: 'B-077' } });
  t.equal(res.status, 201);
  t.equal(res.body.externalId, 'B-077');
});

t.test('refuses a second shop with the same external id', async (t) => {
  const before = await shopCount();
  const res = await svc.request('POST', base, { token: writer, body: { name: 'Copy', externalId: 'B-001' } });
  t.equal(res.status, 409);
  t.equal(res.body.type, 'conflict');
  t.equal(await shopCount(), before, 'nothing stored');
});

t.test('replaces a shop with PUT', async (t) => {
  const created = (await svc.request('POST', base, { token: writer, body: { ...mitte, externalId: 'B-100' } })).body;
  const next = { name: 'Acme Mitte (renovated)', city: 'Berlin', openingHoursSpecification: [{ dayOfWeek: 'SUNDAY', opens: '10:00', closes: '16:00' }] };
  const res = await svc.request('PUT', `${base}/${created.id}`, { token: writer, body: next });
  t.equal(res.status, 200);
  t.match(res.body, { id: created.id, ...next, externalId: '', street: '', services: [], external: {} }, 'PUT replaces the whole shop');

  const withId = await svc.request('PUT', `${base}/${created.id}`, { token: writer, body: { ...next, id: created.id } });
  t.equal(withId.status, 200, 'the body may repeat the path id');

  const mismatch = await svc.request('PUT', `${base}/${created.id}`, { token: writer, body: { ...next, id: 'other', name: 'X' } });
  t.equal(mismatch.status, 400);
  t.equal((await svc.request('GET', `${base}/${created.id}`, { token: reader })).body.name, next.name, 'unchanged after the refused PUT');

  const taken = await svc.request('PUT', `${base}/${created.id}`, { token: writer, body: { name: 'X', externalId: 'B-001' } });
  t.equal(taken.status, 409, 'an external id of another shop is refused on update too');

  const unknown = await svc.request('PUT', `${base}/does-not-exist`, { token: writer, body: next });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.type, 'not_found');
});

t.test('deletes a shop: 200, then 404', async (t) => {
  const created = (await svc.request('POST', base, { token: writer, body: { name: 'Short-lived' } })).body;
  const res = await svc.request('DELETE', `${base}/${created.id}`, { token: writer });
  t.equal(res.status, 200);
  t.equal(res.text, '');
  t.equal((await svc.request('GET', `${base}/${created.id}`, { token: reader })).status, 404);
  const again = await svc.request('DELETE', `${base}/${created.id}`, { token: writer });
  t.equal(again.status, 404);
  t.equal(again.body.type, 'not_found');
});

t.test('answers 404 not_found for an unknown shop id', async (t) => {
  const res = await svc.request('GET', `${base}/unknown-shop`, { token: reader });
  t.equal(res.status, 404);
  t.same(res.body, { type: 'not_found', message: 'no shop with id unknown-shop' });
});

t.test('validates a shop and lists every problem at once, storing nothing', async (t) => {
  const before = await shopCount();
  const res = await svc.request('POST', base, {
    token: writer,
    body: {
      name: 42,
      email: ['not', 'text'],
      lat: 91,
      lon: -181,
      openingHoursSpecification: [
        { dayOfWeek: 'Mondays', opens: '8:00', closes: '20:00' },
        { dayOfWeek: 'TUESDAY', opens: '08:00', closes: '24:01' },
      ],
      services: 'parking',
      external: [1, 2],
    },
  });
  t.equal(res.status, 400);
  t.equal(res.body.type, 'bad_request');
  const paths = res.body.details.map((d: { path: string }) => d.path).sort();
  t.same(paths, [
    'email',
    'external',
    'lat',
    'lon',
    'name',
    'openingHoursSpecification.0.dayOfWeek',
    'openingHoursSpecification.0.opens',
    'openingHoursSpecification.1.closes',
    'services',
  ]);
  t.equal(await shopCount(), before, 'nothing stored');
});

t.test('refuses a shop id with characters that do not fit a path', async (t) => {
  const res = await svc.request('POST', base, { token: writer, body: { id: 'a/b c', name: 'Slash' } });
  t.equal(res.status, 400);
  t.equal(res.body.details[0].path, 'id');
});

t.test('refuses a body that is not JSON', async (t) => {
  const res = await svc.request('POST', base, { token: writer, raw: '{"name": "broken"', headers: { 'content-type': 'application/json' } });
  t.equal(res.status, 400);
  t.equal(res.body.type, 'bad_request');
});

t.test('needs shopsRead to read and shopsWrite to change', async (t) => {
  const before = await shopCount();
  t.equal((await svc.request('POST', base, { token: reader, body: { name: 'No' } })).status, 403);
  t.equal((await svc.request('PUT', `${base}/42`, { token: reader, body: { name: 'No' } })).status, 403);
  t.equal((await svc.request('DELETE', `${base}/42`, { token: reader })).status, 403);
  t.equal(await shopCount(), before, 'nothing changed');
  t.equal((await svc.request('GET', `${base}/42`, { token: reader })).body.name, 'Acme 42');

  const writeOnly = await svc.token(['shopsWrite']);
  for (const path of [base, `${base}/42`, `${base}/search?externalId=B-001`]) {
    const res = await svc.request('GET', path, { token: writeOnly });
    t.equal(res.status, 403, `GET ${path} needs shopsRead`);
    t.equal(res.body.type, 'forbidden');
  }
});
