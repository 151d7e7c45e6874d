import t, { type Test } from 'tap';
import { p } from './support/checkout.js';
import { closingTokens } from './support/closing.js';
import type { HttpResponse } from './support/http.js';
import { startTestService } from './support/service.js';

const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
const tokens = await closingTokens(svc);
const admin = await svc.token(['shopsWrite']);
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's1', name: 'Shop 1' } });
await svc.request('POST', `${p}/shops`, { token: admin, body: { id: 's2', name: 'Shop 2' } });

const base = { shop: 's1', days: ['Monday', 'Friday'], location: 'Europe/Berlin' };
const create = (body: object, token = tokens.write) => svc.request('POST', `${p}/closings/schedules`, { token, body });
const get = (id: number | string, token = tokens.read) => svc.request('GET', `${p}/closings/schedules/id/${id}`, { token });
const put = (id: number | string, body: object, token = tokens.write) => svc.request('PUT', `${p}/closings/schedules/id/${id}`, { token, body });
const list = (token = tokens.read) => svc.request('GET', `${p}/closings/schedules`, { token });

function refused(t: Test, res: HttpResponse, status: number, type: string, field?: string) {
  t.equal(res.status, status, res.text);
  t.same(Object.keys(res.body).filter((k) => k !== 'details').sort(), ['message', 'type'], 'a plain {type, message}');
  t.equal(res.body.type, type);
  if (field) t.match(res.body.message, field, `the message names ${field}`);
}

t.test('creates a schedule with the defaults of every optional field, and reads it back', async (t) => {
  const res = await create(base);
  t.equal(res.status, 201, res.text);
  t.match(res.body, {
    id: Number,
    project: 'acme-test01',
    shop: 's1',
    days: ['Monday', 'Friday'],
    hour: 0,
    minute: 0,
    location: 'Europe/Berlin',
    mode: 'includeUntilExecution',
    includeAllStates: false,
    formats: [],
    batchFormats: [],
  });
  t.notOk('appendBatchEvery' in res.body, 'no batch interval unless given');
  t.equal(res.headers.get('location'), `${p}/closings/schedules/id/${res.body.id}`);
  t.equal(res.body.links.self.href, `${p}/closings/schedules/id/${res.body.id}`);
  const read = await get(res.body.id);
  t.equal(read.status, 200);
  t.same(read.body, res.body);
});

t.test('stores every field as given', async (t) => {
  const body = {
    shop: 's2', days: ['Sunday'], hour: 24, minute: 0, location: 'America/New_York', mode: 'includeUntilScheduled', includeAllStates: true,
    formats: ['dsfinvk_2023_03', 'aggregated_receipts'], appendBatchEvery: '1h30m0s', batchFormats: ['aggregated_receipts'],
  };
  const res = await create(body);
  t.equal(res.status, 201, res.text);
  t.match(res.body, body);
});

t.test('lists the schedules of the project with a self link', async (t) => {
  const res = await list();
  t.equal(res.status, 200);
  t.ok(res.body.schedules.length >= 2);
  t.same(res.body.links, { self: { href: `${p}/closings/schedules` } });
  t.ok(res.body.schedules.every((s: { project: string }) => s.project === 'acme-test01'));
});

t.test('replaces a schedule with PUT, and deletes it', async (t) => {
  const created = (await create(base)).body;
  const res = await put(created.id, { ...base, shop: 's2', days: ['Tuesday'], hour: 22, minute: 15, formats: ['aggregated_receipts'] });
  t.equal(res.status, 200, res.text);
  t.match(res.body, { id: created.id, shop: 's2', days: ['Tuesday'], hour: 22, minute: 15, formats: ['aggregated_receipts'], mode: 'includeUntilExecution' });
  t.same((await get(created.id)).body, res.body);
  const deleted = await svc.request('DELETE', `${p}/closings/schedules/id/${created.id}`, { token: tokens.write });
  t.equal(deleted.status, 200);
  refused(t, await get(created.id), 404, 'not_found');
  refused(t, await svc.request('DELETE', `${p}/closings/schedules/id/${created.id}`, { token: tokens.write }), 404, 'not_found');
});

t.test('answers 404 not_found for an unknown schedule, on every operation', async (t) => {
  refused(t, await get(999_999), 404, 'not_found');
  refused(t, await put(999_999, base), 404, 'not_found');
  refused(t, await svc.request('DELETE', `${p}/closings/schedules/id/999999`, { token: tokens.write }), 404, 'not_found');
});

