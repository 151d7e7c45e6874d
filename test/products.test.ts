import t from 'tap';
import { fixtureProduct } from '../bench/fixtures.js';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const reader = await svc.token(['productsRead']);
const writer = await svc.token(['productsRead', 'productsWrite']);
const p = `/${TestProject}/products`;

const milk = {
  sku: 'MILK-1L',
  name: 'Bio Vollmilch 1 l',
  description: 'Frische Vollmilch aus der Region',
  taxCategory: 'reduced',
  codes: [{ code: '4001234567891', isPrimary: true }, { code: '04001234', template: 'ean8' }],
  depositProduct: 'DEPOSIT-015',
  setComponents: [],
  allowedOnDeviceTypes: ['sco-ng'],
  maxSaleQuantity: 12,
  additionalAttributes: { fat: '3.8%' },
  quantityPriceKey: 'milk',
};

async function count(table: string): Promise<number> {
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from ${svc.sql(table)}`;
  return row?.n ?? 0;
}

t.test('creates a product with POST: 201 and Location, every field with its default', async (t) => {
  const res = await svc.request('POST', p, { token: writer, body: milk });
  t.equal(res.status, 201);
  t.equal(res.headers.get('location'), `${p}/sku/MILK-1L`);
  t.same(res.body, {
    ...milk,
    project: TestProject,
    productType: 'default',
    subtitle: null,
    imageUrl: null,
    basePrice: '',
    saleRestriction: null,
    referenceUnit: null,
    encodingUnit: null,
    weighByCustomer: null,
    bundledProduct: '',
    baseProduct: '',
    outOfStock: false,
    deleted: false,
    codes: [
      { code: '4001234567891', template: 'default', isPrimary: true, transmissionCode: '', encodingUnit: null, specifiedQuantity: null },
      { code: '04001234', template: 'ean8', isPrimary: false, transmissionCode: '', encodingUnit: null, specifiedQuantity: null },
    ],
    controlIndication: 0,
    forceControl: false,
    pluSet: [],
    scanMessage: '',
    isDiscountable: false,
    isReturnable: false,
    priceEntryRequired: false,
    fulfillmentType: '',
    maxSaleText: '',
    saleStop: false,
    notForSale: false,
    searchable: true,
    excludeFromSync: false,
  });
  t.same((await svc.request('GET', `${p}/sku/MILK-1L`, { token: reader })).body, res.body, 'read back as stored');
});

t.test('updates an existing SKU with POST (200) and with PUT', async (t) => {
  const updated = await svc.request('POST', p, { token: writer, body: { ...milk, name: 'Bio Vollmilch 1 l (neu)' } });
  t.equal(updated.status, 200);
  t.equal(updated.headers.get('location'), null);
  t.equal(updated.body.name, 'Bio Vollmilch 1 l (neu)');

  const put = await svc.request('PUT', `${p}/sku/MILK-1L`, { token: writer, body: { sku: 'MILK-1L', name: 'Milch' } });
  t.equal(put.status, 200);
  t.equal(put.body.name, 'Milch');
  t.same(put.body.codes, [], 'PUT replaces the whole product');
  t.equal(await count('product_codes'), 0, 'the codes of the old version are gone');

  const created = await svc.request('PUT', `${p}/sku/NEW 1/x`.replace('NEW 1/x', encodeURIComponent('NEW 1/x')), { token: writer, body: { sku: 'NEW 1/x', name: 'Created by PUT' } });
  t.equal(created.status, 201, 'PUT creates a missing product; SKUs may hold spaces and slashes');
  t.equal((await svc.request('GET', `${p}/sku/${encodeURIComponent('NEW 1/x')}`, { token: reader })).body.name, 'Created by PUT');

  const mismatch = await svc.request('PUT', `${p}/sku/MILK-1L`, { token: writer, body: { sku: 'OTHER', name: 'x' } });
  t.equal(mismatch.status, 400);
  t.same(mismatch.body, { error: { type: 'bad_request', message: "the body's SKU OTHER differs from the path's SKU MILK-1L" } }, 'the product family wraps errors');
});

t.test('finds a product by PLU; a PLU belongs to one product only', async (t) => {
  const cheese = await svc.request('POST', p, { token: writer, body: { sku: 'CHEESE', name: 'Gouda', productType: 'weighable', pluSet: ['4711', '4712'], referenceUnit: 'kg', encodingUnit: 'g' } });
  t.equal(cheese.status, 201);
  t.equal((await svc.request('GET', `${p}/plu/4711`, { token: reader })).body.sku, 'CHEESE');

  const taken = await svc.request('POST', p, { token: writer, body: { sku: 'HAM', name: 'Schinken', pluSet: ['4800', '4711'] } });
  t.equal(taken.status, 409);
  t.same(taken.body, { error: { type: 'conflict', message: 'PLU 4711 belongs to product CHEESE' } });
  t.equal((await svc.request('GET', `${p}/sku/HAM`, { token: reader })).status, 404, 'the refused product was not stored');
  t.equal((await svc.request('GET', `${p}/plu/4800`, { token: reader })).status, 404, 'nor its free PLU');

  const moved = await svc.request('PUT', `${p}/sku/CHEESE`, { token: writer, body: { sku: 'CHEESE', name: 'Gouda', pluSet: ['4712'] } });
  t.equal(moved.status, 200);
  t.equal((await svc.request('GET', `${p}/plu/4711`, { token: reader })).status, 404, 'a PLU the product no longer lists is free again');
  t.equal((await svc.request('POST', p, { token: writer, body: { sku: 'HAM', name: 'Schinken', pluSet: ['4711'] } })).status, 201);

  const unknown = await svc.request('GET', `${p}/plu/9999`, { token: reader });
  t.equal(unknown.status, 404);
  t.same(unknown.body, { error: { type: 'not_found', message: 'no product with PLU 9999' } });
  t.equal((await svc.request('GET', `${p}/plu/a%20b`, { token: reader })).status, 400, 'a PLU has no spaces');
});

t.test('validates a product and lists the problems, storing nothing', async (t) => {
  const before = await count('products');
  const res = await svc.request('POST', p, {
    token: writer,
    body: {
      sku: '',
      referenceUnit: ['kg'],
      maxSaleQuantity: 0,
      allowedOnDeviceTypes: [42],
      pluSet: ['12 a'],
      codes: [{ code: '' }],
      setComponents: [{ sku: 'x', amount: 0 }],
      weighByCustomer: 'yes',
    },
  });
  t.equal(res.status, 400);
  t.equal(res.body.error.type, 'bad_request');
  t.same(res.body.error.details.map((d: { path: string }) => d.path).sort(), [
    'allowedOnDeviceTypes.0',
    'codes.0.code',
    'maxSaleQuantity',
    'pluSet.0',
    'referenceUnit',
    'setComponents.0.amount',
    'sku',
    'weighByCustomer',
  ]);
  t.equal(await count('products'), before);

  const open = await svc.request('POST', p, {
    token: writer,
    body: { sku: 'OPEN', productType: 'bundleOfThings', referenceUnit: 'stk', encodingUnit: 'price', allowedOnDeviceTypes: ['kiosk'], pluSet: ['A12'] },
  });
  t.equal(open.status, 201, 'values of the open sets the platform does not know are stored');
  t.match((await svc.request('GET', `${p}/sku/OPEN`, { token: reader })).body, { productType: 'bundleOfThings', referenceUnit: 'stk', encodingUnit: 'price', allowedOnDeviceTypes: ['kiosk'], pluSet: ['A12'] }, 'and returned as they came');
});

t.test('ignores fields the Product object does not have (deprecated eans, boost)', async (t) => {
  const res = await svc.request('POST', p, { token: writer, body: { sku: 'OLD', name: 'Old client', eans: ['123'], boost: 5, project: 'someone-else' } });
  t.equal(res.status, 201);
  t.notOk('eans' in res.body);
  t.equal(res.body.project, TestProject, 'the project is always the path\'s');
});

t.test('deletes a product with its codes and PLUs', async (t) => {
  await svc.request('POST', p, { token: writer, body: { sku: 'GONE', name: 'Gone', pluSet: ['5555'], codes: [{ code: '999' }] } });
  const res = await svc.request('DELETE', `${p}/sku/GONE`, { token: writer });
  t.equal(res.status, 200);
  t.equal((await svc.request('GET', `${p}/sku/GONE`, { token: reader })).status, 404);
  t.equal((await svc.request('GET', `${p}/plu/5555`, { token: reader })).status, 404);
  t.equal((await svc.request('GET', `${p}?q=999`, { token: reader })).body.products.length, 0, 'its code no longer finds it');
  t.equal((await svc.request('DELETE', `${p}/sku/GONE`, { token: writer })).status, 404);
});

t.test('lists products', async (t) => {
  await svc.request('DELETE', p, { token: await svc.token(['productsWrite', 'availabilitiesWrite', 'pricingWrite']) });
  const items = Array.from({ length: 1200 }, (_, i) => fixtureProduct(i + 1));
  const imported = await svc.request('POST', `${p}/_batch`, { token: writer, raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
  t.equal(imported.body.filter((r: { status: string }) => r.status === 'ok').length, 1200);
  const searchable = items.filter((i) => i.searchable).map((i) => i.sku);

  t.test('as the v2 list type by default, searchable only, in SKU order, past one page', async (t) => {
    const res = await svc.request('GET', p, { token: reader });
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'application/vnd.service.product.list.v2+json');
    t.same(res.body.products.map((x: { sku: string }) => x.sku), searchable);
    t.equal(res.body.products[0].project, TestProject);
  });

  t.test('with unsearchable products, and as ndjson', async (t) => {
    const res = await svc.request('GET', `${p}?withUnsearchable=true`, { token: reader, headers: { accept: 'application/x-ndjson' } });
    t.equal(res.headers.get('content-type'), 'application/x-ndjson');
    t.equal(res.body.length, 1200);
    t.same(res.body.slice(0, 2).map((x: { sku: string }) => x.sku), ['SKU-000001', 'SKU-000002']);
  });

  t.test('up to a limit (0: no limit)', async (t) => {
    t.equal((await svc.request('GET', `${p}?limit=7`, { token: reader })).body.products.length, 7);
    t.equal((await svc.request('GET', `${p}?limit=501&withUnsearchable=true`, { token: reader })).body.products.length, 501, 'a limit across the page size');
    t.equal((await svc.request('GET', `${p}?limit=0`, { token: reader })).body.products.length, searchable.length);
    t.equal((await svc.request('GET', `${p}?limit=-1`, { token: reader })).status, 400);
  });

  t.test('by text: words of name and description, and SKU, code and PLU prefixes', async (t) => {
    const skus = async (q: string, extra = '') => (await svc.request('GET', `${p}?q=${encodeURIComponent(q)}&withUnsearchable=true${extra}`, { token: reader })).body.products.map((x: { sku: string }) => x.sku);
    t.same(await skus('SKU-00010'), ['SKU-000100', 'SKU-000101', 'SKU-000102', 'SKU-000103', 'SKU-000104', 'SKU-000105', 'SKU-000106', 'SKU-000107', 'SKU-000108', 'SKU-000109'], 'SKU prefix');
    const product = fixtureProduct(42);
    t.same(await skus(product.codes[0]!.code), ['SKU-000042'], 'code');
    t.same(await skus(product.codes[0]!.code.slice(0, 12)), ['SKU-000042'], 'code prefix');
    t.same(await skus('10040'), ['SKU-000040'], 'PLU');
    t.same(await skus('Artikel 1111'), ['SKU-001111'], 'words of the description');
    t.ok((await skus('vollmil')).length > 10, 'a word prefix of the name');
    t.same(await skus('nothing-like-this'), []);
    t.same(await skus('SKU-0001%'), [], 'LIKE wildcards are taken literally');
    t.same(await skus('SKU-00010_'), [], 'also _');
  });

  t.test('by excludeFromSync; unset gives both', async (t) => {
    await svc.request('PUT', `${p}/sku/SKU-000001`, { token: writer, body: { ...items[0], excludeFromSync: true } });
    const only = (await svc.request('GET', `${p}?excludeFromSync=true`, { token: reader })).body.products;
    t.same(only.map((x: { sku: string }) => x.sku), ['SKU-000001']);
    const without = (await svc.request('GET', `${p}?excludeFromSync=false`, { token: reader })).body.products;
    t.equal(without.length, searchable.length - 1);
    t.equal((await svc.request('GET', p, { token: reader })).body.products.length, searchable.length);
  });

  t.test('answers an empty list for a project without products', async (t) => {
    const other = await svc.token(['productsRead'], { project: 'empty-project' });
    t.same((await svc.request('GET', '/empty-project/products', { token: other })).body, { products: [] });
  });
});

t.test('deletes all catalog data of the project only', async (t) => {
  const all = await svc.token(['productsRead', 'productsWrite', 'availabilitiesWrite', 'pricingWrite']);
  const otherToken = await svc.token(['productsRead', 'productsWrite'], { project: 'other-project' });
  t.equal((await svc.request('POST', '/other-project/products', { token: otherToken, body: { sku: 'KEEP', name: 'Keep me' } })).status, 201);

  t.equal((await svc.request('DELETE', p, { token: writer })).status, 403, 'needs availabilitiesWrite and pricingWrite too');
  const res = await svc.request('DELETE', p, { token: all });
  t.equal(res.status, 200);
  t.same((await svc.request('GET', `${p}?withUnsearchable=true`, { token: all })).body, { products: [] });
  const [left] = await svc.sql<{ n: number }[]>`
    select (select count(*) from products where project = ${TestProject}) + (select count(*) from product_codes where project = ${TestProject})
         + (select count(*) from product_plus where project = ${TestProject}) as n`;
  t.equal(Number(left?.n), 0);
  t.equal((await svc.request('GET', '/other-project/products/sku/KEEP', { token: otherToken })).status, 200, 'another project keeps its products');
});

t.test('needs productsRead to read and productsWrite to change, answering wrapped 403s', async (t) => {
  const nobody = await svc.token(['shopsRead']);
  const res = await svc.request('GET', `${p}/sku/KEEP`, { token: nobody });
  t.equal(res.status, 403);
  t.same(res.body, { error: { type: 'forbidden', message: 'the token lacks the permission productsRead' } });
  const before = await count('products');
  t.equal((await svc.request('POST', p, { token: reader, body: { sku: 'NO', name: 'No' } })).status, 403);
  t.equal((await svc.request('POST', `${p}/_batch`, { token: reader, raw: '{"sku":"NO"}', headers: { 'content-type': 'application/x-ndjson' } })).status, 403);
  t.equal(await count('products'), before);
});
