import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

/** Optimistic concurrency of coupons: a strong ETag on every answer, If-Match on writes, If-None-Match on reads. */
const svc = await startTestService(t);
const p = `/${TestProject}`;
const token = await svc.token(['couponsRead', 'couponsWrite']);
const base = { channels: ['app'], type: 'manual' };

const create = (body: object) => svc.request('POST', `${p}/coupons`, { token, body });
const get = (id: string, headers: Record<string, string> = {}) => svc.request('GET', `${p}/coupons/${id}`, { token, headers });
const put = (id: string, body: object, headers: Record<string, string>) => svc.request('PUT', `${p}/coupons/${id}`, { token, body, headers });
const del = (id: string, headers: Record<string, string>) => svc.request('DELETE', `${p}/coupons/${id}`, { token, headers });
const named = (name: string) => ({ ...base, translations: { name: { de: name } } });
const stored = async (id: string) => (await svc.sql<{ version: number; etag: string; doc: { translations: { name: { de: string } } } }[]>`
  select version, etag, doc from coupons where id = ${id}`)[0];

t.test('every answer of a coupon carries a strong ETag that changes with each change', async (t) => {
  const created = await create({ ...named('Eins'), id: 'tagged' });
  const first = created.headers.get('etag')!;
  t.match(first, /^"[^"]+"$/, 'strong: quoted, no W/');
  t.equal((await get('tagged')).headers.get('etag'), first, 'GET answers the same ETag');
  const replaced = await put('tagged', named('Zwei'), { 'if-match': first });
  const second = replaced.headers.get('etag')!;
  t.not(second, first, 'a change gives a new ETag');
  const same = await put('tagged', named('Zwei'), { 'if-match': second });
  t.equal(same.status, 200);
  t.not(same.headers.get('etag'), second, 'a write of the same content is a change too');
  t.equal((await get('tagged')).headers.get('etag'), same.headers.get('etag'));
  t.equal((await stored('tagged'))?.etag, same.headers.get('etag'));
});

t.test('If-None-Match naming the current ETag answers 304 with the ETag and no body', async (t) => {
  const created = await create({ ...named('Cache'), id: 'cached' });
  const etag = created.headers.get('etag')!;
  const notModified = await get('cached', { 'if-none-match': etag });
  t.equal(notModified.status, 304);
  t.equal(notModified.text, '');
  t.equal(notModified.headers.get('etag'), etag);
  t.equal((await get('cached', { 'if-none-match': `W/${etag}` })).status, 304, 'compared weakly, as for GET');
  t.equal((await get('cached', { 'if-none-match': `"other", ${etag}` })).status, 304, 'one of a list');
  t.equal((await get('cached', { 'if-none-match': '*' })).status, 304);
  const changed = await get('cached', { 'if-none-match': '"stale"' });
  t.equal(changed.status, 200);
  t.equal(changed.body.name, 'Cache');
  t.equal((await get('no-such', { 'if-none-match': '*' })).status, 404);
});

t.test('PUT and DELETE without If-Match are 428 and change nothing', async (t) => {
  await create({ ...named('Bleibt'), id: 'guarded' });
  const before = await stored('guarded');
  const putting = await put('guarded', named('Anders'), {});
  t.equal(putting.status, 428);
  t.same(putting.body, { error: { type: 'precondition_required', message: 'If-Match is required: send the ETag the coupon was answered with (or * for any)' } });
  const deleting = await del('guarded', {});
  t.equal(deleting.status, 428);
  t.equal(deleting.body.error.type, 'precondition_required');
  t.same(await stored('guarded'), before, 'unchanged');
});

t.test('PUT and DELETE with an ETag that is not current are 412 and change nothing', async (t) => {
  const created = await create({ ...named('Alt'), id: 'moving' });
  const old = created.headers.get('etag')!;
  const current = (await put('moving', named('Neu'), { 'if-match': old })).headers.get('etag')!;
  const before = await stored('moving');
  for (const ifMatch of [old, '"made-up"', `W/${current}`, 'garbage']) {
    const putting = await put('moving', named('Verloren'), { 'if-match': ifMatch });
    t.equal(putting.status, 412, `PUT with If-Match ${ifMatch}`);
    t.same(putting.body, { error: { type: 'precondition_failed', message: 'the coupon moving has changed: If-Match does not name its current ETag' } });
    t.equal((await del('moving', { 'if-match': ifMatch })).status, 412, `DELETE with If-Match ${ifMatch}`);
  }
  t.same(await stored('moving'), before, 'unchanged (a weak ETag never matches a write)');
  const listed = await put('moving', named('Gelistet'), { 'if-match': `"made-up", ${current}` });
  t.equal(listed.status, 200, 'the current ETag among others matches');
  t.equal((await del('moving', { 'if-match': listed.headers.get('etag')! })).status, 204);
});

t.test('If-Match * matches any existing coupon, and a missing one is 404', async (t) => {
  await create({ ...named('Stern'), id: 'starred' });
  t.equal((await put('starred', named('Stern 2'), { 'if-match': '*' })).status, 200);
  t.equal((await get('starred')).body.name, 'Stern 2');
  t.equal((await del('starred', { 'if-match': '*' })).status, 204);
  t.equal((await put('starred', named('Stern 3'), { 'if-match': '*' })).status, 404);
  t.equal((await del('starred', { 'if-match': '*' })).status, 404);
  t.equal((await put('starred', named('Stern 3'), { 'if-match': '"1-abc"' })).status, 404, 'missing is 404 whatever the ETag');
});

t.test('a coupon created again under a deleted id never repeats an old ETag', async (t) => {
  const first = (await create({ ...named('Gleich'), id: 'reborn' })).headers.get('etag')!;
  t.equal((await del('reborn', { 'if-match': first })).status, 204);
  const second = (await create({ ...named('Gleich'), id: 'reborn' })).headers.get('etag')!;
  t.not(second, first);
  t.equal((await put('reborn', named('Alt'), { 'if-match': first })).status, 412, 'the old ETag no longer writes');
});

t.test('of 50 concurrent PUTs with the same ETag exactly one wins; the others are 412 and the winner is stored', async (t) => {
  const created = await create({ ...named('Start'), id: 'contended' });
  const etag = created.headers.get('etag')!;
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => put('contended', named(`Schreiber ${i}`), { 'if-match': etag })));
  const won = answers.filter((a) => a.status === 200);
  const lost = answers.filter((a) => a.status === 412);
  t.equal(won.length, 1, 'one 200');
  t.equal(lost.length, 49, '49 × 412');
  for (const a of lost) t.equal(a.body.error.type, 'precondition_failed');
  const winner = won[0]!;
  const now = await get('contended');
  t.equal(now.body.name, winner.body.name, "the stored coupon is the winner's");
  t.equal(now.headers.get('etag'), winner.headers.get('etag'));
  t.equal((await stored('contended'))?.version, 2, 'one change');
});
