import { createCipheriv, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { p, seedCheckout } from './support/checkout.js';
import { keyId, parseKey } from '../src/secrets/key-ring.js';
import { startTestService, TestProject, TestSecretsKey } from './support/service.js';

/**
 * `Idempotency-Key` on the POST routes that create: the first answer is replayed for the same key
 * and body, another body is 409, keys are per project, concurrent requests with one key run once,
 * and a 5xx is not kept. The edge's request timeout is short so that a locked table makes a 503.
 */
const svc = await startTestService(t, { env: { REQUEST_TIMEOUT_MS: '1500' } });
const writer = await svc.token(['shopsRead', 'shopsWrite']);
const shops = `/${TestProject}/shops`;
const other = 'other-proj01';

const createShop = (key: string | undefined, body: object, token = writer, project = TestProject) =>
  svc.request('POST', `/${project}/shops`, { token, body, headers: key ? { 'idempotency-key': key } : {} });

async function shopsNamed(name: string): Promise<number> {
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from shops where name = ${name}`;
  return row?.n ?? 0;
}

t.test('the same key and body answer the first answer again: status, body and Location', async (t) => {
  const key = randomUUID();
  const first = await createShop(key, { name: 'Replayed', city: 'Berlin' });
  t.equal(first.status, 201, first.text);
  t.equal(first.headers.get('idempotent-replayed'), null, 'the first answer is no replay');

  // The same body with its keys in another order and other spacing is the same request.
  const again = await svc.request('POST', shops, {
    token: writer,
    raw: '{ "city": "Berlin",   "name": "Replayed" }',
    headers: { 'idempotency-key': key, 'content-type': 'application/json' },
  });
  t.equal(again.status, 201);
  t.equal(again.text, first.text, 'the same body, the same generated id');
  t.equal(again.headers.get('location'), first.headers.get('location'));
  t.equal(again.headers.get('content-type'), first.headers.get('content-type'));
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.equal(again.headers.get('cache-control'), 'no-store', 'the headers every answer gets are set as on any answer');
  t.equal(await shopsNamed('Replayed'), 1, 'one shop was created');
});

t.test('the same key with another body is 409 idempotency_key_reused and changes nothing', async (t) => {
  const key = randomUUID();
  t.equal((await createShop(key, { name: 'First body' })).status, 201);
  const reused = await createShop(key, { name: 'Second body' });
  t.equal(reused.status, 409);
  t.same(Object.keys(reused.body).sort(), ['message', 'type']);
  t.equal(reused.body.type, 'idempotency_key_reused');
  t.equal(await shopsNamed('Second body'), 0, 'nothing was created');

  const elsewhere = await svc.request('POST', `/${TestProject}/pricing/categories`, {
    token: await svc.token(['pricingCategoriesWrite']),
    body: { name: 'First body' },
    headers: { 'idempotency-key': key },
  });
  t.equal(elsewhere.status, 409, 'the key on another route is another request too');
  t.equal(elsewhere.body.type, 'idempotency_key_reused');
});

t.test('keys are per project: the same key in another project creates there', async (t) => {
  const key = randomUUID();
  const here = await createShop(key, { name: 'Per project' });
  const there = await createShop(key, { name: 'Per project' }, await svc.token(['shopsWrite'], { project: other }), other);
  t.equal(here.status, 201);
  t.equal(there.status, 201, there.text);
  t.not(there.body.id, here.body.id);
  t.equal(there.headers.get('idempotent-replayed'), null);
  t.equal(await shopsNamed('Per project'), 2);
});

t.test('concurrent requests with one key run it once and all answer its answer', async (t) => {
  const key = randomUUID();
  const answers = await Promise.all(Array.from({ length: 6 }, () => createShop(key, { name: 'Concurrent' })));
  t.equal(await shopsNamed('Concurrent'), 1, 'one shop was created');
  const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.id));
  t.equal(ids.size, 1, 'every 201 names the same shop');
  t.equal(answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null).length, 1, 'one request ran it');
  for (const a of answers.filter((a) => a.status !== 201)) {
    // A request that waited longer than the edge waits is told to come back, not run again.
    t.equal(a.status, 409);
    t.equal(a.body.type, 'idempotency_key_in_progress');
    t.equal(a.headers.get('retry-after'), '1');
  }
});

t.test('a 4xx answer is kept: the key answers it again', async (t) => {
  t.equal((await createShop(undefined, { id: 'taken', name: 'Taken' })).status, 201);
  const key = randomUUID();
  const conflict = await createShop(key, { id: 'taken', name: 'Taken again' });
  t.equal(conflict.status, 409);
  t.equal(conflict.body.type, 'conflict');
  t.equal((await svc.request('DELETE', `${shops}/taken`, { token: writer })).status, 200);
  const again = await createShop(key, { id: 'taken', name: 'Taken again' });
  t.equal(again.status, 409, 'the first answer, although the id is free now');
  t.equal(again.text, conflict.text);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
});

t.test('a body that fails validation is not kept: the key stays free', async (t) => {
  const key = randomUUID();
  const bad = await createShop(key, { name: 42 });
  t.equal(bad.status, 400);
  const good = await createShop(key, { name: 'After a bad body' });
  t.equal(good.status, 201, good.text);
  t.equal(good.headers.get('idempotent-replayed'), null);
});

t.test('a 5xx is not kept: the retry with the same key runs the request again', async (t) => {
  const key = randomUUID();
  // The shops table locked: the worker waits, and the edge answers 503 when its timeout is up.
  const first = await svc.sql.begin(async (tx) => {
    await tx`lock table shops in exclusive mode`;
    return createShop(key, { name: 'After a 503' });
  });
  t.equal(first.status, 503, first.text);
  const retry = await createShop(key, { name: 'After a 503' });
  t.equal(retry.status, 201, retry.text);
  t.equal(retry.headers.get('idempotent-replayed'), null, 'it ran');
  const third = await createShop(key, { name: 'After a 503' });
  t.equal(third.text, retry.text, 'and its answer is kept');
  t.equal(third.headers.get('idempotent-replayed'), 'true');
});

t.test('a checkout process whose create finished after its 503: the retry with the key finds it, never a second', async (t) => {
  const fixture = await seedCheckout(svc);
  const body = { signedCheckoutInfo: await fixture.signedInfo(), paymentMethod: 'cash' };
  const key = randomUUID();
  const create = () => svc.request('POST', `${p}/checkout/process`, { token: fixture.tokens.customer, body, headers: { 'idempotency-key': key } });
  const before = await processCount();
  // The table locked past the edge's timeout: the edge answers 503, the worker creates once the lock goes.
  const first = await svc.sql.begin(async (tx) => {
    await tx`lock table checkout_processes in exclusive mode`;
    return create();
  });
  t.equal(first.status, 503, first.text);
  for (let i = 0; i < 100 && (await processCount()) === before; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(await processCount(), before + 1, 'the first try created the process after its 503');

  const retry = await create();
  t.equal(retry.status, 201, retry.text);
  t.equal(retry.headers.get('location'), `${p}/checkout/process/${retry.body.id}`);
  t.equal(await processCount(), before + 1, 'the retry created none: it found the first try\'s process');
  t.equal((await create()).headers.get('idempotent-replayed'), 'true', 'and its answer is kept from now on');

  const otherKey = await svc.request('POST', `${p}/checkout/process`, { token: fixture.tokens.customer, body, headers: { 'idempotency-key': randomUUID() } });
  t.not(otherKey.body.id, retry.body.id, 'another key is another process');
});

t.test('a claim sent again with its id (its answer lost with a NATS node) still holds the key; another claim does not', async (t) => {
  const claim = async (claimId: string) => {
    const request = { project: TestProject, keyHash: 'a'.repeat(64), fingerprint: 'b'.repeat(64), leaseMs: 30_000, claim: claimId };
    return JSON.parse(new TextDecoder().decode((await svc.nc.request('svc.idempotency.claim', JSON.stringify(request))).data));
  };
  const first = randomUUID();
  t.same(await claim(first), { outcome: 'claimed', claim: first });
  t.same(await claim(first), { outcome: 'claimed', claim: first }, 'the same claim again: still claimed');
  t.same(await claim(randomUUID()), { outcome: 'inProgress' }, 'another request with the key waits for the first');
  // Released, as the edge releases a key whose request failed: the other tests read every key.
  await svc.nc.request('svc.idempotency.release', JSON.stringify({ project: TestProject, keyHash: 'a'.repeat(64), claim: first }));
  t.equal((await svc.sql`select from idempotency_keys where key_hash = ${'a'.repeat(64)}`).length, 0, 'released');
});

async function processCount(): Promise<number> {
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from checkout_processes`;
  return row?.n ?? 0;
}

t.test('a request without the key, or with a key too long, behaves as before', async (t) => {
  t.equal((await createShop(undefined, { name: 'Twice' })).status, 201);
  t.equal((await createShop(undefined, { name: 'Twice' })).status, 201);
  t.equal(await shopsNamed('Twice'), 2);
  const long = await createShop('k'.repeat(256), { name: 'Long key' });
  t.equal(long.status, 400);
  t.equal(long.body.type, 'bad_request');
});

t.test('the wrapped error shape on the routes the spec wraps', async (t) => {
  const key = randomUUID();
  const path = `/${TestProject}/promotions/configurations`;
  const token = await svc.token(['promotionsWrite', 'promotionsRead']);
  const created = await svc.request('POST', path, { token, body: { ranks: [], groups: [] }, headers: { 'idempotency-key': key } });
  t.equal(created.status, 201, created.text);
  const reused = await svc.request('POST', path, { token, body: { ranks: [], groups: [], id: 424242 }, headers: { 'idempotency-key': key } });
  t.equal(reused.status, 409);
  t.equal(reused.body.error?.type, 'idempotency_key_reused');
});

t.test("a PoS credential's password is replayed, and the database keeps it only sealed", async (t) => {
  const key = randomUUID();
  const token = await svc.token(['projectsWrite']);
  const path = `/${TestProject}/pos/credentials`;
  const body = { name: 'Kasse 9', permissions: ['checkoutRead'] };
  const first = await svc.request('POST', path, { token, body, headers: { 'idempotency-key': key } });
  t.equal(first.status, 201, first.text);
  const again = await svc.request('POST', path, { token, body, headers: { 'idempotency-key': key } });
  t.equal(again.body.password, first.body.password);
  const rows = await svc.sql<{ key_hash: string; answer: Buffer }[]>`select key_hash, answer from idempotency_keys`;
  t.ok(rows.length > 0);
  for (const row of rows) {
    t.not(row.key_hash, key);
    t.notOk(row.answer.includes(first.body.password), 'no answer holds the password as text');
    t.notOk(row.answer.includes(first.body.user), 'nor anything else of it');
  }
});

/** An answer as the edge seals it with the client's key alone (src/edge/idempotency.ts): what a database writer who knows or guesses the key can make. */
function sealedWithClientKeyOnly(key: string, answer: { headers: Record<string, string>; body: string }): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(hkdfSync('sha256', key, TestProject, 'checkout-platform idempotency answer', 32)), iv, { authTagLength: 16 });
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

