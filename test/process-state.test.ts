import fc from 'fast-check';
import t from 'tap';
import { decidePosUpdate, posView, pricingFromPos } from '../actors/checkout-process/pos.js';
import { decide, finishedOrderState, isFinished, movePayment, PaymentMoves, type Command, type ProcessRecord } from '../actors/checkout-process/state.js';
import { mergePatch } from '../subjects/formats/json.js';
import type { CheckoutInfo } from '../subjects/checkout.js';
import { PaymentStates, type PaymentState } from '../subjects/checkout-process.js';

/**
 * The checkout process's rules without I/O: the payment state machine move by move, random command
 * sequences that must keep its invariants, the PoS moves, and RFC 7386 merge patches.
 */
const info: CheckoutInfo = {
  session: 's',
  clientID: 'c',
  appUserID: 'u',
  shopID: 'shop',
  project: 'acme-test01',
  shop: { externalId: 'E', name: 'Shop', email: '', phone: '', street: '', zip: '', city: '', state: '', country: '' },
  customer: { loyaltyCard: 'CARD' },
  createdAt: '2026-11-21T10:00:00.000Z',
  availableMethods: ['cash'],
  paymentMethods: [{ id: 'cash' }],
  requiredInformation: [],
  violations: [],
  lineItems: [
    { id: 'a', type: 'default', refersTo: null, sku: 'WATER', amount: 2, weight: 0, units: 0, price: 99, priceOrigin: 'master', totalPrice: 198, name: 'Wasser', taxRate: '19', scannedCode: '', saleRestriction: '' },
    { id: 'b', type: 'default', refersTo: null, sku: 'BREAD', amount: 1, weight: 0, units: 0, price: 249, priceOrigin: 'master', totalPrice: 249, name: 'Brot', taxRate: '7', scannedCode: '', saleRestriction: '' },
  ],
  price: { tax: { '19': 32, '7': 16 }, taxNet: { '19': 166, '7': 233 }, taxPre: { '19': 198, '7': 249 }, netPrice: 399, price: 447 },
  currency: 'EUR',
};

function processIn(state: PaymentState, overrides: Partial<ProcessRecord> = {}): ProcessRecord {
  return {
    project: 'acme-test01',
    id: 'p'.repeat(20),
    shopID: 'shop',
    checkoutInfo: info,
    pricing: { lineItems: info.lineItems, price: info.price },
    paymentMethod: 'cash',
    paymentInformation: null,
    paymentResult: null,
    paymentState: state,
    approvalRequired: false,
    supervisorApproval: true,
    checksPerformedBy: null,
    paymentApproval: null,
    aborted: false,
    modified: false,
    processedOffline: false,
    pos: {},
    fulfillments: [],
    version: 1,
    createdAt: new Date('2026-11-21T10:00:00Z'),
    finalizedAt: null,
    ...overrides,
  };
}

const at = new Date('2026-11-21T10:05:00Z');
const byAnna = { performedBy: 'anna' };

t.test('allows exactly the moves of the payment table and refuses every other', async (t) => {
  const allowed: Record<PaymentState, PaymentState[]> = {
    pending: ['processing', 'successful', 'failed', 'transferred'],
    processing: ['successful', 'failed', 'transferred'],
    transferred: [],
    successful: [],
    failed: [],
  };
  for (const from of PaymentStates) {
    for (const to of PaymentStates) {
      const kind = movePayment(processIn(from), to, at).kind;
      const expected = allowed[from].includes(to) ? 'changed' : from === to ? 'unchanged' : 'refused';
      t.equal(kind, expected, `${from} → ${to}`);
    }
  }
});

t.test('lets a payment succeed only after a required supervisor approval', async (t) => {
  const waiting = processIn('processing', { approvalRequired: true, supervisorApproval: null });
  t.equal(movePayment(waiting, 'successful', at).kind, 'refused');
  const approved = decide(waiting, { type: 'approve', supervisor: byAnna }, at);
  t.equal(approved.kind, 'changed');
  if (approved.kind !== 'changed') return;
  t.match(approved.next, { supervisorApproval: true, checksPerformedBy: 'anna' });
  t.equal(decide(approved.next, { type: 'approve', supervisor: { performedBy: 'bob' } }, at).kind, 'unchanged', 'a second approval changes nothing, not even the performer');
  t.equal(movePayment(approved.next, 'successful', at).kind, 'changed');
});

