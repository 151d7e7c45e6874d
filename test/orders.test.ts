import t, { type Test } from 'tap';
import { createProcessFor, finishPayment, p, seedCheckout, type CheckoutFixture } from './support/checkout.js';
import type { HttpResponse } from './support/http.js';
import { startTestService, TestProject, type TestService } from './support/service.js';

const svc = await startTestService(t);
const fx = await seedCheckout(svc);
// Orders as the checkout makes them; their fiscal references (added by a TSE job a moment after the
// order) are test/fiscal-local.test.ts's: here the project signs nothing, so answers compare exactly.
await svc.request('PUT', `${p}/settings`, {
  token: await svc.token(['projectsWrite']),
  body: { currency: 'EUR', taxRates: { normal: '19', reduced: '7' }, paymentMethods: ['cash', 'girocard'], fiscalization: { provider: 'none', reason: 'orders test' } },
});

type End = 'successful' | 'failed' | 'aborted';
interface CheckoutOptions {
  shop?: string;
  items?: object[];
  loyaltyCard?: string;
  paymentMethod?: string;
  paymentInformation?: object;
  paymentResult?: object;
}

/** A new process of `items` (default 2 × WATER) in `shop` (default s1); answers its id. */
async function startCheckout(on: TestService, fixture: CheckoutFixture, options: CheckoutOptions = {}): Promise<string> {
  const extra = { shopID: options.shop ?? 's1', ...(options.loyaltyCard && { customer: { loyaltyCard: options.loyaltyCard } }) };
  const res = await createProcessFor(on, fixture, { items: options.items, extra, paymentMethod: options.paymentMethod, paymentInformation: options.paymentInformation });
  if (res.status !== 201) throw new Error(`checkout process failed: ${res.status} ${res.text}`);
  return res.body.id;
}

/** Every order this file made through a checkout, to derive what a list must answer. */
interface Made {
  id: string;
  shopID: string;
  state: string;
  finalizedAt: string;
}
const made: Made[] = [];

const getOrder = (id: string, token = fx.tokens.orders) => svc.request('GET', `${p}/orders/${id}`, { token });
const list = (query = '', token = fx.tokens.orders) => svc.request('GET', `${p}/orders${query}`, { token });
const ids = (res: HttpResponse) => res.body.resources.map((o: { id: string }) => o.id);

async function recordOrder(id: string): Promise<any> {
  const res = await getOrder(id);
  if (res.status !== 200) throw new Error(`no order for ${id}: ${res.status} ${res.text}`);
  made.push({ id, shopID: res.body.shopID, state: res.body.state, finalizedAt: res.body.finalizedAt });
  return res.body;
}

/** Runs a checkout to its end through the payment state (or aborts it); answers its order. */
async function checkout(end: End, options: CheckoutOptions = {}): Promise<any> {
  const id = await startCheckout(svc, fx, options);
  await finishPayment(svc, fx, id, end, options.paymentResult);
  return recordOrder(id);
}

/** The ids a list must answer: `made` filtered, ordered by finalizedAt, then id. */
function expected(filter: (m: Made) => boolean = () => true, allStates = false): string[] {
  return made
    .filter((m) => (allStates || m.state === 'final') && filter(m))
    .sort((a, b) => (a.finalizedAt === b.finalizedAt ? (a.id < b.id ? -1 : 1) : a.finalizedAt < b.finalizedAt ? -1 : 1))
    .map((m) => m.id);
}

function refused(t: Test, res: HttpResponse, status: number, type: string, what?: string) {
  t.equal(res.status, status, `${what ?? type}: ${res.text}`);
  t.equal(res.body?.type, type, what ?? type);
}

