import { randomUUID } from 'node:crypto';
import { setTimeout } from 'node:timers/promises';
import t from 'tap';
import { signCheckoutInfo } from '../src/domain/signature.js';
import { p, seedCheckout } from './support/checkout.js';
import { startTestService, TestCheckoutSecret, TestProject } from './support/service.js';

const svc = await startTestService(t);
const fx = await seedCheckout(svc);
const { tokens } = fx;
const key = new TextEncoder().encode(TestCheckoutSecret);
const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TtlMs = 3_600_000; // CHECKOUT_INFO_TTL_SECONDS' default

const create = (body: object) => svc.request('POST', `${p}/checkout/process`, { token: tokens.customer, body });
const put = (id: string, body: object) => svc.request('PUT', `${p}/checkout/process/${id}`, { token: tokens.customer, body });
const clientId = () => `client-${randomUUID()}`;

async function storedProcesses(): Promise<number> {
  const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from checkout_processes`;
  return row?.n ?? 0;
}

/** A checkout info as this platform signs it, with `edit` applied before signing (an old createdAt, another project). */
async function resigned(edit: (info: any) => void): Promise<any> {
  const { checkoutInfo } = await fx.signedInfo();
  edit(checkoutInfo);
  return { checkoutInfo, signature: signCheckoutInfo(checkoutInfo, key) };
}

t.test('creates a checkout process from a signed checkout info: 201, Location and every field', async (t) => {
  const signed = await fx.signedInfo([{ sku: 'WATER', amount: 2 }, { sku: 'BREAD', amount: 1 }]);
  const before = Date.now();
  const res = await create({ signedCheckoutInfo: signed, paymentMethod: 'girocard', paymentInformation: { qrCode: 'Q-1' }, processedOffline: true });
  t.equal(res.status, 201, res.text);
  const { id } = res.body;
  t.match(id, uuidV4, 'the platform generated a UUID v4');
  const self = `${p}/checkout/process/${id}`;
  t.equal(res.headers.get('location'), self);
  t.same(res.body, {
    id,
    supervisorApproval: true,
    paymentApproval: null,
    aborted: false,
    checkoutInfo: signed.checkoutInfo,
    pricing: { lineItems: signed.checkoutInfo.lineItems, price: signed.checkoutInfo.price },
    paymentMethod: 'girocard',
    paymentState: 'pending',
    paymentInformation: { qrCode: 'Q-1', qrCodeContent: `service:${id}` },
    paymentResult: null,
    modified: false,
    createdAt: res.body.createdAt,
    finalizedAt: null,
    processedOffline: true,
    clientID: 'phone',
    appUserID: 'user',
    currency: 'EUR',
    routingTarget: 'none',
    checks: [],
    fulfillments: [],
    links: { self: { href: self }, approval: { href: `${self}/approval` }, payment: { href: `${p}/pos/checkout/id/${id}` } },
  });
  const createdAt = Date.parse(res.body.createdAt);
  t.ok(createdAt >= before - 1000 && createdAt <= Date.now() + 1000, 'createdAt is the time of creation');
  t.match(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, 'RFC 3339');

  const got = await fx.getProcess(id);
  t.equal(got.status, 200);
  t.same(got.body, res.body, 'what is read is what was created');
});

t.test('gives each process its own id and defaults paymentInformation and processedOffline', async (t) => {
  const [a, b] = [await fx.createProcess(), await fx.createProcess()];
  t.equal(a.status, 201);
  t.match(b.body.id, uuidV4);
  t.not(a.body.id, b.body.id);
  t.same(a.body.paymentInformation, { qrCodeContent: `service:${a.body.id}` }, 'the PoS handover code the app shows');
  t.match(a.body, { paymentMethod: 'cash', processedOffline: false });
});

t.test('refuses a checkout info that is not exactly as signed with invalid_signature, and stores nothing', async (t) => {
  const count = await storedProcesses();
  const changes: Record<string, (info: any) => void> = {
    'a changed price': (i) => (i.lineItems[0].price -= 1),
    'a changed amount': (i) => (i.lineItems[0].amount += 1),
    'a changed total': (i) => (i.price.price = 1),
    'a removed line item': (i) => i.lineItems.pop(),
    'an added line item': (i) => i.lineItems.push({ ...i.lineItems[0], id: 'extra' }),
    'an added field': (i) => (i.voucher = 'FREE'),
    'an added payment method': (i) => i.availableMethods.push('sepa'),
  };
  for (const [what, edit] of Object.entries(changes)) {
    const signed = await fx.signedInfo([{ sku: 'WATER', amount: 2 }, { sku: 'BREAD', amount: 1 }]);
    edit(signed.checkoutInfo);
    const res = await create({ signedCheckoutInfo: signed, paymentMethod: 'cash' });
    t.equal(res.status, 400, what);
    t.equal(res.body.type, 'invalid_signature', what);
  }
  const signed = await fx.signedInfo();
  // One letter of the MAC made another (not its last, whose low bits base64url may ignore).
  const at = signed.signature.length - 10;
  const changed = `${signed.signature.slice(0, at)}${signed.signature[at] === 'A' ? 'B' : 'A'}${signed.signature.slice(at + 1)}`;
  for (const signature of ['garbage', changed, (await fx.signedInfo([{ sku: 'BREAD', amount: 1 }])).signature]) {
    const res = await create({ signedCheckoutInfo: { ...signed, signature }, paymentMethod: 'cash' });
    t.equal(res.status, 400, signature);
    t.equal(res.body.type, 'invalid_signature');
  }
  t.equal(await storedProcesses(), count, 'no process was stored');
});

t.test('accepts the checkout info re-serialized with another key order', async (t) => {
  const signed = await fx.signedInfo();
  const reverse = (value: unknown): unknown =>
    Array.isArray(value) ? value.map(reverse) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reverse(v)])) : value;
  const reordered = reverse(signed.checkoutInfo) as Record<string, unknown>;
  t.not(Object.keys(reordered)[0], Object.keys(signed.checkoutInfo)[0], 'the keys really are in another order');
  const res = await create({ signedCheckoutInfo: { checkoutInfo: reordered, signature: signed.signature }, paymentMethod: 'cash' });
  t.equal(res.status, 201, res.text);
  t.same(res.body.checkoutInfo, signed.checkoutInfo);
});

t.test('refuses a payment method the checkout info does not offer, an expired info and another project\'s info', async (t) => {
  const count = await storedProcesses();
  const method = await create({ signedCheckoutInfo: await fx.signedInfo(), paymentMethod: 'sepa' });
  t.equal(method.status, 400);
  t.equal(method.body.type, 'invalid_payment_method');

  const old = await resigned((i) => (i.createdAt = new Date(Date.now() - TtlMs - 60_000).toISOString()));
  const expired = await create({ signedCheckoutInfo: old, paymentMethod: 'cash' });
  t.equal(expired.status, 400);
  t.equal(expired.body.type, 'checkout_info_expired');

  const foreign = await create({ signedCheckoutInfo: await resigned((i) => (i.project = 'acme-other01')), paymentMethod: 'cash' });
  t.equal(foreign.status, 400);
  t.equal(foreign.body.type, 'bad_request');

  const bad = await create({ signedCheckoutInfo: await fx.signedInfo() });
  t.equal(bad.status, 400, 'no payment method');
  t.equal(bad.body.type, 'bad_request');
  t.equal(await storedProcesses(), count, 'no process was stored');
});

t.test('creates a process with the client\'s id idempotently (PUT)', async (t) => {
  const id = clientId();
  const body = { signedCheckoutInfo: await fx.signedInfo(), paymentMethod: 'cash', paymentInformation: { code: '1' } };
  const first = await put(id, body);
  t.equal(first.status, 201);
  t.equal(first.headers.get('location'), `${p}/checkout/process/${id}`);
  t.match(first.body, { id, paymentState: 'pending', paymentInformation: { code: '1' } });

  const again = await put(id, JSON.parse(JSON.stringify(body)));
  t.equal(again.status, 200);
  t.equal(again.headers.get('location'), null);
  t.same(again.body, first.body, 'the same process');
  const reordered = { paymentInformation: body.paymentInformation, paymentMethod: 'cash', signedCheckoutInfo: { signature: body.signedCheckoutInfo.signature, checkoutInfo: Object.fromEntries(Object.entries(body.signedCheckoutInfo.checkoutInfo).reverse()) } };
  t.equal((await put(id, reordered)).status, 200, 'the same request with its keys in another order');

  const count = await storedProcesses();
  const other = await put(id, { ...body, paymentMethod: 'girocard' });
  t.equal(other.status, 409);
  t.equal(other.body.type, 'conflict');
  const otherInfo = await put(id, { ...body, signedCheckoutInfo: await fx.signedInfo() });
  t.equal(otherInfo.status, 409, 'another checkout info');
  t.equal(otherInfo.body.type, 'conflict');
  t.same((await fx.getProcess(id)).body, first.body, 'unchanged');
  t.equal(await storedProcesses(), count);

  await fx.patchProcess(id, { paymentState: 'processing' });
  const moved = await put(id, body);
  t.equal(moved.status, 200);
  t.equal(moved.body.paymentState, 'processing', 'the process as it is now');

  for (const bad of ['short-id', 'a'.repeat(129), 'has.a.dot-0123456789012']) {
    const res = await put(bad, body);
    t.equal(res.status, 400, bad);
    t.equal(res.body.type, 'bad_request');
  }
  t.equal(await storedProcesses(), count, 'nothing stored for a bad id');
});

t.test('answers a repeated PUT with its process also once the checkout info expired', async (t) => {
  const id = clientId();
  // Valid for 3 more seconds (room for a busy machine), then expired.
  const nearlyOld = await resigned((i) => (i.createdAt = new Date(Date.now() - TtlMs + 3000).toISOString()));
  const body = { signedCheckoutInfo: nearlyOld, paymentMethod: 'cash' };
  const first = await put(id, body);
  t.equal(first.status, 201);
  await setTimeout(3200);
  const expired = await create(body);
  t.equal(expired.body.type, 'checkout_info_expired', 'the info is too old for a new process now');
  const again = await put(id, body);
  t.equal(again.status, 200);
  t.same(again.body, first.body);
});

t.test('reads a process with checkoutRead only, within its project', async (t) => {
  const created = (await fx.createProcess()).body;
  t.same((await fx.getProcess(created.id)).body, created);

  const unknown = await fx.getProcess(randomUUID());
  t.equal(unknown.status, 404);
  t.equal(unknown.body.type, 'not_found');

  for (const [what, token] of [
    ['productsRead', tokens.customer],
    ['supervisor', tokens.supervisor],
    ['checkoutRead of another project', await svc.token(['checkoutRead'], { project: 'acme-other01' })],
    ['no token', undefined],
  ] as const) {
    const res = await svc.request('GET', `${p}/checkout/process/${created.id}`, { token });
    t.equal(res.status, 403, what);
    t.equal(res.body.type, 'forbidden', what);
    t.notOk('checkoutInfo' in res.body, `${what}: nothing of the process`);
  }
  const elsewhere = await svc.request('GET', `/acme-other01/checkout/process/${created.id}`, { token: await svc.token(['checkoutRead'], { project: 'acme-other01' }) });
  t.equal(elsewhere.status, 404, 'another project does not hold it');
});

t.test('lists a shop\'s processes for a supervisor, newest first, with a limit', async (t) => {
  const mine: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await create({ signedCheckoutInfo: await fx.signedInfo(undefined, { shopID: 's2' }), paymentMethod: 'cash' });
    mine.push(res.body.id);
    await setTimeout(5); // distinct createdAt
  }
  await fx.createProcess(); // in s1
  const list = (query: string, token = tokens.supervisor) => svc.request('GET', `${p}/checkout/process?${query}`, { token });

  const all = await list('shop=s2');
  t.equal(all.status, 200);
  t.same(all.body.processes.slice(0, 3).map((x: { id: string }) => x.id), [...mine].reverse(), 'newest first');
  t.ok(all.body.processes.every((x: { checkoutInfo: { shopID: string } }) => x.checkoutInfo.shopID === 's2'), 'only that shop');
  t.same(all.body.processes[0], (await fx.getProcess(mine[2]!)).body, 'whole processes');
  const createdAts = all.body.processes.map((x: { createdAt: string }) => x.createdAt);
  t.same(createdAts, [...createdAts].sort().reverse());

  const two = await list('shop=s2&limit=2');
  t.same(two.body.processes.map((x: { id: string }) => x.id), [mine[2], mine[1]]);
  t.same((await list('shop=s9')).body, { processes: [] }, 'a shop without processes');
  t.equal((await list('shop=s2&limit=0')).status, 400);
  t.equal((await list('')).status, 400, 'the shop is required');

  const reader = await list('shop=s2', tokens.reader);
  t.equal(reader.status, 403, 'checkoutRead is not enough');
  t.equal(reader.body.type, 'forbidden');
});

t.test('takes each PATCH shape with its own permission only, changing nothing otherwise', async (t) => {
  const { id, ...created } = (await fx.createProcess()).body;
  const unchanged = async (what: string, body: object, token: string) => {
    const res = await fx.patchProcess(id, body, token);
    t.equal(res.status, 403, what);
    t.equal(res.body.type, 'forbidden', what);
    t.same((await fx.getProcess(id)).body, { id, ...created }, `${what}: the process is unchanged`);
  };
  await unchanged('paymentState with productsRead', { paymentState: 'processing' }, tokens.customer);
  await unchanged('paymentState with updatePricingCheckoutProcess', { paymentState: 'failed' }, tokens.pricing);
  await unchanged('pricing with setPaymentState', { pricing: { lineItems: [], price: { price: 0 } } }, tokens.payment);
  await unchanged('pricing with productsRead', { pricing: { lineItems: [], price: { price: 0 } } }, tokens.customer);
  await unchanged('abort with setPaymentState', { aborted: true }, tokens.payment);
  await unchanged('abort with checkoutRead', { aborted: true }, tokens.reader);
  await unchanged('abort with productsRead of another project', { aborted: true }, await svc.token(['productsRead'], { project: 'acme-other01' }));

  const moved = await fx.patchProcess(id, { paymentState: 'processing' }, tokens.payment);
  t.equal(moved.status, 200);
  t.equal(moved.body.paymentState, 'processing');

  const pricing = { lineItems: [{ sku: 'WATER', amount: 1, totalPrice: 99 }], price: { price: 99 } };
  const priced = await fx.patchProcess(id, { pricing }, tokens.pricing);
  t.equal(priced.status, 200);
  t.same(
    priced.body.pricing,
    { lineItems: [{ id: 'line-1', type: 'default', sku: 'WATER', amount: 1, totalPrice: 99 }], price: { price: 99 } },
    'stored as given, partial line items and price too, with an id and type for each line',
  );
  t.equal(priced.body.modified, true);
  t.same(priced.body.checkoutInfo, created.checkoutInfo, 'the checkout info stays as signed');
  t.same((await fx.getProcess(id)).body, priced.body);

  const aborted = await fx.patchProcess(id, { aborted: true }, tokens.customer);
  t.equal(aborted.status, 200);
  t.match(aborted.body, { aborted: true, paymentState: 'failed', paymentApproval: false, finalizedAt: null });
});

t.test('answers bad_request for any other PATCH body and 404 for an unknown process', async (t) => {
  const created = (await fx.createProcess()).body;
  for (const body of [{}, { foo: 1 }, { aborted: false }, { aborted: true, paymentState: 'failed' }, { paymentState: 'paid' }, { paymentState: 'failed', extra: 1 }, { pricing: { lineItems: [] } }, { pricing: { lineItems: [], price: { price: -1 } } }]) {
    const res = await fx.patchProcess(created.id, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.type, 'bad_request');
  }
  t.same((await fx.getProcess(created.id)).body, created, 'unchanged');
  const unknown = await fx.patchProcess(randomUUID(), { aborted: true });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.type, 'not_found');
  t.equal((await svc.request('GET', `/${TestProject}/orders/${created.id}`, { token: tokens.orders })).status, 404, 'no order for a pending process');
});