t.test("passes a pending check with a supervisor's payment success in the same change, and only a supervisor's", async (t) => {
  for (const from of ['pending', 'processing'] as const) {
    const waiting = processIn(from, { approvalRequired: true, supervisorApproval: null });
    t.equal(decide(waiting, { type: 'setPaymentState', paymentState: 'successful' }, at).kind, 'refused', `${from}: a payment system's success waits`);
    const paid = decide(waiting, { type: 'setPaymentState', paymentState: 'successful', paymentResult: { cash: true }, supervisor: { performedBy: 'sam' } }, at);
    t.match(
      paid,
      {
        kind: 'changed',
        next: { paymentState: 'successful', supervisorApproval: true, checksPerformedBy: 'sam', paymentApproval: true, finalizedAt: at, paymentResult: { cash: true } },
      },
      `${from}: approved and paid`,
    );
    if (paid.kind !== 'changed') continue;
    t.same(paid.events, [
      { domain: 'checkout', event: 'approved' },
      { domain: 'checkout', event: 'successful' },
      { domain: 'pos', event: 'successful' },
    ], `${from}: the events of an approval, then the payment's`);
    t.equal(finishedOrderState(waiting, paid.next), 'final');
  }
  const waiting = processIn('pending', { approvalRequired: true, supervisorApproval: null });
  for (const paymentState of ['processing', 'failed', 'transferred'] as const) {
    t.match(decide(waiting, { type: 'setPaymentState', paymentState, supervisor: byAnna }, at), { kind: 'changed', next: { supervisorApproval: null, checksPerformedBy: null } }, `${paymentState}: no success, no check passed`);
  }
  const unknown = decide(waiting, { type: 'setPaymentState', paymentState: 'successful', supervisor: { performedBy: null } }, at);
  t.match(unknown, { kind: 'changed', next: { supervisorApproval: true, checksPerformedBy: null } }, 'a supervisor whose token names nobody passes them too');
  const approved = processIn('pending', { approvalRequired: true, supervisorApproval: true, checksPerformedBy: 'anna' });
  const later = decide(approved, { type: 'setPaymentState', paymentState: 'successful', supervisor: { performedBy: 'sam' } }, at);
  t.match(later, { kind: 'changed', next: { checksPerformedBy: 'anna' }, events: [{ event: 'successful' }, { event: 'successful' }] }, 'checks passed before keep their performer');
  t.equal(decide(processIn('successful'), { type: 'setPaymentState', paymentState: 'successful', supervisor: byAnna }, at).kind, 'unchanged', 'a repeat is a retry');
  t.equal(decide(processIn('failed', { approvalRequired: true, supervisorApproval: null }), { type: 'setPaymentState', paymentState: 'successful', supervisor: byAnna }, at).kind, 'refused', 'a finished process stays as it is');
});

t.test('records the PoS that takes a process over as the performer of its checks', async (t) => {
  const restricted = processIn('pending', { approvalRequired: true, supervisorApproval: null });
  t.match(decidePosUpdate(restricted, { state: 'processing', processedBy: 'kasse-1' }, at, 'pos:till'), { kind: 'changed', next: { checksPerformedBy: 'kasse-1' } }, 'its processedBy');
  t.match(decidePosUpdate(restricted, { state: 'successful' }, at, 'pos:till'), { kind: 'changed', next: { checksPerformedBy: 'pos:till' } }, 'else who sent it');
  t.match(decidePosUpdate(restricted, { state: 'successful' }, at), { kind: 'changed', next: { supervisorApproval: true, checksPerformedBy: null } }, 'else nobody known');
  const byPaymentSystem = processIn('processing', { approvalRequired: true, supervisorApproval: null });
  t.match(decidePosUpdate(byPaymentSystem, { state: 'processing', processedBy: 'kasse-2' }, at, 'pos:till'), { kind: 'changed', next: { checksPerformedBy: 'kasse-2' } }, 'a PoS claiming a process');
});