const invalid: Array<[string, object, string]> = [
  ['a missing shop', { days: ['Monday'], location: 'UTC' }, 'shop'],
  ['a shop that does not exist', { ...base, shop: 'nope' }, 'shop'],
  ['a shop id that is no id', { ...base, shop: 'a b' }, 'shop'],
  ['missing days', { shop: 's1', location: 'UTC' }, 'days'],
  ['no day', { ...base, days: [] }, 'days'],
  ['a repeated day', { ...base, days: ['Monday', 'Monday'] }, 'days'],
  ['a day that is none', { ...base, days: ['Funday'] }, 'days'],
  ['a day spelled in lower case', { ...base, days: ['monday'] }, 'days'],
  ['hour 25', { ...base, hour: 25 }, 'hour'],
  ['hour -1', { ...base, hour: -1 }, 'hour'],
  ['a fractional hour', { ...base, hour: 1.5 }, 'hour'],
  ['hour 24 with a minute', { ...base, hour: 24, minute: 30 }, 'minute'],
  ['minute 60', { ...base, minute: 60 }, 'minute'],
  ['a minute as text', { ...base, minute: '5' }, 'minute'],
  ['a missing location', { shop: 's1', days: ['Monday'] }, 'location'],
  ['a zone that does not exist', { ...base, location: 'Europe/Atlantis' }, 'location'],
  ['an offset instead of a zone', { ...base, location: '+01:00' }, 'location'],
  ['an unknown mode', { ...base, mode: 'includeEverything' }, 'mode'],
  ['includeAllStates as text', { ...base, includeAllStates: 'yes' }, 'includeAllStates'],
  ['an unknown format', { ...base, formats: ['pdf'] }, 'formats'],
  ['a repeated format', { ...base, formats: ['aggregated_receipts', 'aggregated_receipts'] }, 'formats'],
  ['formats as text', { ...base, formats: 'dsfinvk_2023_03' }, 'formats'],
  ['an unknown batch format', { ...base, batchFormats: ['xml'] }, 'batchFormats'],
  ['a batch interval of another form', { ...base, appendBatchEvery: '5 minutes' }, 'appendBatchEvery'],
  ['a batch interval of nothing', { ...base, appendBatchEvery: '0h0m0s' }, 'appendBatchEvery'],
  ['a batch interval over a day', { ...base, appendBatchEvery: '25h' }, 'appendBatchEvery'],
  ['an empty batch interval', { ...base, appendBatchEvery: '' }, 'appendBatchEvery'],
];

t.test('refuses a bad body with 400 naming the field, and stores nothing', async (t) => {
  const before = (await list()).body.schedules.length;
  for (const [what, body, field] of invalid) {
    const res = await create(body);
    t.equal(res.status, 400, `${what}: ${res.text}`);
    t.equal(res.body.type, 'bad_request', what);
    t.match(res.body.message, field, `${what}: the message names ${field}`);
  }
  t.equal((await list()).body.schedules.length, before, 'no schedule was stored');
});

t.test('refuses a bad PUT with 400 naming the field and leaves the schedule as it was', async (t) => {
  const created = (await create({ ...base, hour: 7, formats: ['aggregated_receipts'] })).body;
  for (const [what, body, field] of invalid) {
    const res = await put(created.id, body);
    t.equal(res.status, 400, `${what}: ${res.text}`);
    t.match(res.body.message, field, what);
  }
  t.same((await get(created.id)).body, created, 'unchanged');
});

t.test('refuses a body that is not JSON', async (t) => {
  const res = await svc.request('POST', `${p}/closings/schedules`, { token: tokens.write, raw: '{"shop":', headers: { 'content-type': 'application/json' } });
  refused(t, res, 400, 'bad_request');
});

t.test('accepts hour 24 with minute 0 (the end of the day) and every day once', async (t) => {
  const res = await create({ ...base, days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'], hour: 24 });
  t.equal(res.status, 201, res.text);
  t.equal(res.body.hour, 24);
});

t.test('needs closingsRead to read and closingsWrite to write; 403 otherwise, and nothing changes', async (t) => {
  const other = await svc.token(['shopsRead', 'ordersRead']);
  const created = (await create(base)).body;
  refused(t, await list(other), 403, 'forbidden');
  refused(t, await get(created.id, other), 403, 'forbidden');
  refused(t, await get(created.id, tokens.write), 403, 'forbidden');
  refused(t, await create(base, tokens.read), 403, 'forbidden');
  refused(t, await put(created.id, { ...base, hour: 5 }, tokens.read), 403, 'forbidden');
  refused(t, await svc.request('DELETE', `${p}/closings/schedules/id/${created.id}`, { token: tokens.read }), 403, 'forbidden');
  refused(t, await svc.request('GET', `${p}/closings/schedules`), 403, 'forbidden');
  const foreign = await svc.token(['closingsRead', 'closingsWrite'], { project: 'other-project' });
  refused(t, await get(created.id, foreign), 403, 'forbidden');
  t.same((await get(created.id)).body, created, 'unchanged');
  const otherProject = await svc.request('GET', '/other-project/closings/schedules', { token: foreign });
  t.same(otherProject.body.schedules, [], 'another project sees none of them');
});
