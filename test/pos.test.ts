import t, { type Test } from 'tap';
import { PosCheckoutProcess } from '../subjects/pos.js';
import { createProcessFor, p, patchPos, seedCheckout } from './support/checkout.js';
import type { HttpResponse } from './support/http.js';
import { startTestService } from './support/service.js';

const svc = await startTestService(t);
const fx = await seedCheckout(svc);
const { reader, pricing, payment, customer, supervisor, orders } = fx.tokens;
const noReader = await svc.token(['productsRead', 'updatePricingCheckoutProcess', 'setPaymentState']);

/** 2 × WATER (0.99, 19 %) and 1 × BREAD (2.49, 7 %) in shop s1, for a customer with loyalty card CARD-7. */
const cart = [
  { sku: 'WATER', amount: 2 },
  { sku: 'BREAD', amount: 1 },
];

async function newProcess(items: object[] = cart): Promise<string> {
  const res = await createProcessFor(svc, fx, { items, extra: { customer: { loyaltyCard: 'CARD-7' } } });
  if (res.status !== 201) throw new Error(`checkout process failed: ${res.status} ${res.text}`);
  return res.body.id;
}

const posPath = (id: string) => `${p}/pos/checkout/id/${id}`;
const getPos = (id: string, token = reader) => svc.request('GET', posPath(id), { token });
const putPos = (id: string, body: object, headers: Record<string, string> = {}) => svc.request('PUT', posPath(id), { token: pricing, body, headers });
const patch = (id: string, body: object) => patchPos(svc, pricing, id, body);
const getProcess = (id: string) => svc.request('GET', `${p}/checkout/process/${id}`, { token: reader });
const getOrder = (id: string) => svc.request('GET', `${p}/orders/${id}`, { token: orders });

/** The PoS view and the stored version: what a refused request must leave as it was. */
async function snapshot(id: string) {
  const [row] = await svc.sql<{ version: number }[]>`select version from checkout_processes where id = ${id}`;
  return { view: (await getPos(id)).body, version: row?.version };
}

function refused(t: Test, res: HttpResponse, status: number, type: string, what?: string) {
  t.equal(res.status, status, `${what ?? type}: ${res.text}`);
  t.equal(res.body?.type, type, what ?? type);
}

/** The PoS view of a new process of `cart`: the checkout info's figures. */
const initialView = {
  lineItems: [
    { sku: 'WATER', scannedCode: '', amount: 2, weight: 0, units: 0, price: 99, totalPrice: 198, taxRate: '19' },
    { sku: 'BREAD', scannedCode: '', amount: 1, weight: 0, units: 0, price: 249, totalPrice: 249, taxRate: '7' },
  ],
  taxShares: [
    { rate: '7', net: 233, share: 16, total: 249 }, // 249 × 7/107 = 16.29
    { rate: '19', net: 166, share: 32, total: 198 }, // 198 × 19/119 = 31.61
  ],
  netPrice: 399,
  totalPrice: 447,
  state: 'pending',
  loyaltyCard: 'CARD-7',
  processedBy: '',
  failedReason: '',
};

/**
 * What the PoS sends at the end: the customer put one water back, took a second bread and a
 * carrier bag, and showed another loyalty card. 99 + 498 + 10 = 607.
 */
const finalFigures = {
  state: 'successful',
  lineItems: [
    { sku: 'WATER', scannedCode: '', amount: 1, weight: 0, units: 0, price: 99, totalPrice: 99, taxRate: '19' },
    { sku: 'BREAD', scannedCode: '', amount: 2, weight: 0, units: 0, price: 249, totalPrice: 498, taxRate: '7' },
    { sku: 'BAG', scannedCode: '2000000000015', amount: 1, weight: 0, units: 0, price: 10, totalPrice: 10, taxRate: '19' },
  ],
  taxShares: [
    { rate: '7', net: 465, share: 33, total: 498 }, // 498 × 7/107 = 32.58
    { rate: '19', net: 92, share: 17, total: 109 }, // 109 × 19/119 = 17.40
  ],
  netPrice: 557, // 465 + 92
  totalPrice: 607, // 498 + 109
  loyaltyCard: 'CARD-8',
};

