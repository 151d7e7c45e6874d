import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import { p, seedCheckout, type ProcessStage } from './support/checkout.js';
import { startTestService } from './support/service.js';

const svc = await startTestService(t);
const fx = await seedCheckout(svc);
const { tokens } = fx;

const PaymentStates = ['pending', 'processing', 'transferred', 'successful', 'failed'] as const;
type PaymentState = (typeof PaymentStates)[number];
/** The payment machine as the rules state it (issue5-rules.md), written here independently of the implementation. */
const Allowed: Record<PaymentState, readonly PaymentState[]> = {
  pending: ['processing', 'successful', 'failed', 'transferred'],
  processing: ['successful', 'failed', 'transferred'],
  successful: [],
  failed: [],
  transferred: [],
};
const terminal = (s: PaymentState) => Allowed[s].length === 0;

const approve = (id: string, token = tokens.supervisor, body: object = { type: 'supervisor' }) =>
  svc.request('POST', `${p}/checkout/process/${id}/approval`, { token, body });
const order = (id: string) => svc.request('GET', `${p}/orders/${id}`, { token: tokens.orders });
const somePricing = { lineItems: [{ sku: 'WATER', amount: 1, price: 99, totalPrice: 99, taxRate: '19' }], price: { price: 99 } };

/** What a process shows once it finished as `state`: its order, and the receipt of a paid one. */
function finishedAs(before: any, state: PaymentState | 'aborted'): object {
  if (state === 'pending' || state === 'processing' || state === 'transferred') return {};
  const receipt = state === 'successful' ? { receipt: { href: `${p}/orders/${before.id}/receipt` } } : {};
  return { orderID: before.id, links: { ...before.links, ...receipt } };
}

t.test('moves the payment state along every allowed move, storing the paymentResult with it', async (t) => {
  for (const from of ['pending', 'processing'] as const) {
    for (const to of Allowed[from]) {
      const before = await fx.processIn(from);
      const paymentResult = { transactionId: `tx-${from}-${to}`, pan: '****1234' };
      const started = Date.now();
      const res = await fx.patchProcess(before.id, { paymentState: to, paymentResult }, tokens.payment);
      const move = `${from} → ${to}`;
      t.equal(res.status, 200, move);
      t.same(
        res.body,
        {
          ...before,
          paymentState: to,
          paymentResult,
          paymentApproval: { successful: true, failed: false }[to as string] ?? null,
          finalizedAt: to === 'successful' ? res.body.finalizedAt : null,
          ...finishedAs(before, to),
        },
        `${move}: the state, the result and the approval, nothing else`,
      );
      if (to === 'successful') t.ok(Date.parse(res.body.finalizedAt) >= started - 1000 && Date.parse(res.body.finalizedAt) <= Date.now() + 1000, `${move}: finalizedAt is now`);
      t.same((await fx.getProcess(before.id)).body, res.body, `${move}: stored`);
    }
  }
});

t.test('keeps the paymentResult of an earlier move when a later one brings none', async (t) => {
  const { id } = await fx.processIn('pending');
  await fx.patchProcess(id, { paymentState: 'processing', paymentResult: { transactionId: 'tx-1' } });
  const res = await fx.patchProcess(id, { paymentState: 'successful' });
  t.equal(res.status, 200);
  t.same(res.body.paymentResult, { transactionId: 'tx-1' });
});

t.test('aborts a pending or processing process: aborted, failed, paymentApproval false', async (t) => {
  for (const from of ['pending', 'processing'] as const) {
    const before = await fx.processIn(from);
    const res = await fx.patchProcess(before.id, { aborted: true }, tokens.customer);
    t.equal(res.status, 200, from);
    t.same(res.body, { ...before, aborted: true, paymentState: 'failed', paymentApproval: false, ...finishedAs(before, 'aborted') }, `from ${from}`);
    t.same((await fx.getProcess(before.id)).body, res.body);
  }
});

