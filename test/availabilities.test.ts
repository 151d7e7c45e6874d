import t from 'tap';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const token = await svc.token(['availabilitiesRead', 'availabilitiesWrite']);
const reader = await svc.token(['availabilitiesRead']);
const batchPath = `/${TestProject}/availabilites/_batch`;
const put = (shopID: string, sku: string, value: string) => ({ op: 'put', availability: { shopID, sku, value } });
const del = (shopID: string, sku: string) => ({ op: 'delete', availability: { shopID, sku } });

async function importNdjson(items: Array<object | string>) {
  const raw = items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n');
  return svc.request('POST', batchPath, { token, raw, headers: { 'content-type': 'application/x-ndjson' } });
}
const ofSku = async (sku: string) => (await svc.request('GET', `/${TestProject}/availabilites/sku/${sku}`, { token: reader })).body;

t.test('puts and deletes availabilities with a result per item', async (t) => {
  const res = await importNdjson([put('s2', 'MILK', 'listed'), put('s1', 'MILK', 'inStock'), put('s3', 'MILK', 'notAvailable'), del('s3', 'MILK'), del('s9', 'MILK')]);
  t.equal(res.status, 200);
  t.same(res.body, [
    { availability: { shopID: 's2', sku: 'MILK', value: 'listed' }, status: 'ok' },
    { availability: { shopID: 's1', sku: 'MILK', value: 'inStock' }, status: 'ok' },
    { availability: { shopID: 's3', sku: 'MILK', value: 'notAvailable' }, status: 'ok' },
    { availability: { shopID: 's3', sku: 'MILK' }, status: 'ok' },
    { availability: { shopID: 's9', sku: 'MILK' }, status: 'ok' },
  ]);
  t.same(await ofSku('MILK'), {
    availabilities: [
      { shopID: 's1', sku: 'MILK', value: 'inStock', project: TestProject },
      { shopID: 's2', sku: 'MILK', value: 'listed', project: TestProject },
    ],
  }, 'by shop; a deleted one is gone, a later line about the same shop and SKU wins');
});

t.test('a later batch changes what an earlier one wrote, a delete then a put brings it back', async (t) => {
  await importNdjson([put('s1', 'MILK', 'notAvailable')]);
  await importNdjson([del('s2', 'MILK'), put('s2', 'MILK', 'inStock')]);
  t.same((await ofSku('MILK')).availabilities.map((a: { shopID: string; value: string }) => `${a.shopID}:${a.value}`), ['s1:notAvailable', 's2:inStock']);
});

t.test('always answers for an unknown product or project', async (t) => {
  t.same(await ofSku('NOTHING'), { availabilities: [] });
  const other = await svc.token(['availabilitiesRead'], { project: 'no-such-project' });
  const res = await svc.request('GET', '/no-such-project/availabilites/sku/MILK', { token: other });
  t.equal(res.status, 200);
  t.same(res.body, { availabilities: [] }, 'and never another project\'s');
});

t.test('reports bad lines and stores the good ones', async (t) => {
  const res = await importNdjson([
    { op: 'upsert', availability: { shopID: 's1', sku: 'X', value: 'inStock' } },
    { op: 'put', availability: { shopID: 's1', sku: 'X' } },
    { op: 'put', availability: { sku: 'X', value: 'inStock' } },
    'not json',
    put('s5', 'X', 'inStock'),
  ]);
  t.same(res.body.map((r: { status: string; line?: number }) => [r.status, r.line]), [['error', 1], ['error', 2], ['error', 3], ['error', 4], ['ok', undefined]]);
  t.same(res.body[1].availability, { shopID: 's1', sku: 'X', value: '' }, 'an error result names the availability as far as it can be read');
  t.same((await ofSku('X')).availabilities.map((a: { shopID: string }) => a.shopID), ['s5']);
});

t.test('takes a JSON array and keeps the limits', async (t) => {
  const json = await svc.request('POST', batchPath, { token, body: [put('s7', 'Y', 'inStock')] });
  t.equal(json.status, 200);
  t.same(json.body, [{ availability: { shopID: 's7', sku: 'Y', value: 'inStock' }, status: 'ok' }]);
  const tooMany = await importNdjson(Array.from({ length: 20_001 }, (_, i) => put('s1', `Z${i}`, 'inStock')));
  t.equal(tooMany.status, 413);
  t.equal(tooMany.body.type, 'batch_too_large');
  t.same(await ofSku('Z1'), { availabilities: [] }, 'nothing stored');
});

t.test('needs availabilitiesRead to read and availabilitiesWrite to write', async (t) => {
  t.equal((await svc.request('POST', batchPath, { token: reader, body: [put('s1', 'W', 'inStock')] })).status, 403);
  t.same(await ofSku('W'), { availabilities: [] });
  t.equal((await svc.request('GET', `/${TestProject}/availabilites/sku/MILK`, { token: await svc.token(['availabilitiesWrite']) })).status, 403);
});
