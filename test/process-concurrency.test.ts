import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { assertGaplessOrderNumbers, p, seedCheckout, watchEvents, type DeliveredEvent } from './support/checkout.js';
import { startTestService } from './support/service.js';

/**
 * Many requests on one checkout process at once: the process actor (mailbox and row lock) must
 * apply them one after another, so that every accepted change is kept, exactly one of the ends
 * wins, the version counts the changes, and the process becomes exactly one order.
 */
const svc = await startTestService(t);
const fx = await seedCheckout(svc);
const stream = await watchEvents(t, svc, 'stream');

type Kind = 'pricing' | 'processing' | 'successful' | 'failed' | 'abort' | 'posProcessing' | 'posSuccessful' | 'posFailed';

interface Sent {
  kind: Kind;
  /** The total a pricing update asks for. */
  total?: number;
  start: number;
  end: number;
  status: number;
  body: any;
}

const pricingOf = (total: number) => ({
  pricing: { lineItems: [{ sku: 'WATER', amount: 1, price: total, totalPrice: total, taxRate: '19' }], price: { price: total, netPrice: Math.round(total / 1.19) } },
});

/** Sends one request of `kind` after `delayMs`, and notes when it left and when its answer came. */
async function send(id: string, kind: Kind, delayMs: number, total = 0): Promise<Sent> {
  await sleep(delayMs);
  const checkout = (token: string, body: object) => svc.request('PATCH', `${p}/checkout/process/${id}`, { token, body });
  const pos = (state: string) =>
    svc.request('PATCH', `${p}/pos/checkout/id/${id}`, { token: fx.tokens.pricing, body: { state }, headers: { 'content-type': 'application/merge-patch+json' } });
  const start = performance.now();
  const res = await {
    pricing: () => checkout(fx.tokens.pricing, pricingOf(total)),
    processing: () => checkout(fx.tokens.payment, { paymentState: 'processing' }),
    successful: () => checkout(fx.tokens.payment, { paymentState: 'successful' }),
    failed: () => checkout(fx.tokens.payment, { paymentState: 'failed' }),
    abort: () => checkout(fx.tokens.customer, { aborted: true }),
    posProcessing: () => pos('processing'),
    posSuccessful: () => pos('successful'),
    posFailed: () => pos('failed'),
  }[kind]();
  return { kind, total: kind === 'pricing' ? total : undefined, start, end: performance.now(), status: res.status, body: res.body };
}

async function created(shopID = 's1'): Promise<{ id: string; price: number }> {
  const signedCheckoutInfo = await fx.signedInfo(undefined, { shopID });
  const res = await svc.request('POST', `${p}/checkout/process`, { token: fx.tokens.customer, body: { signedCheckoutInfo, paymentMethod: 'cash' } });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return { id: res.body.id, price: res.body.pricing.price.price };
}

/** Answers other than 200 and 409 invalid_state_transition. */
const unexpected = (sent: Sent[]) =>
  sent.filter((s) => !(s.status === 200 || (s.status === 409 && s.body?.type === 'invalid_state_transition'))).map((s) => `${s.kind}: ${s.status} ${JSON.stringify(s.body)}`);

/** The order a process's end makes. */
const OrderStateOf: Record<string, string> = { successful: 'final', failed: 'paymentFailed', aborted: 'userAborted' };

const terminalEvents = (events: DeliveredEvent[]) => events.filter((e) => e.domain === 'checkout' && ['successful', 'failed', 'aborted'].includes(e.event));

async function ordersOf(id: string) {
  return svc.sql<{ state: string; sequence_number: string; paid: number }[]>`
    select state, sequence_number, (doc ->> 'paidAmount')::int as paid from orders where id = ${id}`;
}

async function versionOf(id: string): Promise<number> {
  const [row] = await svc.sql<{ version: number }[]>`select version from checkout_processes where id = ${id}`;
  return row!.version;
}

