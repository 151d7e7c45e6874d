import t from 'tap';
import { p, seedCheckout, watchEvents } from './support/checkout.js';
import { checkoutIn, closingTokens, closingWithLogs, downloadLog, getClosing, postJob, runJob } from './support/closing.js';
import { startTestService } from './support/service.js';

const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
const fx = await seedCheckout(svc);
const tokens = await closingTokens(svc);
const events = await watchEvents(t, svc);
const company = {
  companyName: 'Acme Lebensmittel GmbH',
  taxNumber: '12/345/67890',
  vatID: 'DE123456789',
  companyAdress: { street: 'Hauptstraße 1', zip: '10115', city: 'Berlin', country: 'DE' },
};
const admin = await svc.token(['projectsWrite']);
await svc.request('PUT', `${p}/settings`, {
  token: admin,
  body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'], ...company },
});

const two = [{ sku: 'WATER', amount: 2 }, { sku: 'BREAD', amount: 1 }];

t.test('a report job closes the shop now: 202 pending, then done with the closing and its totals', async (t) => {
  await checkoutIn(svc, fx, 's1', 'successful', { items: two });
  await checkoutIn(svc, fx, 's1', 'successful', { items: [{ sku: 'WATER', amount: 1 }], paymentMethod: 'girocard' });
  await checkoutIn(svc, fx, 's1', 'failed');
  await checkoutIn(svc, fx, 's1', 'aborted');

  const res = await postJob(svc, tokens.both, { shopID: 's1', deviceID: 'tablet-7', skippedCashCount: true, formats: ['aggregated_receipts'] });
  t.equal(res.status, 202, res.text);
  t.match(res.body, { id: String, state: 'pending', shopID: 's1', deviceID: 'tablet-7', skippedCashCount: true, formats: ['aggregated_receipts'], finishedAt: null });
  t.equal(res.body.links.self.href, `${p}/closings/jobs/${res.body.id}`);
  t.equal(res.headers.get('location'), res.body.links.self.href);
  t.notOk(res.body.links.closing, 'no closing link while pending');

  const job = await runJob(svc, tokens, { shopID: 's1' });
  t.equal(job.state, 'done');
  t.equal(job.links.closing.href, `${p}/closings/shops/s1/sequenceNumbers/${job.sequenceNumber}`);

  const first = await getClosing(svc, tokens.read, 's1', 1);
  t.equal(first.status, 200, first.text);
  const closing = first.body;
  t.match(closing, {
    project: 'acme-test01', shopID: 's1', sequenceNumber: 1, firstOrderSequenceNumber: 1, lastOrderSequenceNumber: 4, orderCount: 2,
    currency: 'EUR', ...company, origin: { type: 'job', jobID: res.body.id, deviceID: 'tablet-7', skippedCashCount: true },
  });
  t.match(closing.shop, { name: 'Shop 1', externalID: 'E-1', city: 'Berlin', street: 'Torstraße 1' });
  // 2 × 0.99 + 2.49 and 0.99: each order its own tax per rate (0.32 and 0.16 at 19 %, 0.16 at 7 %).
  t.equal(closing.total, 546);
  t.same(closing.taxShares, [
    { rate: 19, net: 249, tax: 48, total: 297 },
    { rate: 7, net: 233, tax: 16, total: 249 },
  ]);
  t.same(closing.shareByPaymentMethod, [{ paymentMethod: 'cash', amount: 447 }, { paymentMethod: 'girocard', amount: 99 }]);
  t.equal(closing.orders.length, 2, 'final orders only');
  t.same(closing.orders.map((o: any) => o.sequenceNumber), [1, 2]);
  t.equal(closing.orders.reduce((sum: number, o: any) => sum + o.paidAmount, 0), closing.total);

  const second = await closingWithLogs(svc, tokens.read, 's1', job.sequenceNumber);
  t.equal(second.lastOrderSequenceNumber, 4, 'nothing new: the range stays where it was');
  t.equal(second.total, 0);
  t.same(second.orders, [], 'an empty closing is stored too');
});

t.test('each report job takes only the orders after the closing before it', async (t) => {
  const before = (await runJob(svc, tokens, { shopID: 's2' })).sequenceNumber;
  const ids = [await checkoutIn(svc, fx, 's2', 'successful'), await checkoutIn(svc, fx, 's2', 'successful')];
  const job = await runJob(svc, tokens, { shopID: 's2' });
  t.equal(job.sequenceNumber, before + 1, 'gapless closing numbers per shop');
  const closing = (await getClosing(svc, tokens.read, 's2', job.sequenceNumber)).body;
  t.same(closing.orders.map((o: any) => o.id), ids);
  t.equal(closing.total, 2 * 198);
  const again = await runJob(svc, tokens, { shopID: 's2' });
  t.same((await getClosing(svc, tokens.read, 's2', again.sequenceNumber)).body.orders, []);
});