t.test('shows a new process to the PoS: its line items, tax shares, totals, pending state and the cart\'s loyalty card', async (t) => {
  const id = await newProcess();
  const res = await getPos(id);
  t.equal(res.status, 200);
  t.same(res.body, initialView);
  t.equal((await getProcess(id)).body.links.payment.href, posPath(id), 'the process links to its PoS view');
});

t.test('shows the PoS view only with checkoutRead, and answers 404 for an unknown process', async (t) => {
  const id = await newProcess();
  refused(t, await getPos(id, noReader), 403, 'forbidden', 'without checkoutRead');
  refused(t, await svc.request('GET', posPath(id)), 403, 'forbidden', 'without a token');
  refused(t, await getPos('00000000-0000-4000-8000-000000000000'), 404, 'not_found');
});

t.test('takes a checkout through processing to successful: the process pricing and the order come from the PoS figures', async (t) => {
  const id = await newProcess();
  const processing = await patch(id, { state: 'processing', processedBy: 'kasse-3' });
  t.equal(processing.status, 200, processing.text);
  t.same(processing.body, { ...initialView, state: 'processing', processedBy: 'kasse-3' }, 'the response is the whole updated process');
  t.equal(processing.headers.get('content-type'), 'application/json; charset=utf-8');
  const contract = PosCheckoutProcess.safeParse(processing.body);
  t.ok(contract.success, contract.error?.message ?? 'the PoS view the worker wrote (the edge passes it on unparsed) follows its schema');
  t.same((await getPos(id)).body, processing.body);
  t.equal((await getProcess(id)).body.paymentState, 'processing', 'the payment state moved with it');

  const done = await patch(id, finalFigures);
  t.equal(done.status, 200, done.text);
  t.same(done.body, { ...finalFigures, processedBy: 'kasse-3', failedReason: '' });
  t.same((await getPos(id)).body, done.body);

  const process = (await getProcess(id)).body;
  t.match(process, { paymentState: 'successful', paymentApproval: true, aborted: false });
  t.ok(process.finalizedAt, 'finalized');
  t.same(
    process.pricing.price,
    { price: 607, netPrice: 557, tax: { '7': 33, '19': 17 }, taxNet: { '7': 465, '19': 92 }, taxPre: { '7': 498, '19': 109 } },
    'the price rebuilt from the PoS figures',
  );
  const figures = (l: any) => ({ sku: l.sku, scannedCode: l.scannedCode, amount: l.amount, weight: l.weight, units: l.units, price: l.price, totalPrice: l.totalPrice, taxRate: l.taxRate });
  t.same(process.pricing.lineItems.map(figures), finalFigures.lineItems, 'the line items are the PoS\'s');
  t.match(process.pricing.lineItems, [{ id: '1', name: 'Wasser' }, { id: '2', name: 'Brot' }, {}], 'lines of the cart keep what the PoS does not send');
  t.equal(process.checkoutInfo.price.price, 447, 'the signed checkout info is kept as it was');

  const order = await getOrder(id);
  t.equal(order.status, 200, order.text);
  t.match(order.body, {
    id,
    state: 'final',
    paymentState: 'successful',
    paidAmount: 607,
    price: process.pricing.price,
    customer: { loyaltyCard: 'CARD-8' },
    checkoutDeviceID: 'kasse-3',
    checkoutDevice: { externalID: 'kasse-3' },
    finalizedAt: process.finalizedAt,
    shopID: 's1',
  });
  t.same(order.body.lineItems.map(figures), finalFigures.lineItems);
});

