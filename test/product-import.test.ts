import t from 'tap';
import { productWrite, writeProducts } from '../actors/catalog/products.sql.js';
import { fixtureProduct } from '../bench/fixtures.js';
import { ImportChunkCodec } from '../subjects/imports.js';
import { Product } from '../subjects/products.js';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const writer = await svc.token(['productsRead', 'productsWrite']);
const wipe = await svc.token(['productsWrite', 'availabilitiesWrite', 'pricingWrite']);
const batch = `/${TestProject}/products/_batch`;
const ndjson = (lines: Array<string | object>) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');

async function importNdjson(body: string) {
  return svc.request('POST', batch, { token: writer, raw: body, headers: { 'content-type': 'application/x-ndjson' } });
}

async function stored(): Promise<number> {
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from products`;
  return row?.n ?? 0;
}

t.beforeEach(async () => {
  await svc.request('DELETE', `/${TestProject}/products`, { token: wipe });
});

t.test('stores every good line of a batch whose middle line is broken JSON, and reports the broken one', async (t) => {
  const res = await importNdjson(ndjson([fixtureProduct(1), fixtureProduct(2), '{"sku": "SKU-X", "name": "half a line', fixtureProduct(4), fixtureProduct(5)]));
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/x-ndjson');
  t.same(res.body, [
    { sku: 'SKU-000001', status: 'ok' },
    { sku: 'SKU-000002', status: 'ok' },
    { sku: '', status: 'error', message: 'line 3 is not valid JSON', line: 3 },
    { sku: 'SKU-000004', status: 'ok' },
    { sku: 'SKU-000005', status: 'ok' },
  ]);
  t.equal(await stored(), 4);
});

t.test('reports a failed validation and a PLU conflict for their lines only', async (t) => {
  const res = await importNdjson(
    ndjson([
      { sku: 'A', name: 'A', pluSet: ['1001'] },
      { sku: 'B', name: 'B', referenceUnit: 42 },
      { sku: 'C', name: 'C', pluSet: ['1001'] },
      { name: 'no sku' },
      { sku: 'D', name: 'D', pluSet: ['1002'] },
      'null',
      '[1,2]',
    ]),
  );
  t.same(res.body.map((r: { sku: string; status: string; line?: number }) => [r.sku, r.status, r.line]), [
    ['A', 'ok', undefined],
    ['B', 'error', 2],
    ['C', 'error', 3],
    ['', 'error', 4],
    ['D', 'ok', undefined],
    ['', 'error', 6],
    ['', 'error', 7],
  ]);
  t.match(res.body[1].message, /^referenceUnit: /);
  t.equal(res.body[2].message, 'PLU 1001 belongs to product A', 'the first line that claims a PLU keeps it');
  t.match(res.body[3].message, /^sku: /);
  const skus = (await svc.sql<{ sku: string }[]>`select sku from products order by sku`).map((r) => r.sku);
  t.same(skus, ['A', 'D']);
});

t.test('is idempotent: the same import again answers the same and stores the same', async (t) => {
  const body = ndjson(Array.from({ length: 300 }, (_, i) => fixtureProduct(i + 1)));
  const first = await importNdjson(body);
  const snapshot = async () => ({
    products: await svc.sql`select sku, doc from products order by sku`,
    codes: await svc.sql`select code, sku from product_codes order by code, sku`,
    plus: await svc.sql`select plu, sku from product_plus order by plu`,
  });
  const before = await snapshot();
  const second = await importNdjson(body);
  t.same(second.body, first.body);
  t.ok(second.body.every((r: { status: string }) => r.status === 'ok'));
  t.same(await snapshot(), before);
  t.equal(before.plus.length, 15, 'every 20th product is weighable with a PLU');
});

t.test('takes a JSON array of at most 500 and answers a JSON array', async (t) => {
  const res = await svc.request('POST', batch, { token: writer, body: [fixtureProduct(1), { sku: 'BAD', maxSaleQuantity: 0 }] });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.same(res.body.map((r: { status: string }) => r.status), ['ok', 'error']);
  t.equal(res.body[1].line, 2, 'the line of a JSON batch is the item\'s position');

  const tooMany = await svc.request('POST', batch, { token: writer, body: Array.from({ length: 501 }, (_, i) => ({ sku: `J${i}` })) });
  t.equal(tooMany.status, 413);
  t.same(tooMany.body.error.type, 'batch_too_large');
  t.equal(await stored(), 1, 'nothing of the refused batch was stored');
});

t.test('accepts 20000 ndjson items and refuses 20001 with 413, storing nothing', async (t) => {
  const lines = Array.from({ length: 20_001 }, (_, i) => `{"sku":"N${i}"}`);
  const refused = await importNdjson(lines.join('\n'));
  t.equal(refused.status, 413);
  t.same(refused.body, { error: { type: 'batch_too_large', message: 'an ndjson batch holds at most 20000 items; nothing was stored' } });
  t.equal(await stored(), 0);

  const accepted = await importNdjson(`${lines.slice(0, 20_000).join('\n')}\n`);
  t.equal(accepted.status, 200);
  t.equal(accepted.body.length, 20_000);
  t.ok(accepted.body.every((r: { status: string }, i: number) => r.status === 'ok' && (r as { sku?: string }).sku === `N${i}`), 'every result, in input order');
  t.equal(await stored(), 20_000);
});

t.test('skips blank lines, counts them in line numbers, and reads CRLF', async (t) => {
  const res = await importNdjson(`{"sku":"L1"}\r\n\r\n   \r\n{"sku":"L4","maxSaleQuantity":0}\r\n{"sku":"L5"}\r\n`);
  t.same(res.body.map((r: { sku: string; line?: number }) => [r.sku, r.line]), [['L1', undefined], ['L4', 4], ['L5', undefined]]);
});

t.test('refuses an empty batch, a body that is no batch, and other content types', async (t) => {
  t.equal((await importNdjson('\n\n')).status, 400);
  t.equal((await svc.request('POST', batch, { token: writer, body: { sku: 'single' } })).status, 400);
  t.equal((await svc.request('POST', batch, { token: writer, body: [] })).status, 400);
  const text = await svc.request('POST', batch, { token: writer, raw: '{"sku":"x"}', headers: { 'content-type': 'text/plain' } });
  t.equal(text.status, 415);
  t.equal(text.body.error.type, 'unsupported_media_type');
  t.equal(await stored(), 0);
});

t.test('splits a large batch into chunks and answers every line in input order; a later line about the same SKU wins', async (t) => {
  const items = Array.from({ length: 3000 }, (_, i) => fixtureProduct(i + 1));
  items[2999] = { ...fixtureProduct(1), name: 'the later line' };
  const res = await importNdjson(ndjson(items));
  t.equal(res.body.length, 3000);
  t.same(res.body.map((r: { sku: string }) => r.sku), items.map((i) => i.sku));
  t.equal(await stored(), 2999);
  const [doc] = await svc.sql<{ name: string }[]>`select doc ->> 'name' as name from products where sku = 'SKU-000001'`;
  t.equal(doc?.name, 'the later line');
});

t.test('keeps the later line of a batch when its chunk is written first', async (t) => {
  // The edge sends chunks in parallel; their transactions may commit in any order.
  const batchAt = new Date();
  const product = (name: string) => Product.parse({ sku: 'RACE', name, pluSet: name === 'early' ? ['7001'] : ['7002'] });
  await writeProducts(svc.sql, TestProject, [productWrite(2500, product('late'))], batchAt);
  await writeProducts(svc.sql, TestProject, [productWrite(3, product('early'))], batchAt);
  const [row] = await svc.sql<{ name: string }[]>`select doc ->> 'name' as name from products where project = ${TestProject} and sku = 'RACE'`;
  t.equal(row?.name, 'late');
  const plus = await svc.sql<{ plu: string }[]>`select plu from product_plus where sku = 'RACE' order by plu`;
  t.same(plus.map((p) => p.plu), ['7002'], 'the PLUs follow the stored version');

  await writeProducts(svc.sql, TestProject, [productWrite(1, product('next batch'))], new Date(batchAt.getTime() + 1000));
  const [next] = await svc.sql<{ name: string }[]>`select doc ->> 'name' as name from products where sku = 'RACE'`;
  t.equal(next?.name, 'next batch', 'a later batch wins over any line of an earlier one');
});

t.test('refuses an item larger than a chunk may be, for its line only', async (t) => {
  const big = { sku: 'BIG', name: 'big', additionalAttributes: { blob: 'x'.repeat(450_000) } };
  const res = await importNdjson(ndjson([fixtureProduct(1), big, fixtureProduct(3)]));
  t.equal(res.status, 200);
  t.same(res.body.map((r: { sku: string; status: string }) => `${r.sku}:${r.status}`), ['SKU-000001:ok', 'BIG:error', 'SKU-000003:ok']);
  t.match(res.body[1].message, /^the item is larger than \d+ KB$/);
  t.equal(res.body[1].line, 2);
});

t.test('carries lines through the chunk codec unchanged: quotes, backslashes, tabs, non-Latin text', async (t) => {
  const lines: Array<[number, string]> = [
    [1, JSON.stringify({ sku: 'Q"1', name: 'say "cheese"\\ and \t tab' })],
    [7, JSON.stringify({ sku: 'U-€', name: 'Käse – 日本 🧀' })],
    [9, '{"sku": "raw"   ,  "name":"spaces kept"}'],
  ];
  const chunk = { project: TestProject, batchAt: new Date().toISOString(), lines };
  t.same(ImportChunkCodec.decode(ImportChunkCodec.encode(chunk) as Uint8Array), chunk);
  t.throws(() => ImportChunkCodec.decode(new TextEncoder().encode('{"project":"p","batchAt":"x","lines":[1,2]}\nonly one')), /fewer lines/);
});

t.test('answers 503 and stores nothing when no import worker runs', async (t) => {
  const edgeOnly = await startTestService(t, { env: { ROLE: 'edge' } });
  const res = await edgeOnly.request('POST', batch, { token: writer, raw: ndjson([fixtureProduct(1)]), headers: { 'content-type': 'application/x-ndjson' } });
  t.equal(res.status, 503);
  t.equal(res.body.error.type, 'service_unavailable');
});