t.test("a kept answer is sealed with the server's key too: one forged with the client's key alone is treated as absent, and the request runs", async (t) => {
  const key = `guessable-${randomUUID().slice(0, 4)}`;
  const first = await createShop(key, { name: 'Sealed twice' });
  t.equal(first.status, 201, first.text);
  const [row] = await svc.sql<{ key_hash: string; answer: Buffer }[]>`select key_hash, answer from idempotency_keys where answer is not null order by created_at desc limit 1`;
  t.match(row?.answer.toString('utf8'), new RegExp(`^sealed:v1:${keyId(parseKey(TestSecretsKey))}:`), "sealed under SECRETS_KEY, named by its key id");

  const forged = sealedWithClientKeyOnly(key, { headers: { 'content-type': 'application/json; charset=utf-8', location: '/elsewhere' }, body: '{"id":"forged","name":"Forged"}' });
  await svc.sql`update idempotency_keys set answer = ${forged} where key_hash = ${row!.key_hash}`;
  const again = await createShop(key, { name: 'Sealed twice' });
  t.equal(again.status, 201, again.text);
  t.not(again.body.id, 'forged', 'the forged answer is not replayed');
  t.not(again.headers.get('location'), '/elsewhere');
  t.equal(again.headers.get('idempotent-replayed'), null, 'the request ran');
  const [kept] = await svc.sql<{ answer: Buffer }[]>`select answer from idempotency_keys where key_hash = ${row!.key_hash}`;
  t.match(kept?.answer.toString('utf8'), /^sealed:v1:/, 'and its answer is kept sealed');
  const third = await createShop(key, { name: 'Sealed twice' });
  t.equal(third.text, again.text, 'which the next retry replays');
  t.equal(third.headers.get('idempotent-replayed'), 'true');
});