t.test('ends a checkout the PoS could not perform as failed, with its reason, and the order as paymentFailed', async (t) => {
  const id = await newProcess();
  t.equal((await patch(id, { state: 'processing', processedBy: 'kasse-1' })).status, 200);
  const failed = await patch(id, { state: 'failed', failedReason: 'card declined' });
  t.equal(failed.status, 200, failed.text);
  t.same(failed.body, { ...initialView, state: 'failed', processedBy: 'kasse-1', failedReason: 'card declined' });
  t.match((await getProcess(id)).body, { paymentState: 'failed', paymentApproval: false, aborted: false, finalizedAt: null });
  const order = await getOrder(id);
  t.equal(order.status, 200);
  t.match(order.body, { id, state: 'paymentFailed', paymentState: 'failed', checkoutDeviceID: 'kasse-1' });

  const early = await newProcess();
  const fromPending = await patch(early, { state: 'failed', failedReason: 'customer left' });
  t.equal(fromPending.status, 200, 'a pending checkout can fail too');
  t.match(fromPending.body, { state: 'failed', failedReason: 'customer left' });
  t.equal((await getProcess(early)).body.paymentState, 'failed');
  t.equal((await getOrder(early)).body.state, 'paymentFailed');
});

t.test('moves with a PUT of application/json as with a PATCH: the fields it carries replace the stored ones', async (t) => {
  const id = await newProcess();
  const whole = { ...(await getPos(id)).body, state: 'processing', processedBy: 'kasse-9' };
  const processing = await putPos(id, whole);
  t.equal(processing.status, 200, processing.text);
  t.same(processing.body, { ...initialView, state: 'processing', processedBy: 'kasse-9' });
  t.equal((await getProcess(id)).body.paymentState, 'processing');

  const done = await putPos(id, finalFigures);
  t.equal(done.status, 200, done.text);
  t.same(done.body, { ...finalFigures, processedBy: 'kasse-9', failedReason: '' });
  t.equal((await getOrder(id)).body.paidAmount, 607);

  const other = await newProcess();
  const before = await snapshot(other);
  refused(t, await putPos(other, { processedBy: 'kasse-9' }), 400, 'bad_request', 'a PUT without state');
  t.same(await snapshot(other), before, 'nothing changed');
});

t.test('applies a PATCH as an RFC 7386 merge patch: null removes a member, an array replaces the whole array', async (t) => {
  const id = await newProcess();
  await patch(id, { state: 'processing', processedBy: 'kasse-2' });
  const res = await patch(id, {
    state: 'successful',
    taxShares: null,
    lineItems: [{ sku: 'WATER', amount: 3, price: 99, totalPrice: 297, taxRate: '19' }],
    netPrice: 250, // 297 / 1.19 = 249.58
    totalPrice: 297,
  });
  t.equal(res.status, 200, res.text);
  t.same(res.body, {
    lineItems: [{ sku: 'WATER', scannedCode: '', amount: 3, weight: 0, units: 0, price: 99, totalPrice: 297, taxRate: '19' }],
    taxShares: null,
    netPrice: 250,
    totalPrice: 297,
    state: 'successful',
    loyaltyCard: 'CARD-7',
    processedBy: 'kasse-2',
    failedReason: '',
  }, 'one line item, not the patch merged into the first of two; members the patch leaves out are kept');
  t.same((await getProcess(id)).body.pricing.price, { price: 297, netPrice: 250 }, 'no tax maps without tax shares');
  t.match((await getOrder(id)).body, { paidAmount: 297, price: { price: 297, netPrice: 250 }, customer: { loyaltyCard: 'CARD-7' } });
});

t.test('removes the cart\'s loyalty card when the successful move sets it to null', async (t) => {
  const id = await newProcess();
  await patch(id, { state: 'processing' });
  const res = await patch(id, { state: 'successful', loyaltyCard: null });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.loyaltyCard, '', 'the PoS view has no loyalty card');
  const order = await getOrder(id);
  t.equal(order.status, 200);
  t.same(order.body.customer, {}, 'the order has no loyalty card either');
});