t.test('numbers the orders of each shop 1, 2, 3, ... without gaps, each shop on its own, whatever the checkout\'s end', async (t) => {
  const sequence: Array<[string, number]> = [];
  const note = (order: any) => sequence.push([order.shopID, order.sequenceNumber]);
  note(await checkout('successful', { shop: 's1' }));
  note(await checkout('successful', { shop: 's2' }));
  note(await checkout('failed', { shop: 's1' }));
  note(await checkout('aborted', { shop: 's1' }));

  const transferred = await startCheckout(svc, fx, { shop: 's2' });
  const moved = await svc.request('PATCH', `${p}/checkout/process/${transferred}`, { token: fx.tokens.payment, body: { paymentState: 'transferred' } });
  t.equal(moved.status, 200);
  refused(t, await getOrder(transferred), 404, 'not_found', 'a transferred process has no order');

  note(await checkout('successful', { shop: 's2' }));
  t.same(sequence, [['s1', 1], ['s2', 1], ['s1', 2], ['s1', 3], ['s2', 2]], 'the transferred process took no number');

  // Six checkouts of s2 finishing at once take the next six numbers, none twice, none skipped.
  const together = await Promise.all(Array.from({ length: 6 }, () => startCheckout(svc, fx, { shop: 's2' })));
  await Promise.all(together.map((id) => finishPayment(svc, fx, id, 'successful')));
  const numbers = [];
  for (const id of together) numbers.push((await recordOrder(id)).sequenceNumber);
  t.same(numbers.sort((a, b) => a - b), [3, 4, 5, 6, 7, 8]);
  t.equal((await checkout('successful', { shop: 's1' })).sequenceNumber, 4, 's1 went on from its own 3');
});

t.test('answers an order with every field, taken from its checkout process', async (t) => {
  const [last] = await svc.sql<{ n: number }[]>`select coalesce(max(sequence_number), 0)::int as n from orders where shop_id = 's1'`;
  const paymentInformation = { terminalID: 'T-7' };
  const paymentResult = { time: '2024-05-02T10:00:00Z', aid: 'A1B2C3', pan: '************1234', paymentType: '00' };
  const id = await startCheckout(svc, fx, { loyaltyCard: 'CARD-42', paymentMethod: 'girocard', paymentInformation });
  await finishPayment(svc, fx, id, 'successful', paymentResult);
  const process = (await svc.request('GET', `${p}/checkout/process/${id}`, { token: fx.tokens.reader })).body;

  const res = await getOrder(id);
  t.equal(res.status, 200, res.text);
  made.push({ id, shopID: 's1', state: 'final', finalizedAt: res.body.finalizedAt });
  const order = res.body;
  t.ok(Date.parse(order.createdAt) >= Date.parse(process.finalizedAt) && Date.parse(order.createdAt) - Date.parse(process.finalizedAt) < 5000, 'created when the process finished');
  t.same(order, {
    id,
    project: TestProject,
    session: 'sess',
    state: 'final',
    sequenceNumber: (last?.n ?? 0) + 1,
    startedAt: process.createdAt,
    finalizedAt: process.finalizedAt,
    date: process.finalizedAt,
    createdAt: order.createdAt,
    appUserID: 'user',
    clientID: 'phone',
    checkoutDeviceID: 'phone', // no PoS took part: the customer's device
    checkoutDevice: { type: 'app', externalID: 'phone', name: '' },
    shopID: 's1',
    shop: { name: 'Shop 1', externalID: 'E-1', street: 'Torstraße 1', zip: '', city: 'Berlin', state: '', country: '', phone: '', email: '' },
    customer: { loyaltyCard: 'CARD-42' },
    paymentMethod: 'girocard',
    paymentInformation,
    paymentResult,
    paymentState: 'successful',
    paidAmount: 198,
    lineItems: [
      {
        id: '1', sku: 'WATER', name: 'Wasser', type: 'default', refersTo: null, amount: 2, taxRate: '19', price: 99, totalPrice: 198,
        priceOrigin: 'master', scannedCode: '', saleRestriction: '', weight: 0, weightUnit: '', referenceUnit: '', units: 0,
      },
    ],
    currency: 'EUR',
    price: { tax: { '19': 32 }, taxNet: { '19': 166 }, taxPre: { '19': 198 }, netPrice: 166, price: 198 }, // 198 × 19/119 = 31.61
    links: { self: { href: `${p}/orders/${id}` }, receipt: { href: `${p}/orders/${id}/receipt` } },
    payments: [{ method: 'girocard', state: 'successful', information: paymentInformation, result: paymentResult, currency: 'EUR', paidAmount: 198 }],
  });
});