t.test('finishes an aborted process as failed and refuses everything after', async (t) => {
  const aborted = decide(processIn('processing', { pos: { processedBy: 'pos-1' } }), { type: 'abort' }, at);
  t.equal(aborted.kind, 'changed');
  if (aborted.kind !== 'changed') return;
  t.match(aborted.next, { aborted: true, paymentState: 'failed', paymentApproval: false, pos: { processedBy: 'pos-1', failedReason: 'aborted by the customer' } });
  t.same(aborted.events, [
    { domain: 'checkout', event: 'aborted' },
    { domain: 'pos', event: 'failed' },
  ]);
  t.equal(finishedOrderState(processIn('processing'), aborted.next), 'userAborted');
  for (const command of [{ type: 'approve', supervisor: byAnna }, { type: 'setPaymentState', paymentState: 'successful', supervisor: byAnna }, { type: 'setPaymentState', paymentState: 'processing' }, { type: 'setPaymentState', paymentState: 'failed', paymentResult: { late: 1 } }] as Command[]) {
    t.equal(decide(aborted.next, command, at).kind, 'refused', JSON.stringify(command));
  }
  t.equal(decide(aborted.next, { type: 'abort' }, at).kind, 'unchanged', 'a second abort is a retry');
  t.equal(decide(aborted.next, { type: 'setPaymentState', paymentState: 'failed' }, at).kind, 'unchanged', 'so is failed');
});

const commands: fc.Arbitrary<Command> = fc.oneof(
  fc.constant<Command>({ type: 'abort' }),
  fc.constant<Command>({ type: 'approve', supervisor: byAnna }),
  fc.constantFrom(...PaymentStates).map((paymentState): Command => ({ type: 'setPaymentState', paymentState })),
  fc.constantFrom(...PaymentStates).map((paymentState): Command => ({ type: 'setPaymentState', paymentState, supervisor: { performedBy: 'sam' } })),
  fc.integer({ min: 0, max: 10_000 }).map((price): Command => ({ type: 'updatePricing', pricing: { lineItems: [], price: { price } } })),
);

t.test('keeps its invariants over any sequence of commands', async () => {
  fc.assert(
    fc.property(fc.boolean(), fc.array(commands, { maxLength: 30 }), (approvalRequired, sequence) => {
      let process = processIn('pending', { approvalRequired, supervisorApproval: approvalRequired ? null : true });
      let orders = 0;
      for (const command of sequence) {
        const before = process;
        const decision = decide(before, command, at);
        if (isFinished(before.paymentState) && decision.kind === 'changed') return false; // a finished process never changes
        if (decision.kind !== 'changed') continue;
        process = decision.next;
        const moved = before.paymentState !== process.paymentState;
        if (moved && !PaymentMoves[before.paymentState].includes(process.paymentState)) return false;
        // A success past a pending check is a supervisor's alone, and passes the check in the same change: approved first.
        if (process.paymentState === 'successful' && moved && before.approvalRequired && before.supervisorApproval !== true) {
          if (command.type !== 'setPaymentState' || !command.supervisor) return false;
          if (decision.events[0]?.event !== 'approved' || process.supervisorApproval !== true || process.checksPerformedBy !== 'sam') return false;
        }
        // Checks pass with a performer, and only once: a later word keeps the first performer.
        if (before.supervisorApproval === true && process.checksPerformedBy !== before.checksPerformedBy) return false;
        if (before.supervisorApproval !== true && process.supervisorApproval === true && process.checksPerformedBy === null) return false;
        if (finishedOrderState(before, process)) orders++;
      }
      const approvalFollowsOutcome =
        process.paymentApproval === (process.paymentState === 'successful' ? true : process.paymentState === 'failed' ? false : null);
      const finalizedWhenPaid = (process.finalizedAt !== null) === (process.paymentState === 'successful');
      const oneOrder = orders === (isFinished(process.paymentState) && process.paymentState !== 'transferred' ? 1 : 0);
      return approvalFollowsOutcome && finalizedWhenPaid && oneOrder && (!process.aborted || process.paymentState === 'failed');
    }),
  );
});