t.test('refuses a PATCH that is not a merge patch, and a PUT that is one, with 415 unsupported_media_type', async (t) => {
  const id = await newProcess();
  const before = await snapshot(id);
  const asJson = await svc.request('PATCH', posPath(id), { token: pricing, body: { state: 'processing' } });
  refused(t, asJson, 415, 'unsupported_media_type', 'PATCH with application/json');
  const asPatch = await putPos(id, { state: 'processing' }, { 'content-type': 'application/merge-patch+json' });
  refused(t, asPatch, 415, 'unsupported_media_type', 'PUT with application/merge-patch+json');
  t.same(await snapshot(id), before, 'still pending, nothing written');
});

t.test('refuses moves the state table does not allow with 409 invalid_state_transition and leaves the state as it was', async (t) => {
  const id = await newProcess();
  let before = await snapshot(id);
  refused(t, await patch(id, { state: 'transferred' }), 400, 'bad_request', 'a PoS does not transfer');
  t.same(await snapshot(id), before, 'still pending');
  t.equal((await getOrder(id)).status, 404, 'no order');

  await patch(id, { state: 'processing', processedBy: 'kasse-1' });
  t.equal((await patch(id, finalFigures)).status, 200);
  before = await snapshot(id);
  for (const state of ['pending', 'processing', 'failed']) {
    refused(t, await patch(id, { state }), 409, 'invalid_state_transition', `successful → ${state}`);
  }
  refused(t, await putPos(id, { ...finalFigures, state: 'failed' }), 409, 'invalid_state_transition', 'successful → failed by PUT');
  t.same(await snapshot(id), before, 'still successful, with its figures');
  t.equal((await getProcess(id)).body.paymentState, 'successful');

  const failed = await newProcess();
  await patch(failed, { state: 'failed' });
  before = await snapshot(failed);
  for (const state of ['pending', 'processing', 'successful']) {
    refused(t, await patch(failed, { state }), 409, 'invalid_state_transition', `failed → ${state}`);
  }
  t.same(await snapshot(failed), before, 'still failed');
});

t.test('refuses new figures or a new reason once the checkout ended, with 409 invalid_state_transition', async (t) => {
  const id = await newProcess();
  await patch(id, { state: 'processing', processedBy: 'kasse-1' });
  t.equal((await patch(id, finalFigures)).status, 200);
  let before = await snapshot(id);
  const [water] = finalFigures.lineItems;
  const newFigures = { state: 'successful', lineItems: [{ ...water, amount: 2, totalPrice: 198 }], taxShares: null, netPrice: 166, totalPrice: 198 };
  refused(t, await patch(id, newFigures), 409, 'invalid_state_transition', 'other final figures after successful');
  refused(t, await patch(id, { loyaltyCard: 'CARD-9' }), 409, 'invalid_state_transition', 'another loyalty card after successful');
  t.same(await snapshot(id), before, 'the figures of the successful move stand');
  t.equal((await getOrder(id)).body.paidAmount, 607);

  const failed = await newProcess();
  await patch(failed, { state: 'failed', failedReason: 'card declined' });
  before = await snapshot(failed);
  refused(t, await patch(failed, { failedReason: 'something else' }), 409, 'invalid_state_transition', 'another reason after failed');
  t.same(await snapshot(failed), before);
});