t.test('records aborted and failed checkouts as userAborted and paymentFailed orders', async (t) => {
  const aborted = await checkout('aborted', { shop: 's2' });
  t.match(aborted, { state: 'userAborted', paymentState: 'failed', shopID: 's2' });
  const failed = await checkout('failed', { shop: 's2', paymentResult: { code: 'declined' } });
  t.match(failed, { state: 'paymentFailed', paymentState: 'failed', paymentResult: { code: 'declined' } });
});

t.test('answers an order only with ordersRead, and 404 for an unknown one', async (t) => {
  const [some] = made;
  refused(t, await getOrder(some!.id, fx.tokens.reader), 403, 'forbidden', 'with checkoutRead');
  refused(t, await svc.request('GET', `${p}/orders/${some!.id}`), 403, 'forbidden', 'without a token');
  refused(t, await getOrder('00000000-0000-4000-8000-000000000000'), 404, 'not_found');
  refused(t, await list('', fx.tokens.reader), 403, 'forbidden', 'the list with checkoutRead');
});

t.test('lists the final orders by finalizedAt; includeAllStates adds the aborted and failed ones', async (t) => {
  const res = await list();
  t.equal(res.status, 200, res.text);
  t.same(ids(res), expected());
  t.ok(res.body.resources.every((o: any) => o.state === 'final'));
  const total = expected().length;
  t.same(res.body.pagination, { page: 0, perPage: 1000, totalPages: 1, totalItems: total });
  t.same(res.body.links, { self: { href: `${p}/orders` } }, 'no next page');
  const one = res.body.resources.find((o: any) => o.id === made[0]!.id);
  t.same(one, (await getOrder(made[0]!.id)).body, 'a listed order is the order');

  const all = await list('?includeAllStates=true');
  t.same(ids(all), expected(undefined, true));
  t.same(
    [...new Set(all.body.resources.map((o: any) => o.state))].sort(),
    ['final', 'paymentFailed', 'userAborted'],
  );
  t.same(ids(await list('?includeAllStates=false')), expected());
});

t.test('filters by from (inclusive), to (exclusive) and date (one day)', async (t) => {
  const a = await checkout('successful');
  const d = await checkout('failed', { shop: 's2' });
  const b = await checkout('successful', { shop: 's2' });
  const c = await checkout('successful');
  const q = (query: string) => list(`?${query}`);
  const at = (order: any) => encodeURIComponent(order.finalizedAt);

  t.same(ids(await q(`from=${at(a)}`)), [a.id, b.id, c.id], 'from a');
  t.same(ids(await q(`from=${at(a)}&includeAllStates=true`)), [a.id, d.id, b.id, c.id]);
  t.same(ids(await q(`from=${at(a)}&to=${at(c)}`)), [a.id, b.id], 'to is exclusive');
  t.same(ids(await q(`to=${at(a)}`)), expected((m) => m.finalizedAt < a.finalizedAt), 'before a');
  t.same(ids(await q(`from=${at(b)}&to=${at(b)}`)), [], 'an empty range');
  t.same(ids(await q(`date=${at(a)}`)), [a.id, b.id, c.id], 'one day from a');

  const day = a.finalizedAt.slice(0, 10);
  const dayBefore = new Date(Date.parse(day) - 86_400_000).toISOString().slice(0, 10);
  const dayAfter = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);
  t.same(ids(await q(`date=${day}`)), expected((m) => m.finalizedAt.startsWith(day)), 'the day of a (UTC)');
  t.same(ids(await q(`date=${dayBefore}`)), expected((m) => m.finalizedAt.startsWith(dayBefore)), 'the day before');
  t.same(ids(await q(`from=${day}&to=${dayAfter}`)), expected((m) => m.finalizedAt.startsWith(day)), 'dates for from and to');
  t.same(ids(await q(`from=${encodeURIComponent(a.finalizedAt.replace('Z', '+02:00'))}`)), expected((m) => Date.parse(m.finalizedAt) >= Date.parse(a.finalizedAt) - 7_200_000), 'an offset');

  refused(t, await q(`date=${day}&from=${at(a)}`), 400, 'bad_request', 'date with from');
  refused(t, await q(`date=${day}&to=${at(c)}`), 400, 'bad_request', 'date with to');
  refused(t, await q('from=yesterday'), 400, 'bad_request', 'not a time');
});

