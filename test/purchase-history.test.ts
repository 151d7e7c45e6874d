import t from 'tap';
import { z } from 'zod';
import { createProcessFor, finishPayment, p, seedCheckout } from './support/checkout.js';
import type { HttpResponse } from './support/http.js';
import { startTestService, TestProject } from './support/service.js';

const svc = await startTestService(t);
const fx = await seedCheckout(svc);
const alice = await svc.token([], { appUserID: 'alice' });
const bob = await svc.token([], { appUserID: 'bob' });
const nobody = await svc.token(['productsRead']);
const admin = fx.tokens.orders;

/**
 * What the app SDKs' decoders require of the answer (every field they read without a default):
 * - iOS, snabble/snabble-ios-sdk Sources/Core/Orders/OrderList.swift (`OrderList`, `Order`): orders[].project, id,
 *   date, shopID, shopName, price (Int), links.receipt?.href; the SnabbleNetwork `Order.swift` of 2024 adds
 *   isSuccessful (Bool) and decodes `date` as yyyy-MM-dd'T'HH:mm:ss.SSS…Z.
 * - Android, snabble/Android-SDK core/src/main/java/io/snabble/sdk/ReceiptsApi.java (`ApiReceipt`, `ApiOrder`,
 *   read into ReceiptInfo): orders[].id, project, date (parsed with "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"), shopID,
 *   shopName, price (int), links["receipt"].href.
 */
const SdkDate = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, "yyyy-MM-dd'T'HH:mm:ss.SSS'Z', UTC");
const SdkOrder = z.object({
  project: z.string(),
  id: z.string(),
  date: SdkDate,
  shopID: z.string(),
  shopName: z.string(),
  price: z.int(),
  isSuccessful: z.boolean(),
  links: z.object({ receipt: z.object({ href: z.string().min(1) }) }),
});
const SdkOrderList = z.object({ orders: z.array(SdkOrder) });

interface Made {
  id: string;
  appUserID: string;
  state: string;
  finalizedAt: string;
  shopID: string;
  price: number;
}
const made: Made[] = [];

async function purchase(appUserID: string, options: { shop?: string; end?: 'successful' | 'failed'; items?: object[] } = {}): Promise<Made> {
  const res = await createProcessFor(svc, fx, { items: options.items, extra: { appUserID, shopID: options.shop ?? 's1' } });
  if (res.status !== 201) throw new Error(`checkout: ${res.status} ${res.text}`);
  await finishPayment(svc, fx, res.body.id, options.end ?? 'successful');
  const order = await svc.request('GET', `${p}/orders/${res.body.id}`, { token: admin });
  const m = { id: order.body.id, appUserID, state: order.body.state, finalizedAt: order.body.finalizedAt, shopID: order.body.shopID, price: order.body.price.price };
  made.push(m);
  return m;
}

/** Alice's final orders, newest first: what her history must list. */
const expected = (user: string) =>
  made
    .filter((m) => m.appUserID === user && m.state === 'final')
    .sort((a, b) => (a.finalizedAt === b.finalizedAt ? (a.id < b.id ? 1 : -1) : a.finalizedAt < b.finalizedAt ? 1 : -1));

const history = (user: string, token: string, query = '') => svc.request('GET', `${p}/users/${user}/orders${query}`, { token });
const ids = (res: HttpResponse) => res.body.orders.map((o: { id: string }) => o.id);

await purchase('alice', { shop: 's1', items: [{ sku: 'WATER', amount: 1 }] });
await purchase('bob');
await purchase('alice', { shop: 's2', items: [{ sku: 'BREAD', amount: 2 }] });
await purchase('alice', { end: 'failed' });
await purchase('');
for (let i = 0; i < 4; i++) await purchase('alice', { items: [{ sku: 'WATER', amount: i + 1 }] });