t.test('refuses a move that changes a field the move may not change with 400 bad_request', async (t) => {
  const id = await newProcess();
  let before = await snapshot(id);
  const water = initialView.lineItems[0]!;
  const cases: Array<[string, object]> = [
    ['processing with totalPrice', { state: 'processing', totalPrice: 1 }],
    ['processing with lineItems', { state: 'processing', lineItems: [water] }],
    ['processing with loyaltyCard', { state: 'processing', processedBy: 'kasse-1', loyaltyCard: 'CARD-9' }],
    ['processing with failedReason', { state: 'processing', failedReason: 'x' }],
    ['failed with lineItems', { state: 'failed', lineItems: [water] }],
    ['failed with processedBy', { state: 'failed', processedBy: 'kasse-1' }],
    ['failed with taxShares', { state: 'failed', taxShares: null }],
    ['pending with loyaltyCard', { loyaltyCard: 'CARD-9' }],
  ];
  for (const [what, body] of cases) refused(t, await patch(id, body), 400, 'bad_request', what);
  t.same(await snapshot(id), before, 'still pending, nothing written');

  await patch(id, { state: 'processing', processedBy: 'kasse-1' });
  before = await snapshot(id);
  refused(t, await patch(id, { ...finalFigures, processedBy: 'kasse-2' }), 400, 'bad_request', 'successful with processedBy');
  refused(t, await patch(id, { ...finalFigures, failedReason: 'none' }), 400, 'bad_request', 'successful with failedReason');
  refused(t, await patch(id, { state: 'failed', failedReason: 'x', totalPrice: 0 }), 400, 'bad_request', 'failed with totalPrice');
  refused(t, await patch(id, { state: 'processing', netPrice: 1 }), 400, 'bad_request', 'processing again with netPrice');
  t.same(await snapshot(id), before, 'still processing by kasse-1, nothing written');
});

t.test('refuses final figures that do not add up with 400 bad_request, and takes them once they do', async (t) => {
  const id = await newProcess();
  await patch(id, { state: 'processing', processedBy: 'kasse-1' });
  const before = await snapshot(id);
  const [water, bread, bag] = finalFigures.lineItems;
  const [reduced, normal] = finalFigures.taxShares;
  const cases: Array<[string, object]> = [
    ['the line items total 606, not totalPrice 607', { lineItems: [water, bread, { ...bag, totalPrice: 9 }] }],
    ['netPrice above totalPrice', { taxShares: null, netPrice: 608 }],
    ['net + share is not total for a rate', { taxShares: [reduced, { ...normal, share: 18 }] }],
    ['the tax shares total 606, not totalPrice 607', { taxShares: [reduced, { ...normal, net: 91, total: 108 }] }],
    ['the nets sum to 557, not netPrice 556', { netPrice: 556 }],
  ];
  for (const [what, change] of cases) refused(t, await patch(id, { ...finalFigures, ...change }), 400, 'bad_request', what);
  t.same(await snapshot(id), before, 'still processing, nothing written');
  t.equal((await getOrder(id)).status, 404, 'no order');

  const done = await patch(id, { ...finalFigures, taxShares: null, netPrice: 607 });
  t.equal(done.status, 200, 'without tax shares, netPrice may equal totalPrice');
});

t.test('lets one PoS hold a checkout: repeating processing changes nothing, another processedBy is refused with 409', async (t) => {
  const id = await newProcess();
  const first = await patch(id, { state: 'processing', processedBy: 'kasse-1' });
  t.equal(first.status, 200);
  const held = await snapshot(id);

  const again = await patch(id, { state: 'processing', processedBy: 'kasse-1' });
  t.equal(again.status, 200);
  t.same(again.body, first.body, 'answered as it stands');
  t.same(await snapshot(id), held, 'nothing written');

  const other = await patch(id, { state: 'processing', processedBy: 'kasse-2' });
  refused(t, other, 409, 'invalid_state_transition', 'another PoS');
  t.same(await snapshot(id), held, 'still held by kasse-1');
});

t.test('needs updatePricingCheckoutProcess to move a checkout as its PoS', async (t) => {
  const id = await newProcess();
  const before = await snapshot(id);
  refused(t, await patchPos(svc, reader, id, { state: 'processing' }), 403, 'forbidden', 'PATCH with checkoutRead');
  refused(t, await patchPos(svc, payment, id, { state: 'processing' }), 403, 'forbidden', 'PATCH with setPaymentState');
  refused(t, await svc.request('PUT', posPath(id), { token: reader, body: { state: 'processing' } }), 403, 'forbidden', 'PUT with checkoutRead');
  t.same(await snapshot(id), before, 'nothing changed');
  refused(t, await patch('00000000-0000-4000-8000-000000000000', { state: 'processing' }), 404, 'not_found');
});