t.test('filters by shopID and by shop.externalID', async (t) => {
  const s1 = expected((m) => m.shopID === 's1');
  const s2 = expected((m) => m.shopID === 's2');
  t.ok(s1.length > 0 && s2.length > 0);
  t.same(ids(await list('?shopID=s1')), s1);
  t.same(ids(await list('?shopID=s2')), s2);
  t.same(ids(await list('?shop.externalID=E-1')), s1);
  t.same(ids(await list('?shop.externalID=E-2')), s2);
  t.same(ids(await list('?shop.externalID=E-2&includeAllStates=true')), expected((m) => m.shopID === 's2', true));
  t.same(ids(await list('?shopID=s1&shop.externalID=E-2')), [], 'both must hold');
});

t.test('answers an empty list with its pagination', async (t) => {
  const res = await list('?shopID=nowhere');
  t.equal(res.status, 200);
  t.same(res.body, {
    resources: [],
    pagination: { page: 0, perPage: 1000, totalPages: 0, totalItems: 0 },
    links: { self: { href: `${p}/orders?shopID=nowhere` } },
  });
});

t.test('pages the list with page and perPage, linking the next page while there is one', async (t) => {
  const all = expected();
  const perPage = 3;
  const totalPages = Math.ceil(all.length / perPage);
  t.ok(all.length > 2 * perPage && all.length % perPage !== 0, `${all.length} orders: several pages, the last one short`);

  const seen: string[] = [];
  for (let page = 0; page < totalPages; page++) {
    const res = await list(`?perPage=${perPage}&page=${page}`);
    t.equal(res.status, 200);
    seen.push(...ids(res));
    t.same(res.body.pagination, { page, perPage, totalPages, totalItems: all.length });
    t.equal(res.body.links.self.href, `${p}/orders?perPage=${perPage}&page=${page}`);
    if (page + 1 < totalPages) t.equal(res.body.links.nextPage?.href, `${p}/orders?perPage=${perPage}&page=${page + 1}`, `page ${page} links the next`);
    else t.notOk('nextPage' in res.body.links, 'the last page links no next page');
  }
  t.same(seen, all, 'the pages together are the list, in order');

  const first = await list(`?perPage=${perPage}`);
  t.equal(first.body.links.nextPage.href, `${p}/orders?perPage=${perPage}&page=1`, 'the first page, without page in the query');
  const beyond = await list(`?perPage=${perPage}&page=${totalPages}`);
  t.equal(beyond.status, 200);
  t.same(beyond.body.resources, []);
  t.same(beyond.body.pagination, { page: totalPages, perPage, totalPages, totalItems: all.length });
  t.notOk('nextPage' in beyond.body.links);
  t.equal((await list('?perPage=30000')).status, 200, 'perPage up to 30000');
  t.same(ids(await list('?perPage=1')), all.slice(0, 1), 'perPage 1');
});

t.test('refuses a page or perPage out of range with 400 bad_request', async (t) => {
  refused(t, await list('?perPage=0'), 400, 'bad_request', 'perPage 0');
  refused(t, await list('?perPage=30001'), 400, 'bad_request', 'perPage 30001');
  refused(t, await list('?page=-1'), 400, 'bad_request', 'page -1');
  refused(t, await list('?page=one'), 400, 'bad_request', 'page one');
  refused(t, await list('?perPage=1.5'), 400, 'bad_request', 'perPage 1.5');
});

