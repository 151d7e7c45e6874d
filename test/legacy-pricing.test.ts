import t from 'tap';
import { writeLegacyPrices, writePricings } from '../actors/catalog/pricing.sql.js';
import { PriceBatchItem } from '../subjects/pricing.js';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const categoriesToken = await svc.token(['pricingCategoriesRead', 'pricingCategoriesWrite']);
const token = await svc.token(['pricingRead', 'pricingWrite']);
const base = `/${TestProject}/pricing`;
const ndjson = (items: Array<object | string>) => items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n');
const price = (category: string, listPrice: number, extra: object = {}) => ({ category, listPrice, ...extra });
const pricingOf = async (sku: string) => svc.request('GET', `${base}/products/sku/${sku}`, { token });

t.test('pricing categories', async (t) => {
  t.test('are created with 201 and Location, and read back', async (t) => {
    const res = await svc.request('POST', `${base}/categories`, { token: categoriesToken, body: { id: 'summer', name: 'Summer', priority: 10, shops: [{ id: 's2' }, { id: 's1' }, { id: 's1' }] } });
    t.equal(res.status, 201);
    t.equal(res.headers.get('location'), `${base}/categories/id/summer`);
    t.same(res.body, {
      id: 'summer',
      project: TestProject,
      name: 'Summer',
      priority: 10,
      shops: [{ id: 's1' }, { id: 's2' }],
      links: { self: { href: `${base}/categories/id/summer` } },
    });
    t.same((await svc.request('GET', `${base}/categories/id/summer`, { token: categoriesToken })).body, res.body);
    const generated = await svc.request('POST', `${base}/categories`, { token: categoriesToken, body: { priority: 1 } });
    t.equal(generated.status, 201);
    t.match(generated.body, { id: /^[0-9a-f-]{36}$/, name: null, shops: [] });
  });

  t.test('are listed by descending priority', async (t) => {
    await svc.request('POST', `${base}/categories`, { token: categoriesToken, body: { id: 'winter', priority: 20 } });
    const res = await svc.request('GET', `${base}/categories`, { token: categoriesToken });
    t.equal(res.status, 200);
    t.same(res.body.categories.map((c: { id: string; priority: number }) => c.priority), [20, 10, 1]);
    t.same(res.body.links, { self: { href: `${base}/categories` } });
  });

  t.test('are replaced with PUT, shops included; unknown ids are 404, existing ids on POST 409', async (t) => {
    const res = await svc.request('PUT', `${base}/categories/id/summer`, { token: categoriesToken, body: { name: 'Sommer', priority: 5, shops: [{ id: 's3' }] } });
    t.equal(res.status, 200);
    t.match(res.body, { name: 'Sommer', priority: 5, shops: [{ id: 's3' }] });
    t.equal((await svc.request('PUT', `${base}/categories/id/nope`, { token: categoriesToken, body: { priority: 1 } })).status, 404);
    t.equal((await svc.request('PUT', `${base}/categories/id/summer`, { token: categoriesToken, body: { id: 'other', priority: 1 } })).status, 400);
    t.equal((await svc.request('POST', `${base}/categories`, { token: categoriesToken, body: { id: 'summer' } })).status, 409);
    t.equal((await svc.request('GET', `${base}/categories/id/nope`, { token: categoriesToken })).status, 404);
    t.equal((await svc.request('POST', `${base}/categories`, { token: categoriesToken, body: { id: 'bad id', priority: 'high' } })).status, 400);
  });

  t.test('need pricingCategoriesRead and pricingCategoriesWrite', async (t) => {
    t.equal((await svc.request('GET', `${base}/categories`, { token })).status, 403);
    t.equal((await svc.request('POST', `${base}/categories`, { token, body: { id: 'x' } })).status, 403);
    t.equal((await svc.request('GET', `${base}/categories/id/x`, { token: categoriesToken })).status, 404, 'nothing was created');
  });
});