t.test('answers 200 and changes nothing for the state a process is already in, also a finished one (a retry)', async (t) => {
  for (const state of ['pending', 'processing', 'successful', 'failed', 'transferred'] as const) {
    const before = await fx.processIn(state);
    const res = await fx.patchProcess(before.id, { paymentState: state }, tokens.payment);
    t.equal(res.status, 200, state);
    t.same(res.body, before, `${state}: the process as it was`);
    t.same((await fx.getProcess(before.id)).body, before, `${state}: nothing stored`);
  }
  const aborted = await fx.processIn('aborted');
  t.equal((await fx.patchProcess(aborted.id, { aborted: true })).status, 200, 'a second abort');
  t.same((await fx.getProcess(aborted.id)).body, aborted, 'aborted: nothing stored');
});

t.test('keeps new payment details sent with the state an open process is in', async (t) => {
  for (const state of ['pending', 'processing'] as const) {
    const before = await fx.processIn(state);
    const res = await fx.patchProcess(before.id, { paymentState: state, paymentResult: { transactionId: 'tx-2' } }, tokens.payment);
    t.equal(res.status, 200, state);
    t.same(res.body, { ...before, paymentResult: { transactionId: 'tx-2' } }, `${state}: the result stored, nothing else changed`);
  }
});

t.test('refuses every other move with 409 invalid_state_transition and leaves the process as it was', async (t) => {
  const everything = [...PaymentStates.map((s) => ({ paymentState: s, paymentResult: { transactionId: 'refused' } })), { aborted: true }, { pricing: somePricing }];
  const refusals: Record<ProcessStage, object[]> = {
    pending: [],
    processing: [{ paymentState: 'pending' }],
    successful: everything,
    failed: everything,
    transferred: everything,
    aborted: everything.filter((body) => !('aborted' in body)),
  };
  for (const [stage, bodies] of Object.entries(refusals) as Array<[ProcessStage, object[]]>) {
    const before = await fx.processIn(stage);
    for (const body of bodies) {
      const res = await fx.patchProcess(before.id, body);
      const what = `${stage}: ${JSON.stringify(body)}`;
      t.equal(res.status, 409, what);
      t.equal(res.body.type, 'invalid_state_transition', what);
      t.same((await fx.getProcess(before.id)).body, before, `${what}: unchanged`);
    }
  }
});

t.test('holds an age-restricted or controlled process until a supervisor approves it', async (t) => {
  for (const items of [[{ sku: 'WINE', amount: 1 }], [{ sku: 'RAZOR', amount: 1 }], [{ sku: 'WATER', amount: 1 }, { sku: 'WINE', amount: 2 }]]) {
    const what = items.map((i) => i.sku).join('+');
    const before = await fx.processIn('processing', { items });
    t.equal(before.supervisorApproval, null, `${what}: approval pending at creation`);

    const early = await fx.patchProcess(before.id, { paymentState: 'successful' });
    t.equal(early.status, 409, `${what}: no success before the approval`);
    t.equal(early.body.type, 'invalid_state_transition');
    t.same((await fx.getProcess(before.id)).body, before, `${what}: unchanged`);
    t.equal((await order(before.id)).status, 404, `${what}: no order`);

    for (const token of [tokens.customer, tokens.reader, tokens.payment]) {
      const res = await approve(before.id, token);
      t.equal(res.status, 403, `${what}: approval needs supervisor`);
      t.equal(res.body.type, 'forbidden');
    }
    t.equal((await fx.getProcess(before.id)).body.supervisorApproval, null, `${what}: still pending`);

    const approved = await approve(before.id);
    t.equal(approved.status, 201, what);
    t.same(approved.body, { type: 'supervisor' });
    const check = before.checks[0];
    t.same(
      (await fx.getProcess(before.id)).body,
      { ...before, supervisorApproval: true, routingTarget: 'none', checks: [{ ...check, state: 'successful', performedBy: 'supervisor' }] },
      `${what}: approved (its check performed by the supervisor), nothing else changed`,
    );
    t.equal((await approve(before.id)).status, 201, `${what}: a repeated approval`);

    const paid = await fx.patchProcess(before.id, { paymentState: 'successful' });
    t.equal(paid.status, 200, `${what}: success after the approval`);
    t.match(paid.body, { paymentState: 'successful', supervisorApproval: true, paymentApproval: true });
  }
});