t.test('a job with no formats takes those of the shop\'s schedules; its logs are written and downloadable', async (t) => {
  const schedule = await svc.request('POST', `${p}/closings/schedules`, {
    token: tokens.write,
    body: { shop: 's1', days: ['Monday'], location: 'Europe/Berlin', formats: ['aggregated_receipts', 'dsfinvk_2023_03'] },
  });
  t.equal(schedule.status, 201, schedule.text);
  await checkoutIn(svc, fx, 's1', 'successful', { items: two });
  const job = await runJob(svc, tokens, { shopID: 's1', deviceID: 'pos-1' });
  t.same(job.formats, ['aggregated_receipts', 'dsfinvk_2023_03']);
  const closing = await closingWithLogs(svc, tokens.read, 's1', job.sequenceNumber);
  t.same(closing.logs.map((l: any) => [l.format, l.state]), [['aggregated_receipts', 'present'], ['dsfinvk_2023_03', 'present']]);
  t.equal(closing.links.self.href, `${p}/closings/shops/s1/sequenceNumbers/${job.sequenceNumber}`);
  for (const log of closing.logs) t.equal(closing.links[log.format].href, `${p}/closings/logs/${log.id}`, `a link to the ${log.format} log`);

  const csv = await downloadLog(svc, tokens.read, closing.links.aggregated_receipts.href);
  t.equal(csv.status, 200);
  t.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  t.match(csv.headers.get('content-disposition'), /^attachment; filename="aggregated_receipts_s1_\d+\.csv"$/);
  const lines = new TextDecoder().decode(csv.bytes).split('\r\n');
  t.equal(lines[0], 'sequenceNumber,orderID,finalizedAt,state,paymentMethod,currency,total,net_19,tax_19,gross_19,net_7,tax_7,gross_7');
  t.equal(lines.length, 3, 'a header, one order, and the final line break');
  t.match(lines[1], /^5,[0-9a-f-]{36},[^,]+,final,cash,EUR,4\.47,1\.66,0\.32,1\.98,2\.33,0\.16,2\.49$/);

  const zip = await downloadLog(svc, tokens.read, closing.links.dsfinvk_2023_03.href);
  t.equal(zip.status, 200);
  t.equal(zip.headers.get('content-type'), 'application/zip');
  t.match(zip.headers.get('content-disposition'), /^attachment; filename="dsfinvk_2023_03_s1_\d+\.zip"$/);
  t.same([...zip.bytes.slice(0, 4)], [0x50, 0x4b, 0x03, 0x04], 'a zip');
});

t.test('refuses a job for a shop that does not exist (400 naming shopID) and answers 404 for an unknown job', async (t) => {
  const res = await postJob(svc, tokens.both, { shopID: 'nope' });
  t.equal(res.status, 400);
  t.equal(res.body.type, 'bad_request');
  t.match(res.body.message, 'shopID');
  const invalid = await postJob(svc, tokens.both, { shopID: 's1', formats: ['pdf'] });
  t.equal(invalid.status, 400);
  t.match(invalid.body.message, 'formats');
  const bad = await postJob(svc, tokens.both, { shopID: 's1', skippedCashCount: 'yes' });
  t.equal(bad.status, 400);
  t.match(bad.body.message, 'skippedCashCount');
  const nul = await postJob(svc, tokens.both, { shopID: 's1', deviceID: 'a\u0000b' });
  t.equal(nul.status, 400);
  t.match(nul.body.message, 'deviceID');
  const n = (await svc.sql<{ n: number }[]>`select count(*)::int as n from closing_jobs where shop_id = 'nope' or device_id like 'a%b'`)[0]!.n;
  t.equal(n, 0, 'no job was stored');
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '-'.repeat(36), `${'f'.repeat(35)}g`]) {
    const unknown = await svc.request('GET', `${p}/closings/jobs/${id}`, { token: tokens.read });
    t.equal(unknown.status, 404);
    t.equal(unknown.body.type, 'not_found');
  }
});