t.test('pricings of a product', async (t) => {
  t.test('are put, read and deleted by SKU', async (t) => {
    const put = await svc.request('PUT', `${base}/products/sku/MILK`, { token, body: { sku: 'MILK', prices: [price('summer', 99), price('default', 119, { discountedPrice: 109, customerCardPrice: 99, basePrice: '1.19 €/l' })] } });
    t.equal(put.status, 200);
    t.same(put.body, {
      sku: 'MILK',
      project: TestProject,
      prices: [
        { category: 'default', listPrice: 119, discountedPrice: 109, customerCardPrice: 99, basePrice: '1.19 €/l' },
        { category: 'summer', listPrice: 99, discountedPrice: null, customerCardPrice: null, basePrice: null },
      ],
      links: { self: { href: `${base}/products/sku/MILK` }, product: { href: `/${TestProject}/products/sku/MILK` } },
    });
    t.same((await pricingOf('MILK')).body, put.body);

    const replaced = await svc.request('PUT', `${base}/products/sku/MILK`, { token, body: { sku: 'MILK', prices: [price('default', 129)] } });
    t.same(replaced.body.prices.map((p: { category: string }) => p.category), ['default'], 'PUT replaces every category');

    t.equal((await svc.request('PUT', `${base}/products/sku/MILK`, { token, body: { sku: 'TEA', prices: [] } })).status, 400);
    t.equal((await svc.request('PUT', `${base}/products/sku/MILK`, { token, body: { sku: 'MILK', prices: [price('a', 1), price('a', 2)] } })).status, 400, 'one price per category');
    t.equal((await svc.request('PUT', `${base}/products/sku/MILK`, { token, body: { sku: 'MILK', prices: [price('a', -1)] } })).status, 400);

    t.equal((await svc.request('DELETE', `${base}/products/sku/MILK`, { token })).status, 200);
    t.equal((await pricingOf('MILK')).status, 404);
    t.equal((await svc.request('DELETE', `${base}/products/sku/MILK`, { token })).status, 404);
  });

  t.test('lose one price with DELETE .../category/{id}', async (t) => {
    await svc.request('PUT', `${base}/products/sku/TEA`, { token, body: { sku: 'TEA', prices: [price('summer', 199), price('default', 249)] } });
    t.equal((await svc.request('DELETE', `${base}/products/sku/TEA/category/summer`, { token })).status, 200);
    t.same((await pricingOf('TEA')).body.prices.map((p: { category: string }) => p.category), ['default']);
    t.equal((await svc.request('DELETE', `${base}/products/sku/TEA/category/summer`, { token })).status, 404);
  });

  t.test('are imported in batches of put and delete', async (t) => {
    const res = await svc.request('POST', `${base}/products/_batch`, {
      token,
      raw: ndjson([
        { op: 'put', item: { sku: 'A', prices: [price('default', 100)] } },
        { op: 'put', item: { sku: 'B', prices: [price('default', 200), price('summer', 180)] } },
        { op: 'delete', item: { sku: 'TEA' } },
        { op: 'put', item: { sku: 'C', prices: [price('default', -5)] } },
        { op: 'replace', item: { sku: 'D' } },
        { op: 'put', item: { sku: 'A', prices: [price('default', 101)] } },
      ]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    t.equal(res.status, 200);
    t.same(res.body.map((r: { sku: string; status: string }) => `${r.sku}:${r.status}`), ['A:ok', 'B:ok', 'TEA:ok', 'C:error', 'D:error', 'A:ok']);
    t.same((await pricingOf('A')).body.prices, [{ category: 'default', listPrice: 101, discountedPrice: null, customerCardPrice: null, basePrice: null }], 'the later line wins');
    t.equal((await pricingOf('B')).body.prices.length, 2);
    t.equal((await pricingOf('TEA')).status, 404);
    t.equal((await pricingOf('C')).status, 404);
  });

  t.test('get single prices from the price batch', async (t) => {
    const res = await svc.request('POST', `${base}/_batch`, {
      token,
      raw: ndjson([{ sku: 'B', category: 'summer', listPrice: 170 }, { sku: 'E', category: 'default', listPrice: 500, customerCardPrice: 450 }, { sku: 'F', listPrice: 1 }]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    t.same(res.body.map((r: { sku: string; category: string; status: string }) => `${r.sku}/${r.category}:${r.status}`), ['B/summer:ok', 'E/default:ok', 'F/:error']);
    t.same((await pricingOf('B')).body.prices.map((p: { category: string; listPrice: number }) => `${p.category}=${p.listPrice}`), ['default=200', 'summer=170'], 'one category changed, the other kept');
    t.same((await pricingOf('E')).body.prices[0], { category: 'default', listPrice: 500, discountedPrice: null, customerCardPrice: 450, basePrice: null });
  });

  t.test('keep the order of a batch between whole pricings and single prices', async (t) => {
    const at = new Date();
    // A whole Pricing at line 50 (only category default), then an older single price at line 10
    // for category summer, written after it: the older price must not come back.
    await writePricings(svc.sql, TestProject, [{ line: 50, op: 'put', pricing: { sku: 'ORDER', prices: [{ category: 'default', listPrice: 300, discountedPrice: null, customerCardPrice: null, basePrice: null }] } }], at);
    await writeLegacyPrices(svc.sql, TestProject, [{ line: 10, price: PriceBatchItem.parse({ sku: 'ORDER', category: 'summer', listPrice: 1 }) }], at);
    t.same((await pricingOf('ORDER')).body.prices.map((p: { category: string }) => p.category), ['default']);
    await writeLegacyPrices(svc.sql, TestProject, [{ line: 60, price: PriceBatchItem.parse({ sku: 'ORDER', category: 'summer', listPrice: 2 }) }], at);
    t.same((await pricingOf('ORDER')).body.prices.map((p: { category: string }) => p.category), ['default', 'summer'], 'a later single price applies');
    await writePricings(svc.sql, TestProject, [{ line: 20, op: 'delete', sku: 'ORDER' }], at);
    t.equal((await pricingOf('ORDER')).status, 200, 'an older delete of the whole pricing changes nothing');
  });

  t.test('are all deleted with DELETE /pricing/products', async (t) => {
    t.equal((await svc.request('DELETE', `${base}/products`, { token })).status, 200);
    t.equal((await pricingOf('B')).status, 404);
    t.equal((await pricingOf('E')).status, 404);
    t.equal((await svc.request('GET', `${base}/categories/id/summer`, { token: categoriesToken })).status, 200, 'categories stay');
  });

  t.test('need pricingRead and pricingWrite', async (t) => {
    const reader = await svc.token(['pricingRead']);
    t.equal((await svc.request('PUT', `${base}/products/sku/X`, { token: reader, body: { sku: 'X', prices: [price('default', 1)] } })).status, 403);
    t.equal((await svc.request('POST', `${base}/_batch`, { token: reader, body: [{ sku: 'X', category: 'default', listPrice: 1 }] })).status, 403);
    t.equal((await svc.request('DELETE', `${base}/products`, { token: reader })).status, 403);
    t.equal((await pricingOf('X')).status, 404);
    t.equal((await svc.request('GET', `${base}/products/sku/X`, { token: categoriesToken })).status, 403);
  });
});