t.test('refuses a list matching more orders than ORDERS_LIST_MAX_RECORDS with 403 too_many_records; a narrower one passes', async (t) => {
  const small = await startTestService(t, { env: { ORDERS_LIST_MAX_RECORDS: '3' } });
  const smallFx = await seedCheckout(small);
  const run = async (end: End, shop: string) => finishPayment(small, smallFx, await startCheckout(small, smallFx, { shop }), end);
  const smallList = (query = '') => small.request('GET', `${p}/orders${query}`, { token: smallFx.tokens.orders });
  for (const shop of ['s1', 's1', 's1']) await run('successful', shop);
  t.equal((await smallList()).body.pagination?.totalItems, 3, 'as many as the ceiling pass');
  await run('successful', 's2');
  await run('failed', 's2');

  const tooMany = await smallList();
  refused(t, tooMany, 403, 'too_many_records', '4 final orders');
  refused(t, await smallList('?perPage=1'), 403, 'too_many_records', 'a small page does not help');
  const s1 = await smallList('?shopID=s1');
  t.equal(s1.status, 200);
  t.equal(s1.body.resources.length, 3);
  const s2 = await smallList('?shop.externalID=E-2&includeAllStates=true');
  t.equal(s2.status, 200);
  t.same(s2.body.resources.map((o: any) => o.state), ['final', 'paymentFailed']);
  refused(t, await smallList('?includeAllStates=true&from=2000-01-01'), 403, 'too_many_records', 'all 5 orders');
});

t.test('sends a page of more than 500 orders in parts, complete and in order', async (t) => {
  // A real order as the template: 1200 copies for a shop of their own, two by two at the same
  // finalizedAt, so that parts of 500 also end between orders of the same time.
  const template = (await getOrder(made[0]!.id)).body;
  const base = Date.parse('2020-03-01T08:00:00.000Z');
  const rows = Array.from({ length: 1200 }, (_, i) => {
    const finalizedAt = new Date(base + Math.floor(i / 2) * 1000).toISOString();
    const id = `bulk-${i % 2 ? 'a' : 'b'}-${String(i).padStart(4, '0')}`;
    return { id, sequenceNumber: i + 1, finalizedAt, doc: { ...template, id, shopID: 'bulk', sequenceNumber: i + 1, finalizedAt, date: finalizedAt, links: { self: { href: `${p}/orders/${id}` } } } };
  });
  await svc.sql`
    insert into orders (project, id, shop_id, shop_external_id, sequence_number, state, finalized_at, doc)
    select ${TestProject}, id, 'bulk', 'E-BULK', seq, 'final', at, doc::json
    from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.sequenceNumber)}::bigint[], ${rows.map((r) => r.finalizedAt)}::timestamptz[], ${rows.map((r) => JSON.stringify(r.doc))}::text[])
      as u(id, seq, at, doc)`;
  const order = [...rows].sort((a, b) => (a.finalizedAt === b.finalizedAt ? (a.id < b.id ? -1 : 1) : a.finalizedAt < b.finalizedAt ? -1 : 1)).map((r) => r.id);
  t.equal(order[0], 'bulk-a-0001', 'within the same time, by id');

  const first = await list('?shopID=bulk&perPage=1100');
  t.equal(first.status, 200, first.text.slice(0, 500));
  t.equal(first.body.resources.length, 1100);
  t.same(ids(first), order.slice(0, 1100));
  t.same(first.body.pagination, { page: 0, perPage: 1100, totalPages: 2, totalItems: 1200 });
  t.equal(first.body.links.nextPage?.href, `${p}/orders?shopID=bulk&perPage=1100&page=1`);
  t.same(first.body.resources[600], rows.find((r) => r.id === order[600])!.doc, 'each order whole');

  const second = await list('?shopID=bulk&perPage=1100&page=1');
  t.equal(second.status, 200);
  t.same(ids(second), order.slice(1100));
  t.same(second.body.pagination, { page: 1, perPage: 1100, totalPages: 2, totalItems: 1200 });
  t.notOk('nextPage' in second.body.links);

  const byDay = await list('?date=2020-03-01&perPage=30000');
  t.same(ids(byDay), order, 'all of that day in one page');
});