t.test("lists the app user's own final orders, newest first, in the shape the app SDKs decode", async (t) => {
  const res = await history('alice', alice);
  t.equal(res.status, 200, res.text);
  const decoded = SdkOrderList.safeParse(res.body);
  t.ok(decoded.success, decoded.error?.message ?? 'the iOS and Android decoders take it');
  const want = expected('alice');
  t.equal(want.length, 6, 'six final orders of alice (her failed one is no purchase)');
  t.same(ids(res), want.map((m) => m.id), 'hers only, newest first');
  const [newest] = res.body.orders;
  const m = want[0]!;
  t.same(newest, {
    project: TestProject,
    id: m.id,
    date: m.finalizedAt,
    shopID: m.shopID,
    shopName: 'Shop 1',
    price: m.price,
    currency: 'EUR',
    state: 'final',
    isSuccessful: true,
    links: { receipt: { href: `${p}/orders/${m.id}/receipt` } },
  });
  t.same(res.body.orders.find((o: { shopID: string }) => o.shopID === 's2')?.shopName, 'Shop 2', "each order's shop");
  t.same(res.body.pagination, { page: 0, perPage: 50, totalPages: 1, totalItems: 6 }, 'perPage 50 by default');
  t.same(res.body.links, { self: { href: `${p}/users/alice/orders` } });

  const receipt = await fetch(`${svc.url}${newest.links.receipt.href}`, { headers: { authorization: `Bearer ${alice}` } });
  t.equal(receipt.status, 200, "the receipt link works with the app user's token");
  t.equal(receipt.headers.get('content-type'), 'application/pdf');
  await receipt.arrayBuffer();
});

t.test('pages the history from page 0, with the order list\'s pagination and links', async (t) => {
  const want = expected('alice').map((m) => m.id);
  const seen: string[] = [];
  for (let page = 0; page < 3; page++) {
    const res = await history('alice', alice, `?perPage=2&page=${page}`);
    t.equal(res.status, 200);
    t.same(res.body.pagination, { page, perPage: 2, totalPages: 3, totalItems: 6 });
    t.same(res.body.links.self, { href: `${p}/users/alice/orders?perPage=2&page=${page}` });
    if (page < 2) t.same(res.body.links.nextPage, { href: `${p}/users/alice/orders?perPage=2&page=${page + 1}` });
    else t.notOk(res.body.links.nextPage, 'no next page after the last');
    seen.push(...ids(res));
  }
  t.same(seen, want, 'the pages together are the whole history, each order once');
  const beyond = await history('alice', alice, '?perPage=2&page=3');
  t.same(beyond.body.orders, [], 'a page beyond the last is empty');
  t.same(beyond.body.pagination, { page: 3, perPage: 2, totalPages: 3, totalItems: 6 });

  for (const query of ['?perPage=0', '?perPage=1001', '?page=-1', '?page=x']) {
    const bad = await history('alice', alice, query);
    t.equal(bad.status, 400, query);
    t.equal(bad.body.type, 'bad_request', query);
  }
});

t.test("refuses another user's history alike whether that user exists or not; ordersRead reads any", async (t) => {
  const other = await history('bob', alice);
  t.equal(other.status, 403);
  t.equal(other.body.type, 'forbidden');
  const unknown = await history('nobody-at-all', alice);
  t.equal(unknown.status, 403);
  t.same(unknown.body, other.body, 'the same answer: nothing tells which users exist');
  t.equal((await history('alice', nobody)).status, 403, 'a token with neither ordersRead nor an app user');

  const asAdmin = await history('bob', admin);
  t.equal(asAdmin.status, 200);
  t.same(ids(asAdmin), expected('bob').map((m) => m.id));
  t.same((await history('nobody-at-all', admin)).body.orders, [], 'an app user without orders has an empty history');
  t.same(ids(await history('bob', bob)), expected('bob').map((m) => m.id), "bob's own");
});

t.test('refuses an app user id that no database could store, naming it', async (t) => {
  const res = await history('%00', admin);
  t.equal(res.status, 400);
  t.equal(res.body.type, 'bad_request');
});