t.test('shows the payment state as the PoS state: a payment system\'s processing, and an abort as failed', async (t) => {
  const id = await newProcess();
  const moved = await svc.request('PATCH', `${p}/checkout/process/${id}`, { token: payment, body: { paymentState: 'processing' } });
  t.equal(moved.status, 200);
  t.same((await getPos(id)).body, { ...initialView, state: 'processing' });
  const claimed = await patch(id, { state: 'processing', processedBy: 'kasse-4' });
  t.equal(claimed.status, 200, 'a PoS may still name itself');
  t.equal(claimed.body.processedBy, 'kasse-4');

  const aborted = await newProcess();
  t.equal((await svc.request('PATCH', `${p}/checkout/process/${aborted}`, { token: customer, body: { aborted: true } })).status, 200);
  const view = (await getPos(aborted)).body;
  t.equal(view.state, 'failed');
  t.ok(view.failedReason.length > 0, `a failed reason (${view.failedReason})`);
  const before = await snapshot(aborted);
  refused(t, await patch(aborted, { state: 'processing' }), 409, 'invalid_state_transition', 'a PoS cannot take an aborted checkout');
  t.same(await snapshot(aborted), before);
});

t.test('is the supervision of an age-restricted cart: the PoS that takes it over checks the age, and completes it', async (t) => {
  const wine = { sku: 'WINE', scannedCode: '', amount: 1, weight: 0, units: 0, price: 599, totalPrice: 599, taxRate: '19' };
  const final = { state: 'successful', lineItems: [wine], taxShares: [{ rate: '19', net: 503, share: 96, total: 599 }], netPrice: 503, totalPrice: 599 }; // 599 × 19/119 = 95.64

  const id = await newProcess([{ sku: 'WINE', amount: 1 }]);
  const created = (await getProcess(id)).body;
  t.match(created, { supervisorApproval: null, routingTarget: 'supervisor', checks: [{ type: 'min_age', requiredAge: 18, state: 'pending' }] }, 'waits for a supervisor');
  t.equal((await patch(id, { state: 'processing', processedBy: 'kasse-1' })).status, 200);
  t.match(
    (await getProcess(id)).body,
    { supervisorApproval: true, routingTarget: 'none', checks: [{ type: 'min_age', state: 'successful', performedBy: 'kasse-1' }] },
    'taking it over approved it, performed by the PoS',
  );
  const done = await patch(id, final);
  t.equal(done.status, 200, done.text);
  t.equal(done.body.state, 'successful');
  t.match((await getOrder(id)).body, { state: 'final', paidAmount: 599 });

  const atOnce = await newProcess([{ sku: 'WINE', amount: 1 }]);
  const paid = await patch(atOnce, final);
  t.equal(paid.status, 200, `cash at the PoS: pending → successful at once (${paid.text})`);
  t.match((await getProcess(atOnce)).body, { paymentState: 'successful', supervisorApproval: true, checks: [{ state: 'successful', performedBy: 'supervisor' }] }, 'a PoS naming nobody (no processedBy, no sub)');
  t.match((await getOrder(atOnce)).body, { state: 'final', paidAmount: 599 });

  const inApp = await newProcess([{ sku: 'WINE', amount: 1 }]);
  const early = await svc.request('PATCH', `${p}/checkout/process/${inApp}`, { token: payment, body: { paymentState: 'successful' } });
  refused(t, early, 409, 'invalid_state_transition', 'a payment through the app still waits for the supervisor');
  t.equal((await getProcess(inApp)).body.paymentState, 'pending');
  const approval = await svc.request('POST', `${p}/checkout/process/${inApp}/approval`, { token: supervisor, body: { type: 'supervisor' } });
  t.equal(approval.status, 201);
  t.equal((await svc.request('PATCH', `${p}/checkout/process/${inApp}`, { token: payment, body: { paymentState: 'successful' } })).status, 200, 'after the approval');
});