t.test('50 concurrent changes of one process: each answered 200 or 409, one end, no lost pricing update, one order', async (t) => {
  const { id, price: infoPrice } = await created();
  const jitter = (from: number, to: number) => from + Math.random() * (to - from);
  const plan: Array<[Kind, number, number?]> = [
    ...Array.from({ length: 20 }, (_, i): [Kind, number, number] => ['pricing', jitter(0, 250), 1001 + i]),
    ...Array.from({ length: 6 }, (): [Kind, number] => ['processing', jitter(0, 80)]),
    ...Array.from({ length: 6 }, (): [Kind, number] => ['posProcessing', jitter(0, 120)]),
    ...Array.from({ length: 4 }, (): [Kind, number] => ['successful', jitter(100, 250)]),
    ...Array.from({ length: 5 }, (): [Kind, number] => ['posSuccessful', jitter(100, 250)]),
    ...Array.from({ length: 4 }, (): [Kind, number] => ['failed', jitter(100, 250)]),
    ...Array.from({ length: 4 }, (): [Kind, number] => ['posFailed', jitter(100, 250)]),
    ['abort', jitter(100, 250)],
  ];
  const sent = await Promise.all(plan.map(([kind, delay, total]) => send(id, kind, delay, total)));
  t.equal(sent.length, 50, '50 requests');

  t.same(unexpected(sent), [], 'every answer is 200 or 409 invalid_state_transition');
  await stream.settle();
  const events = stream.of(id).filter((e) => e.event !== 'fiscalized'); // the TSE job's event, not a change
  const final = (await svc.request('GET', `${p}/checkout/process/${id}`, { token: fx.tokens.reader })).body;
  t.ok(['successful', 'failed'].includes(final.paymentState), `the process ended (${final.paymentState}${final.aborted ? ', aborted' : ''})`);

  // One end: one terminal event, and no accepted request asked for another end.
  const ends = terminalEvents(events);
  t.equal(ends.length, 1, 'one terminal event');
  const end = ends[0]!;
  const outcome = final.aborted ? 'aborted' : final.paymentState;
  t.equal(end.event, outcome, 'the terminal event is the end the process shows');
  const accepted = sent.filter((s) => s.status === 200);
  t.comment(`ended ${outcome}; accepted: ${accepted.map((s) => s.total ?? s.kind).join(', ')}`);
  const endOf: Partial<Record<Kind, string>> = { successful: 'successful', posSuccessful: 'successful', failed: 'failed', posFailed: 'failed', abort: 'aborted' };
  // An aborted process has failed: a later request for failed is answered as it stands.
  const contradicting = accepted.filter((s) => endOf[s.kind] && endOf[s.kind] !== outcome && !(endOf[s.kind] === 'failed' && outcome === 'aborted'));
  t.same(contradicting.map((s) => s.kind), [], 'no request for another end was accepted');
  t.ok(
    accepted.some((s) => endOf[s.kind] === outcome),
    'a client was told of the end',
  );

  // Every accepted pricing update is kept in the history, none that was refused.
  const pricingEvents = events.filter((e) => e.event === 'pricingUpdated');
  const acceptedTotals = accepted.filter((s) => s.kind === 'pricing').map((s) => s.total!);
  t.same(
    pricingEvents.map((e) => e.payload.process.price.price).sort(),
    [...acceptedTotals].sort(),
    'one pricingUpdated per accepted update, with its total',
  );
  for (const s of accepted.filter((s) => s.kind === 'pricing')) t.equal(s.body.pricing.price.price, s.total, `the answer to ${s.total} shows it`);
  t.ok(
    pricingEvents.every((e) => e.payload.version < end.payload.version),
    'no pricing update after the end',
  );
  const versionOfTotal = new Map<number, number>(pricingEvents.map((e) => [e.payload.process.price.price, e.payload.version]));
  const lastPricing = pricingEvents.at(-1);
  t.equal(final.pricing.price.price, lastPricing ? lastPricing.payload.process.price.price : infoPrice, 'the process keeps the last accepted pricing');
  t.equal(final.modified, acceptedTotals.length > 0);

  // Answers follow real time: a change answered before another was sent comes first.
  const pricingAccepted = accepted.filter((s) => s.kind === 'pricing');
  const outOfOrder = pricingAccepted.flatMap((a) =>
    pricingAccepted.filter((b) => a.end < b.start && versionOfTotal.get(a.total!)! >= versionOfTotal.get(b.total!)!).map((b) => `${a.total} before ${b.total}`),
  );
  t.same(outOfOrder, [], 'pricing updates are applied in the order they were answered');
  const endedAt = Math.min(...accepted.filter((s) => endOf[s.kind]).map((s) => s.end));
  // Only a repeat of the end may be answered 200 after it, and it shows the process as it ended.
  const acceptedLate = sent.filter((s) => s.start > endedAt && s.status === 200);
  t.same(
    acceptedLate.filter((s) => (s.body.paymentState ?? s.body.state) !== final.paymentState || s.kind === 'pricing').map((s) => s.kind),
    [],
    'nothing sent after an end was answered changed the process (a repeat of the end is answered as it stands)',
  );

  // The version counts the accepted changes: the pricing updates, the move to processing (if any), the end.
  const processingEvents = events.filter((e) => e.domain === 'checkout' && e.event === 'processing');
  t.ok(processingEvents.length <= 1, 'processing at most once');
  if (processingEvents.length) t.ok(accepted.some((s) => s.kind === 'processing' || s.kind === 'posProcessing'), 'a client was told of processing');
  if (outcome === 'successful') t.equal(processingEvents.length, 1, 'a successful process went through processing');
  const changes = acceptedTotals.length + processingEvents.length + 1;
  t.equal(await versionOf(id), 1 + changes, 'version = 1 + the accepted changes');
  t.same(
    [...new Set(events.map((e) => e.payload.version))],
    Array.from({ length: 1 + changes }, (_, i) => i + 1),
    'the events carry every version once, in order',
  );
  t.equal(new Set(events.map((e) => e.msgId)).size, events.length, 'no event twice');

  const orders = await ordersOf(id);
  const orderState = OrderStateOf[outcome];
  t.match(orders, [{ state: orderState, sequence_number: '1' }], 'one order, number 1 of the shop');
  t.equal(orders.length, 1);
  if (outcome === 'successful') t.equal(orders[0]?.paid, final.pricing.price.price, 'paid the final price');
  t.same(
    events.filter((e) => e.domain === 'order').map((e) => e.event),
    [orderState],
    'one order event',
  );
});