t.test('moves the PoS view with the fields each move allows', async (t) => {
  const pending = processIn('pending');
  t.match(posView(pending), { state: 'pending', loyaltyCard: 'CARD', totalPrice: 447, netPrice: 399, taxShares: [{ rate: '7', net: 233, share: 16, total: 249 }, { rate: '19' }] });

  const start = decidePosUpdate(pending, { state: 'processing', processedBy: 'pos-1' }, at);
  t.equal(start.kind, 'changed');
  if (start.kind !== 'changed') return;
  t.equal(start.next.pos.processedBy, 'pos-1');
  t.equal(decidePosUpdate(start.next, { state: 'processing', processedBy: 'pos-1' }, at).kind, 'unchanged', 'a retry');
  t.equal(decidePosUpdate(start.next, { state: 'processing', processedBy: 'pos-2' }, at).kind, 'refused', 'another PoS');
  const claimed = decidePosUpdate(processIn('processing'), { state: 'processing', processedBy: 'pos-3' }, at);
  t.match(claimed, { kind: 'changed', next: { pos: { processedBy: 'pos-3' } }, events: [{ domain: 'pos', event: 'processing' }] }, 'the first PoS to claim a process in processing, with an event');
  t.equal(decidePosUpdate(pending, { state: 'processing', totalPrice: 1 }, at).kind, 'invalid', 'prices change only with success');
  t.match(decidePosUpdate(pending, { state: 'successful' }, at), { kind: 'changed', next: { paymentState: 'successful' } }, 'a PoS takes the payment at once (cash)');
  const restricted = processIn('pending', { approvalRequired: true, supervisorApproval: null });
  t.equal(movePayment(restricted, 'successful', at).kind, 'refused', 'a payment through the app still waits for the supervisor');
  t.match(
    decidePosUpdate(restricted, { state: 'successful' }, at),
    { kind: 'changed', next: { paymentState: 'successful', supervisorApproval: true }, events: [{ domain: 'checkout', event: 'approved' }, { domain: 'checkout', event: 'successful' }] },
    'a PoS that completes the checkout is its supervision: the cashier checked the age',
  );
  t.match(
    decidePosUpdate(restricted, { state: 'processing', processedBy: 'pos-9' }, at),
    { kind: 'changed', next: { paymentState: 'processing', supervisorApproval: true } },
    'so is a PoS that takes it over',
  );
  const byPaymentSystem = processIn('processing', { approvalRequired: true, supervisorApproval: null });
  t.match(decidePosUpdate(byPaymentSystem, { state: 'processing', processedBy: 'pos-9' }, at), { kind: 'changed', next: { supervisorApproval: true } }, 'and one that claims a process a payment system moved');
  t.match(decidePosUpdate(restricted, { state: 'failed' }, at), { kind: 'changed', next: { paymentState: 'failed', supervisorApproval: null } }, 'a PoS that fails it approves nothing');
  t.equal(decidePosUpdate(start.next, { state: 'processing', amount: 'x' }, at).kind, 'unchanged', 'unknown members are ignored');
  t.equal(decidePosUpdate(pending, { state: 'transferred' }, at).kind, 'invalid', 'a PoS does not transfer');

  const final = {
    state: 'successful',
    lineItems: [{ sku: 'WATER', amount: 1, price: 99, totalPrice: 99, taxRate: '19' }, { sku: 'GUM', amount: 1, price: 100, totalPrice: 100, taxRate: '19' }],
    taxShares: [{ rate: '19', net: 167, share: 32, total: 199 }],
    netPrice: 167,
    totalPrice: 199,
    loyaltyCard: 'OTHER',
  };
  t.equal(decidePosUpdate(start.next, { ...final, totalPrice: 200 }, at).kind, 'invalid', 'line items must add up');
  t.equal(decidePosUpdate(start.next, { ...final, taxShares: [{ rate: '19', net: 166, share: 32, total: 199 }] }, at).kind, 'invalid', 'net + share = total');
  const paid = decidePosUpdate(start.next, final, at);
  t.equal(paid.kind, 'changed');
  if (paid.kind !== 'changed') return;
  t.match(paid.next, { paymentState: 'successful', paymentApproval: true, finalizedAt: at, pos: { loyaltyCard: 'OTHER' } });
  t.match(paid.next.pricing.lineItems, [{ id: 'a', name: 'Wasser', amount: 1, totalPrice: 99 }, { id: 'pos-2', sku: 'GUM', type: 'default' }], 'known items keep their id and name');
  t.same(paid.next.pricing.price, { price: 199, netPrice: 167, tax: { '19': 32 }, taxNet: { '19': 167 }, taxPre: { '19': 199 } });
  t.same(posView(paid.next).lineItems.map((l) => l.sku), ['WATER', 'GUM']);
});

t.test('rebuilds a pricing from PoS figures without tax shares', async (t) => {
  const pricing = pricingFromPos({ lineItems: [], price: { price: 0 } }, { lineItems: [], taxShares: null, netPrice: 0, totalPrice: 0, state: 'successful', loyaltyCard: '', processedBy: '', failedReason: '' });
  t.same(pricing, { lineItems: [], price: { price: 0, netPrice: 0 } });
});

t.test('applies merge patches as RFC 7386 says', async (t) => {
  // The examples of RFC 7386, appendix A.
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, result] of cases) t.same(mergePatch(target, patch), result, JSON.stringify(patch));
  const polluted = mergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'a "__proto__" member pollutes nothing');
  t.equal(Object.getPrototypeOf(polluted), Object.prototype);
});
