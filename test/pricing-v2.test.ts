import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const token = await svc.token(['pricingRead', 'pricingWrite']);
const batchPath = `/${TestProject}/pricing/v2/category/batch`;
const list = (price: string, extra: object = {}) => ({ price, currency: 'EUR', tier: 'list', ...extra });

async function importNdjson(items: Array<object | string>) {
  const raw = items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n');
  return svc.request('POST', batchPath, { token, raw, headers: { 'content-type': 'application/x-ndjson' } });
}
const ofSku = async (sku: string) => (await svc.request('GET', `/${TestProject}/pricing/v2/sku/${sku}`, { token })).body;

t.test('imports category prices and answers them by SKU, sorted as the spec says', async (t) => {
  const res = await importNdjson([
    {
      sku: 'MILK',
      category: 'summer',
      prices: [
        { price: '0.99', currency: 'EUR', tier: 'list', validFrom: '2026-07-01T00:00:00+02:00', validTo: '2026-09-01T00:00:00+02:00' },
        { price: '1.19', currency: 'EUR', tier: 'list', basePrice: '1.19 €/l' },
        { price: '0.89', currency: 'EUR', tier: 'discount', quantity: 3, validFrom: '2026-08-01T00:00:00Z' },
        { price: '1.09', currency: 'EUR', tier: 'list', validFrom: '2026-06-01T00:00:00Z', productSetSKU: 'MILK-6' },
      ],
    },
    { sku: 'MILK', category: 'default', prices: [list('1.29')] },
  ]);
  t.equal(res.status, 200);
  t.same(res.body, [{ sku: 'MILK', category: 'summer', status: 'ok' }, { sku: 'MILK', category: 'default', status: 'ok' }]);

  t.same(await ofSku('MILK'), [
    {
      sku: 'MILK',
      pricings: [
        { category: 'default', prices: [{ price: '1.29', currency: 'EUR', tier: 'list', quantity: 1 }] },
        {
          category: 'summer',
          prices: [
            { price: '0.89', currency: 'EUR', tier: 'discount', quantity: 3, validFrom: '2026-08-01T00:00:00.000Z' },
            { price: '1.19', currency: 'EUR', tier: 'list', quantity: 1, basePrice: '1.19 €/l' },
            { price: '1.09', currency: 'EUR', tier: 'list', quantity: 1, validFrom: '2026-06-01T00:00:00.000Z', productSetSKU: 'MILK-6' },
            { price: '0.99', currency: 'EUR', tier: 'list', quantity: 1, validFrom: '2026-06-30T22:00:00.000Z', validTo: '2026-08-31T22:00:00.000Z' },
          ],
        },
      ],
    },
  ], 'by category; by tier, then validFrom with none first; times in UTC');
});

t.test('replaces the prices of a category; an empty list leaves no price there', async (t) => {
  await importNdjson([{ sku: 'MILK', category: 'summer', prices: [list('1.00')] }]);
  t.same((await ofSku('MILK'))[0].pricings.find((p: { category: string }) => p.category === 'summer').prices, [{ price: '1.00', currency: 'EUR', tier: 'list', quantity: 1 }]);
  await importNdjson([{ sku: 'MILK', category: 'summer', prices: [] }]);
  t.same((await ofSku('MILK'))[0].pricings.map((p: { category: string }) => p.category), ['default']);
  await importNdjson([{ sku: 'MILK', category: 'default', prices: [] }]);
  t.same(await ofSku('MILK'), [], 'no prices at all: an empty array');
});

t.test('the later line about the same product and category wins', async (t) => {
  await importNdjson([{ sku: 'TEA', category: 'default', prices: [list('2.00')] }, { sku: 'TEA', category: 'default', prices: [list('2.50')] }]);
  t.equal((await ofSku('TEA'))[0].pricings[0].prices[0].price, '2.50');
});

t.test('reports invalid prices per line and stores the rest', async (t) => {
  const res = await importNdjson([
    { sku: 'A', category: 'default', prices: [list('1.999')] },
    { sku: 'B', category: 'default', prices: [list('-1.00')] },
    { sku: 'C', category: 'default', prices: [{ price: '1.00', currency: 'euro', tier: 'list' }] },
    { sku: 'D', category: 'default', prices: [list('1.00', { validFrom: '2026-02-01T00:00:00Z', validTo: '2026-01-01T00:00:00Z' })] },
    { sku: 'E', category: 'default', prices: [list('1.00', { quantity: 0 })] },
    { sku: 'F', category: 'bad category!', prices: [list('1.00')] },
    { sku: 'G', category: 'default', prices: [list('100', { currency: 'JPY' }), list('1.234', { currency: 'KWD' })] },
    { sku: 'H', category: 'default', prices: [list('1.00', { validFrom: 'yesterday' })] },
  ]);
  // C: a currency is any text (only prices in the project's currency sell); E: a quantity of 0 applies from the first unit.
  t.same(res.body.map((r: { sku: string; status: string }) => `${r.sku}:${r.status}`), ['A:error', 'B:error', 'C:ok', 'D:error', 'E:ok', 'F:error', 'G:ok', 'H:error']);
  t.match(res.body[0].message, /prices\.0\.price: not an amount of EUR/);
  t.match(res.body[3].message, /validTo must be after validFrom/);
  t.same(await ofSku('A'), []);
  t.equal((await ofSku('G'))[0].pricings[0].prices.length, 2, 'amounts in currencies with other subunits');
});

t.test('keeps the limits', async (t) => {
  const tooMany = await importNdjson(Array.from({ length: 20_001 }, (_, i) => ({ sku: `Z${i}`, category: 'default', prices: [list('1.00')] })));
  t.equal(tooMany.status, 413);
  t.same(await ofSku('Z1'), []);
  const json = await svc.request('POST', batchPath, { token, body: Array.from({ length: 501 }, (_, i) => ({ sku: `Y${i}`, category: 'default', prices: [] })) });
  t.equal(json.status, 413);
});

t.test('needs pricingRead to read and pricingWrite to import', async (t) => {
  const reader = await svc.token(['pricingRead']);
  t.equal((await svc.request('POST', batchPath, { token: reader, body: [{ sku: 'NO', category: 'default', prices: [list('1.00')] }] })).status, 403);
  t.same(await ofSku('NO'), []);
  t.equal((await svc.request('GET', `/${TestProject}/pricing/v2/sku/MILK`, { token: await svc.token(['pricingWrite']) })).status, 403);
});