t.test('lists closings newest first in the spec\'s envelope, page by page, and by shop', async (t) => {
  const all = await svc.request('GET', `${p}/closings`, { token: tokens.read });
  t.equal(all.status, 200);
  const total = all.body.pagination.totalItems;
  t.ok(total >= 6);
  t.same(all.body.pagination, { page: 0, perPage: 1000, totalPages: 1, totalItems: total });
  t.same(all.body.links, { self: { href: `${p}/closings` } });
  const created = all.body.closings.map((c: any) => c.createdAt);
  t.same(created, [...created].sort().reverse(), 'newest first');
  t.notOk('orders' in all.body.closings[0], 'without orders (links.self has them)');

  const pages: any[] = [];
  for (let page = 0; ; page++) {
    const res = await svc.request('GET', `${p}/closings?perPage=2&page=${page}`, { token: tokens.read });
    t.equal(res.status, 200);
    t.same(res.body.pagination, { page, perPage: 2, totalPages: Math.ceil(total / 2), totalItems: total });
    if (page + 1 < Math.ceil(total / 2)) t.equal(res.body.links.nextPage.href, `${p}/closings?perPage=2&page=${page + 1}`);
    else t.notOk(res.body.links.nextPage, 'no next page after the last');
    if (!res.body.closings.length) break;
    pages.push(...res.body.closings);
  }
  t.same(pages.map((c) => `${c.shopID}/${c.sequenceNumber}`), all.body.closings.map((c: any) => `${c.shopID}/${c.sequenceNumber}`), 'the pages make the whole list');

  const s2 = await svc.request('GET', `${p}/closings?shopID=s2`, { token: tokens.read });
  t.ok(s2.body.closings.length >= 3);
  t.ok(s2.body.closings.every((c: any) => c.shopID === 's2'));
  t.same(s2.body.closings.map((c: any) => c.sequenceNumber), [...s2.body.closings.map((c: any) => c.sequenceNumber)].sort((a, b) => b - a));

  for (const query of ['page=-1', 'perPage=0', 'perPage=30001', 'shopID=a%20b']) {
    const res = await svc.request('GET', `${p}/closings?${query}`, { token: tokens.read });
    t.equal(res.status, 400, query);
    t.equal(res.body.type, 'bad_request');
  }
});

t.test('answers 404 for a closing or a log that does not exist', async (t) => {
  for (const path of ['/closings/shops/s1/sequenceNumbers/999', '/closings/shops/nope/sequenceNumbers/1', '/closings/logs/999999']) {
    const res = await svc.request('GET', `${p}${path}`, { token: tokens.read });
    t.equal(res.status, 404, path);
    t.equal(res.body.type, 'not_found');
  }
});

t.test('needs closingsRead to read and closingsWrite to post a job', async (t) => {
  const none = await svc.token(['ordersRead']);
  const before = await svc.sql<{ n: number }[]>`select count(*)::int as n from closing_jobs`;
  for (const [method, path, token] of [
    ['POST', '/closings/jobs', tokens.read],
    ['POST', '/closings/jobs', none],
    ['GET', '/closings', tokens.write],
    ['GET', '/closings', none],
    ['GET', '/closings/shops/s1/sequenceNumbers/1', none],
    ['GET', '/closings/logs/1', none],
    ['GET', '/closings/jobs/00000000-0000-4000-8000-000000000000', none],
  ] as const) {
    const res = await svc.request(method, `${p}${path}`, { token, ...(method === 'POST' ? { body: { shopID: 's1' } } : {}) });
    t.equal(res.status, 403, `${method} ${path}`);
    t.equal(res.body.type, 'forbidden');
  }
  const after = await svc.sql<{ n: number }[]>`select count(*)::int as n from closing_jobs`;
  t.equal(after[0]!.n, before[0]!.n, 'no job was stored');
});

t.test('publishes closing events: job pending and done, closing created, log present', async (t) => {
  await events.settle();
  const closingEvents = events.events.filter((e) => e.domain === 'closing');
  const names = new Set(closingEvents.map((e) => e.event));
  for (const name of ['jobPending', 'jobDone', 'created', 'logPresent']) t.ok(names.has(name), `a ${name} event`);
  const created = closingEvents.find((e) => e.event === 'created' && e.payload.closing.shopID === 's1' && e.payload.closing.sequenceNumber === 1)!;
  t.equal(created.subject, 'events.acme-test01.closing.s1.created');
  t.match(created.payload, { project: 'acme-test01', shopID: 's1', event: 'created', closing: { total: 546, sequenceNumber: 1 } });
  const done = closingEvents.filter((e) => e.event === 'jobDone');
  t.ok(done.every((e) => e.payload.job.state === 'done' && e.payload.job.links.closing));
});
