import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const admin = await svc.token(['productsRead', 'productsWrite', 'pricingWrite', 'pricingCategoriesWrite', 'shopsWrite', 'projectsWrite']);
const reader = await svc.token(['productsRead']);
const p = `/${TestProject}`;
const ndjson = (items: object[]) => ({ raw: items.map((i) => JSON.stringify(i)).join('\n'), headers: { 'content-type': 'application/x-ndjson' } });
const eur = (price: string, extra: object = {}) => ({ price, currency: 'EUR', tier: 'list', ...extra });

// Shop s1 uses the category summer (priority 10) and winter (priority 20); shop s2 none.
for (const id of ['s1', 's2']) await svc.request('POST', `${p}/shops`, { token: admin, body: { id, name: id } });
await svc.request('POST', `${p}/pricing/categories`, { token: admin, body: { id: 'summer', priority: 10, shops: [{ id: 's1' }] } });
await svc.request('POST', `${p}/pricing/categories`, { token: admin, body: { id: 'winter', priority: 20, shops: [{ id: 's1' }] } });

const coffee = (sku: string, extra: object = {}) => ({ sku, name: `Kaffee ${sku}`, ...extra });
await svc.request('POST', `${p}/products/_batch`, {
  token: admin,
  ...ndjson([
    coffee('K1'),
    coffee('K2'),
    coffee('K3'),
    coffee('K4', { searchable: false }),
    coffee('K5'),
    coffee('K6'),
    coffee('K7'),
    coffee('K8'),
    { sku: 'T1', name: 'Tee' },
  ]),
});
await svc.request('POST', `${p}/pricing/v2/category/batch`, {
  token: admin,
  ...ndjson([
    { sku: 'K1', category: 'default', prices: [eur('1.99')] },
    { sku: 'K4', category: 'default', prices: [eur('4.99')] },
    { sku: 'K5', category: 'default', prices: [eur('5.99', { validTo: '2020-01-01T00:00:00Z' })] },
    { sku: 'K6', category: 'default', prices: [eur('6.49', { tier: 'discount' })] },
    { sku: 'K7', category: 'default', prices: [eur('7.99')] },
    { sku: 'K8', category: 'summer', prices: [eur('8.49')] },
    { sku: 'K8', category: 'winter', prices: [eur('8.29')] },
    { sku: 'T1', category: 'default', prices: [eur('0.99')] },
  ]),
});
await svc.request('POST', `${p}/pricing/_batch`, {
  token: admin,
  ...ndjson([
    { sku: 'K2', category: 'summer', listPrice: 99 },
    { sku: 'K2', category: 'default', listPrice: 149 },
    { sku: 'K7', category: 'summer', listPrice: 1 },
  ]),
});

const search = async (query: string) => svc.request('GET', `${p}/products/search?${query}`, { token: reader });
const prices = (body: { products: Array<{ sku: string; price: number | null }> }) => Object.fromEntries(body.products.map((x) => [x.sku, x.price]));

t.test('finds searchable products with their current list price in the shop', async (t) => {
  const res = await search('search=kaffee&shopID=s1');
  t.equal(res.status, 200);
  t.same(prices(res.body), {
    K1: 199, // v2 in default
    K2: 99, // legacy: the shop's category before default
    K6: 649, // a discount when there is no list price
    K7: 799, // v2 wins over a legacy price in a higher category
    K8: 829, // the category of higher priority
  });
  t.same(res.body.pagination, { page: 0, perPage: 25, totalPages: 1, totalItems: 5 });
  t.match(res.body.products[0], {
    type: 'default',
    sku: 'K1',
    name: 'Kaffee K1',
    description: null,
    basePrice: '',
    additionalAttributes: {},
    saleStop: false,
    notForSale: false,
    searchable: true,
    allowedOnDeviceTypes: [],
    maxSaleText: '',
  });
});

t.test('prices a shop without categories from default', async (t) => {
  t.same(prices((await search('search=kaffee&shopID=s2')).body), { K1: 199, K2: 149, K6: 649, K7: 799 });
});

t.test('shows products without a price when asked, with price null', async (t) => {
  const res = await search('search=kaffee&shopID=s1&showProductsWithoutPrices=true');
  t.same(prices(res.body), { K1: 199, K2: 99, K3: null, K5: null, K6: 649, K7: 799, K8: 829 }, 'an expired price is no price; K4 is not searchable');
});

t.test('pages from 0', async (t) => {
  const second = await search('search=kaffee&shopID=s1&perPage=2&page=1');
  t.same(second.body.products.map((x: { sku: string }) => x.sku), ['K6', 'K7']);
  t.same(second.body.pagination, { page: 1, perPage: 2, totalPages: 3, totalItems: 5 });
  const beyond = await search('search=kaffee&shopID=s1&perPage=2&page=9');
  t.same(beyond.body, { products: [], pagination: { page: 9, perPage: 2, totalPages: 3, totalItems: 5 } });
});

t.test('prices in the project currency only', async (t) => {
  await svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'CHF', taxRates: { normal: '8.1' }, paymentMethods: ['cash'] } });
  t.teardown(() => svc.request('PUT', `${p}/settings`, { token: admin, body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash'] } }));
  t.same(prices((await search('search=kaffee&shopID=s1')).body), { K2: 99, K7: 1 }, 'v2 prices in EUR no longer apply, so K7 falls back to its legacy price (legacy prices carry no currency)');
});

t.test('refuses an unknown shop and incomplete queries', async (t) => {
  const unknown = await search('search=kaffee&shopID=nope');
  t.equal(unknown.status, 404);
  t.same(unknown.body, { error: { type: 'not_found', message: 'no shop with id nope' } });
  t.equal((await search('shopID=s1')).status, 400);
  t.equal((await search('search=kaffee')).status, 400);
  t.equal((await search('search=kaffee&shopID=s1&perPage=101')).status, 400);
  t.equal((await search('search=kaffee&shopID=s1&page=-1')).status, 400);
});