t.test('gives a process without restricted items the supervisor approval from creation', async (t) => {
  const plain = await fx.processIn('pending', { items: [{ sku: 'WATER', amount: 1 }, { sku: 'BREAD', amount: 2 }] });
  t.equal(plain.supervisorApproval, true);
  const res = await approve(plain.id);
  t.equal(res.status, 201, 'approving it anyway is harmless');
  t.same((await fx.getProcess(plain.id)).body, plain);
});

t.test('refuses an approval of a finished process, a bad approval body and an unknown process', async (t) => {
  for (const stage of ['successful', 'failed', 'transferred', 'aborted'] as const) {
    const before = await fx.processIn(stage, stage === 'successful' ? {} : { items: [{ sku: 'WINE', amount: 1 }] });
    const res = await approve(before.id);
    t.equal(res.status, 409, stage);
    t.equal(res.body.type, 'invalid_state_transition', stage);
    t.same((await fx.getProcess(before.id)).body, before, `${stage}: unchanged`);
  }
  const wine = await fx.processIn('pending', { items: [{ sku: 'WINE', amount: 1 }] });
  for (const body of [{}, { type: 'cashier' }, { type: 'supervisor', extra: true }]) {
    const res = await approve(wine.id, tokens.supervisor, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal(res.body.type, 'bad_request');
  }
  t.equal((await fx.getProcess(wine.id)).body.supervisorApproval, null, 'still pending');
  const unknown = await approve(randomUUID());
  t.equal(unknown.status, 404);
  t.equal(unknown.body.type, 'not_found');
});

t.test('makes a finished process an order: final when paid, userAborted when aborted, paymentFailed when failed', async (t) => {
  const paid = await fx.processIn('successful', { items: [{ sku: 'WATER', amount: 3 }], paymentMethod: 'girocard' });
  const final = await order(paid.id);
  t.equal(final.status, 200);
  t.match(final.body, {
    id: paid.id,
    state: 'final',
    paymentState: 'successful',
    paymentMethod: 'girocard',
    paidAmount: paid.pricing.price.price,
    price: paid.pricing.price,
    shopID: 's1',
    clientID: 'phone',
    appUserID: 'user',
    finalizedAt: paid.finalizedAt,
    links: { self: { href: `${p}/orders/${paid.id}` } },
  });
  t.equal(final.body.lineItems.length, paid.pricing.lineItems.length);

  const aborted = await fx.processIn('aborted');
  t.match((await order(aborted.id)).body, { id: aborted.id, state: 'userAborted', paidAmount: 0 });
  const failed = await fx.processIn('failed');
  t.match((await order(failed.id)).body, { id: failed.id, state: 'paymentFailed', paidAmount: 0 });

  const transferred = await fx.processIn('transferred');
  const none = await order(transferred.id);
  t.equal(none.status, 404, 'a transferred process has no outcome to record');
  t.equal(none.body.type, 'not_found');

  const repriced = await fx.processIn('processing');
  t.equal((await fx.patchProcess(repriced.id, { pricing: somePricing })).status, 200);
  t.equal((await fx.patchProcess(repriced.id, { paymentState: 'successful' })).status, 200);
  t.match((await order(repriced.id)).body, { state: 'final', paidAmount: 99, price: { price: 99 } }, 'the updated pricing is what was paid');
});

t.test('follows the payment machine for any sequence of requests (property)', async (t) => {
  type Request = { kind: 'state'; to: PaymentState } | { kind: 'abort' } | { kind: 'pricing' } | { kind: 'approve' };
  const request: fc.Arbitrary<Request> = fc.oneof(
    fc.constantFrom(...PaymentStates).map((to): Request => ({ kind: 'state', to })),
    fc.constant<Request>({ kind: 'abort' }),
    fc.constant<Request>({ kind: 'pricing' }),
    fc.constant<Request>({ kind: 'approve' }),
  );
  let cases = 0;
  await fc.assert(
    fc.asyncProperty(fc.boolean(), fc.array(request, { maxLength: 6 }), async (restricted, requests) => {
      const created = await fx.processIn('pending', { items: [{ sku: restricted ? 'WINE' : 'WATER', amount: 1 }] });
      const model = { state: 'pending' as PaymentState, aborted: false, approval: restricted ? null : true, modified: false };
      for (const r of requests) {
        const finished = terminal(model.state);
        let expected: number;
        let res;
        if (r.kind === 'approve') {
          res = await approve(created.id);
          expected = finished ? 409 : 201;
          if (!finished) model.approval = true;
        } else if (r.kind === 'abort') {
          res = await fx.patchProcess(created.id, { aborted: true });
          expected = finished && !model.aborted ? 409 : 200;
          if (!finished) Object.assign(model, { state: 'failed', aborted: true });
        } else if (r.kind === 'pricing') {
          res = await fx.patchProcess(created.id, { pricing: somePricing });
          expected = finished ? 409 : 200;
          if (!finished) model.modified = true;
        } else {
          res = await fx.patchProcess(created.id, { paymentState: r.to });
          const allowed = r.to === model.state || (!finished && Allowed[model.state].includes(r.to) && (r.to !== 'successful' || model.approval === true));
          expected = allowed ? 200 : 409;
          if (allowed) model.state = r.to;
        }
        if (res.status !== expected) throw new Error(`${JSON.stringify(r)} answered ${res.status}, expected ${expected}`);
        if (expected === 409 && res.body.type !== 'invalid_state_transition') throw new Error(`${JSON.stringify(r)} answered type ${res.body.type}`);
      }
      const now = (await fx.getProcess(created.id)).body;
      const want = {
        paymentState: model.state,
        aborted: model.aborted,
        supervisorApproval: model.approval,
        modified: model.modified,
        paymentApproval: { successful: true, failed: false }[model.state as string] ?? null,
      };
      const got = { paymentState: now.paymentState, aborted: now.aborted, supervisorApproval: now.supervisorApproval, modified: now.modified, paymentApproval: now.paymentApproval };
      if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`after ${JSON.stringify(requests)}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
      if ((now.finalizedAt !== null) !== (model.state === 'successful')) throw new Error(`finalizedAt ${now.finalizedAt} in ${model.state}`);
      const routing = restricted && model.approval === null && !terminal(model.state) ? 'supervisor' : 'none';
      if (now.routingTarget !== routing) throw new Error(`routingTarget ${now.routingTarget} in ${JSON.stringify(model)}`);
      const checks = restricted ? [model.approval ? 'successful' : 'pending'] : [];
      if (JSON.stringify(now.checks.map((c: any) => c.state)) !== JSON.stringify(checks)) throw new Error(`checks ${JSON.stringify(now.checks)} in ${JSON.stringify(model)}`);
      const hasOrder = model.state === 'successful' || model.state === 'failed';
      if ((now.orderID === created.id) !== hasOrder) throw new Error(`orderID ${now.orderID} in ${model.state}`);
      if (Boolean(now.links.receipt) !== (model.state === 'successful')) throw new Error(`links.receipt in ${model.state}`);
      cases++;
    }),
    { numRuns: 60 },
  );
  t.equal(cases, 60, 'every sequence ended as the model says');
});