t.test('20 processes with 5 concurrent changes each: one end and one order each, every shop numbered 1..n without gaps', async (t) => {
  const processes = await Promise.all(Array.from({ length: 20 }, (_, i) => created(i % 2 ? 's2' : 's1')));
  const kinds: Kind[] = ['processing', 'successful', 'failed', 'abort', 'pricing'];
  const results = await Promise.all(
    processes.map(async ({ id }, i) => ({
      id,
      sent: await Promise.all(kinds.map((kind) => send(id, kind, Math.random() * 40, 2000 + i))),
    })),
  );
  t.same(
    results.flatMap((r) => unexpected(r.sent)),
    [],
    'every answer is 200 or 409 invalid_state_transition',
  );
  await stream.settle();

  for (const { id, sent } of results) {
    const events = stream.of(id).filter((e) => e.event !== 'fiscalized'); // the TSE job's event, not a change
    const state = (await svc.request('GET', `${p}/checkout/process/${id}`, { token: fx.tokens.reader })).body;
    const outcome = state.aborted ? 'aborted' : state.paymentState;
    // A request for failed that reached an aborted (so failed) process is answered as it stands.
    const noop = (s: Sent) => s.kind === 'failed' && outcome === 'aborted';
    const accepted = sent.filter((s) => s.status === 200 && !noop(s));
    const ends = accepted.filter((s) => ['successful', 'failed', 'abort'].includes(s.kind));
    t.same(
      ends.map((s) => (s.kind === 'abort' ? 'aborted' : s.kind)),
      [outcome],
      `${id}: one end accepted, the one it shows`,
    );
    t.equal(terminalEvents(events).length, 1, `${id}: one terminal event`);
    // Every other accepted request changed the process.
    t.equal(await versionOf(id), 1 + accepted.length, `${id}: version = 1 + accepted changes`);
    t.same(
      [...new Set(events.map((e) => e.payload.version))],
      Array.from({ length: 1 + accepted.length }, (_, i) => i + 1),
      `${id}: its events carry every version once, in order`,
    );
    const orders = await ordersOf(id);
    t.equal(orders.length, 1, `${id}: one order`);
    t.equal(orders[0]?.state, OrderStateOf[outcome], `${id}: the order records the end`);
  }

  const shops = await assertGaplessOrderNumbers(t, svc);
  t.same(
    shops.map((s) => s.split(' ')[0]),
    ['s1', 's2'],
  );
  const [count] = await svc.sql<{ n: number }[]>`select count(*)::int as n from orders`;
  t.equal(count!.n, 21, 'one order per process (and the one of the first test)');
});