t.test('a kept answer changed in the database is not replayed', async (t) => {
  const key = randomUUID();
  t.equal((await createShop(key, { name: 'Tampered' })).status, 201);
  // One letter of the sealed text made another ('A' <-> 'B'), away from the end, whose last letter's
  // low bits a decoder may ignore: writing 'A' over a letter that was 'A' changed nothing one run in 64.
  await svc.sql`update idempotency_keys set answer = set_byte(answer, length(answer) - 10, case get_byte(answer, length(answer) - 10) when 65 then 66 else 65 end)
    where answer is not null and status = 201 and created_at = (select max(created_at) from idempotency_keys)`;
  const again = await createShop(key, { name: 'Tampered' });
  t.equal(again.status, 500, 'refused, not answered with what the database now says');
  t.equal(again.headers.get('idempotent-replayed'), null);
});

t.test('keys whose 24 hours are over are free again', async (t) => {
  const key = randomUUID();
  t.equal((await createShop(key, { name: 'Expired' })).status, 201);
  await svc.sql`update idempotency_keys set created_at = now() - interval '25 hours'`;
  const later = await createShop(key, { name: 'Other body, a day later' });
  t.equal(later.status, 201, later.text);
  t.equal(later.headers.get('idempotent-replayed'), null);
});

t.test('the OpenAPI document names the header on the create routes', async (t) => {
  const doc = (await svc.request('GET', '/openapi.json')).body;
  const creates = [
    '/{project}/shops',
    '/{project}/checkout/process',
    '/{project}/coupons',
    '/{project}/promotions/configurations',
    '/{project}/closings/jobs',
    '/{project}/closings/schedules',
    '/{project}/pos/credentials',
    '/{project}/pricing/categories',
  ];
  for (const path of creates) {
    const params = (doc.paths[path]?.post?.parameters ?? []) as Array<{ in: string; name: string }>;
    t.ok(params.some((p) => p.in === 'header' && p.name === 'idempotency-key'), `POST ${path}`);
  }
});
