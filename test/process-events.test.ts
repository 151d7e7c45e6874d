import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import t, { type Test } from 'tap';
import { EventPayloads, EventStream, type EventDomain } from '../subjects/events.js';
import { p, seedCheckout, watchEvents, type DeliveredEvent } from './support/checkout.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * The events of checkout processes as an integrator receives them: a JetStream consumer on EVENTS
 * (and a plain subscription) sees each change of a process once, in the order of its versions.
 */
const svc = await startTestService(t);
const fx = await seedCheckout(svc);
const stream = await watchEvents(t, svc, 'stream');
const core = await watchEvents(t, svc, 'core');
const jsm = await jetstreamManager(svc.nc);

const pos = (id: string, patch: object) =>
  svc.request('PATCH', `${p}/pos/checkout/id/${id}`, { token: fx.tokens.pricing, body: patch, headers: { 'content-type': 'application/merge-patch+json' } });
const patch = (id: string, token: string, body: object) => svc.request('PATCH', `${p}/checkout/process/${id}`, { token, body });
const get = (id: string) => svc.request('GET', `${p}/checkout/process/${id}`, { token: fx.tokens.reader });

async function created(items?: object[]): Promise<string> {
  const res = await fx.createProcess({ items });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** The events a process's changes published (the order's fiscalized event follows from its TSE job: test/fiscal-local.test.ts). */
const changesOf = (watch: { of(id: string): DeliveredEvent[] }, id: string) => watch.of(id).filter((e) => e.event !== 'fiscalized');

/** `domain.event` of each event, in arrival order. */
const names = (events: DeliveredEvent[]) => events.map((e) => `${e.domain}.${e.event}`);

/**
 * Asserts the events of one process: `changes` lists, per change (version 1, 2, ...), the
 * `domain.event` names it publishes. Each must arrive once, in this order, on a subject naming the
 * process, with a payload its domain's schema accepts, the change's version and a Nats-Msg-Id.
 */
function assertEvents(t: Test, id: string, changes: string[][]): DeliveredEvent[] {
  const events = changesOf(stream, id);
  const expected = changes.flat();
  t.same(names(events), expected, 'each event once, in order');
  t.same(
    events.map((e) => e.subject),
    expected.map((name) => {
      const [domain, event] = name.split('.');
      return `events.${TestProject}.${domain}.${id}.${event}`;
    }),
    'subjects are events.<project>.<domain>.<id>.<event>',
  );
  t.same(
    events.map((e) => e.payload?.version),
    changes.flatMap((names, index) => names.map(() => index + 1)),
    'the version grows by one per change',
  );
  for (const e of events) {
    const parsed = EventPayloads[e.domain as EventDomain]?.safeParse(e.payload);
    t.ok(parsed?.success, `${e.domain}.${e.event} matches its schema`, { error: parsed?.error?.issues });
    t.match(e.payload, { project: TestProject, id, event: e.event }, `${e.domain}.${e.event} names its project, process and event`);
    t.match(e.msgId, /^[0-9a-f-]{36}$/, `${e.domain}.${e.event} has a Nats-Msg-Id`);
  }
  t.same(names(changesOf(core, id)), expected, 'a plain subscription saw the same events');
  return events;
}

async function versionOf(id: string): Promise<number> {
  const [row] = await svc.sql<{ version: number }[]>`select version from checkout_processes where id = ${id}`;
  return row!.version;
}

t.test('a PoS checkout publishes created and pending, then processing and successful of checkout and PoS and the final order, each once', async (t) => {
  const id = await created();
  t.equal((await pos(id, { state: 'processing', processedBy: 'pos-7' })).status, 200);
  t.equal((await pos(id, { state: 'successful' })).status, 200);
  await stream.settle();

  const events = assertEvents(t, id, [
    ['checkout.created', 'pos.pending'],
    ['checkout.processing', 'pos.processing'],
    ['checkout.successful', 'pos.successful', 'order.final'],
  ]);
  t.equal(await versionOf(id), 3, 'the row has the version of the last event');
  const process = (await get(id)).body;
  t.match(events[0]!.payload.process, { id, paymentState: 'pending', shopID: 's1', price: { price: process.pricing.price.price } });
  t.match(events[3]!.payload.pos, { state: 'processing', processedBy: 'pos-7' });
  t.match(events[4]!.payload.process, { paymentState: 'successful', paymentApproval: true, finalizedAt: process.finalizedAt });
  const [order] = await svc.sql<{ sequence_number: string }[]>`select sequence_number from orders where id = ${id}`;
  t.match(events[6]!.payload.order, { id, state: 'final', shopID: 's1', sequenceNumber: Number(order!.sequence_number), paidAmount: process.pricing.price.price, currency: 'EUR' });
});

t.test('an aborted process publishes aborted, PoS failed and the userAborted order', async (t) => {
  const id = await created();
  t.equal((await patch(id, fx.tokens.customer, { aborted: true })).status, 200);
  await stream.settle();

  const events = assertEvents(t, id, [
    ['checkout.created', 'pos.pending'],
    ['checkout.aborted', 'pos.failed', 'order.userAborted'],
  ]);
  t.match(events[2]!.payload.process, { aborted: true, paymentState: 'failed', paymentApproval: false });
  t.match(events[3]!.payload.pos, { state: 'failed' });
  t.match(events[4]!.payload.order, { state: 'userAborted', paidAmount: 0 });
  t.equal(await versionOf(id), 2);
});

t.test('an age-restricted process publishes its approval, then processing, successful and the final order', async (t) => {
  const id = await created([{ sku: 'WINE', amount: 1 }]);
  t.equal((await svc.request('POST', `${p}/checkout/process/${id}/approval`, { token: fx.tokens.supervisor, body: { type: 'supervisor' } })).status, 201);
  t.equal((await patch(id, fx.tokens.payment, { paymentState: 'processing' })).status, 200);
  t.equal((await patch(id, fx.tokens.payment, { paymentState: 'successful', paymentResult: { transactionID: 'tx-1' } })).status, 200);
  await stream.settle();

  const events = assertEvents(t, id, [
    ['checkout.created', 'pos.pending'],
    ['checkout.approved'],
    ['checkout.processing', 'pos.processing'],
    ['checkout.successful', 'pos.successful', 'order.final'],
  ]);
  t.match(events[0]!.payload.process, { supervisorApproval: null });
  t.match(events[2]!.payload.process, { supervisorApproval: true, paymentState: 'pending' });
  t.match(events[5]!.payload.process, { paymentState: 'successful', paymentResult: { transactionID: 'tx-1' } });
  t.match(events[7]!.payload.order, { state: 'final', paidAmount: 599 });
  t.equal(await versionOf(id), 4);
});

t.test('pricing updates publish pricingUpdated with the new price; a failed payment then publishes failed and the paymentFailed order', async (t) => {
  const id = await created();
  const pricing = (price: number) => ({ pricing: { lineItems: [{ sku: 'WATER', amount: 1, price, totalPrice: price }], price: { price } } });
  t.equal((await patch(id, fx.tokens.pricing, pricing(150))).status, 200);
  t.equal((await patch(id, fx.tokens.pricing, pricing(120))).status, 200);
  t.equal((await patch(id, fx.tokens.payment, { paymentState: 'failed' })).status, 200);
  await stream.settle();

  const events = assertEvents(t, id, [
    ['checkout.created', 'pos.pending'],
    ['checkout.pricingUpdated'],
    ['checkout.pricingUpdated'],
    ['checkout.failed', 'pos.failed', 'order.paymentFailed'],
  ]);
  t.match(events[2]!.payload.process, { modified: true, price: { price: 150 } });
  t.match(events[3]!.payload.process, { modified: true, price: { price: 120 } });
  t.match(events[5]!.payload.pos, { state: 'failed', totalPrice: 120 });
  t.match(events[6]!.payload.order, { state: 'paymentFailed', paidAmount: 0 });
});

t.test('a request that changes nothing publishes nothing', async (t) => {
  const id = await created();
  t.equal((await patch(id, fx.tokens.payment, { paymentState: 'processing' })).status, 200);
  await stream.settle();
  const before = (await jsm.streams.info(EventStream.name)).state.last_seq;

  t.equal((await patch(id, fx.tokens.payment, { paymentState: 'processing' })).status, 200, 'the state it is in');
  t.equal((await pos(id, { state: 'processing' })).status, 200, 'the PoS repeats the state');
  t.equal((await svc.request('POST', `${p}/checkout/process/${id}/approval`, { token: fx.tokens.supervisor, body: { type: 'supervisor' } })).status, 201, 'an approval it has');
  await stream.settle();

  t.equal((await jsm.streams.info(EventStream.name)).state.last_seq, before, 'nothing reached the stream');
  assertEvents(t, id, [
    ['checkout.created', 'pos.pending'],
    ['checkout.processing', 'pos.processing'],
  ]);
  t.equal(await versionOf(id), 2, 'the version did not move');
});

t.test('a refused move publishes nothing and leaves the outbox empty', async (t) => {
  const id = await created();
  await stream.settle();
  const before = (await jsm.streams.info(EventStream.name)).state.last_seq;
  const outbox = async () => (await svc.sql<{ n: number }[]>`select count(*)::int as n from outbox`)[0]!.n;

  await patch(id, fx.tokens.payment, { paymentState: 'processing' });
  await stream.settle();
  const refusals = [
    await patch(id, fx.tokens.payment, { paymentState: 'pending' }),
    await pos(id, { state: 'pending' }),
  ];
  for (const res of refusals) t.match(res, { status: 409, body: { type: 'invalid_state_transition' } });
  t.equal(await outbox(), 0, 'no event was written');

  const done = await created();
  t.equal((await patch(done, fx.tokens.customer, { aborted: true })).status, 200);
  // The abort's TSE job publishes order.fiscalized a while after the abort's own events.
  for (const deadline = Date.now() + 20_000; !stream.of(done).some((e) => e.event === 'fiscalized') && Date.now() < deadline; ) await sleep(50);
  await stream.settle();
  const afterAbort = (await jsm.streams.info(EventStream.name)).state.last_seq;
  const late = [
    await patch(done, fx.tokens.payment, { paymentState: 'processing' }),
    await patch(done, fx.tokens.payment, { paymentState: 'failed', paymentResult: { late: true } }),
    await patch(done, fx.tokens.pricing, { pricing: { lineItems: [], price: { price: 1 } } }),
    await pos(done, { state: 'processing', processedBy: 'pos-late' }),
    await pos(done, { state: 'successful' }),
    await svc.request('POST', `${p}/checkout/process/${done}/approval`, { token: fx.tokens.supervisor, body: { type: 'supervisor' } }),
    await pos(done, { state: 'failed', failedReason: 'again' }),
  ];
  for (const res of late) t.match(res, { status: 409, body: { type: 'invalid_state_transition' } });
  // Repeats of what holds are answered as they stand, and publish nothing either.
  t.equal((await patch(done, fx.tokens.customer, { aborted: true })).status, 200, 'a second abort');
  t.equal((await pos(done, { state: 'failed' })).status, 200, 'a PoS repeating failed');
  t.equal(await outbox(), 0, 'no event was written after the end');
  await stream.settle();

  t.equal((await jsm.streams.info(EventStream.name)).state.last_seq, afterAbort, 'nothing reached the stream after the abort');
  t.ok(afterAbort > before, 'only the second process published after the refusals (its creation and abort)');
  assertEvents(t, id, [
    ['checkout.created', 'pos.pending'],
    ['checkout.processing', 'pos.processing'],
  ]);
  t.match((await get(id)).body, { paymentState: 'processing' });
  t.equal(await versionOf(id), 2);
  assertEvents(t, done, [
    ['checkout.created', 'pos.pending'],
    ['checkout.aborted', 'pos.failed', 'order.userAborted'],
  ]);
});

t.test('processes running side by side each publish their events once, in their own order', async (t) => {
  const ids = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => {
      const id = await created();
      const steps = i % 3 === 0 ? [{ state: 'failed', failedReason: 'card declined' }] : [{ state: 'processing', processedBy: `pos-${i}` }, { state: 'successful' }];
      for (const step of steps) {
        const res = await pos(id, step);
        if (res.status !== 200) throw new Error(`PoS ${step.state} failed: ${res.status} ${res.text}`);
      }
      return { id, failed: i % 3 === 0 };
    }),
  );
  await stream.settle();

  for (const { id, failed } of ids) {
    assertEvents(
      t,
      id,
      failed
        ? [
            ['checkout.created', 'pos.pending'],
            ['checkout.failed', 'pos.failed', 'order.paymentFailed'],
          ]
        : [
            ['checkout.created', 'pos.pending'],
            ['checkout.processing', 'pos.processing'],
            ['checkout.successful', 'pos.successful', 'order.final'],
          ],
    );
  }
  // Every process of this file is in shop s1: its orders so far carry the numbers 1..n.
  const numbers = stream.events.filter((e) => e.domain === 'order' && e.event !== 'fiscalized').map((e) => e.payload.order.sequenceNumber as number);
  t.same(
    [...numbers].sort((a, b) => a - b),
    numbers.map((_, i) => i + 1),
    'the order events carry the shop’s numbers 1..n, each once',
  );
});

t.test('every stored event has its own Nats-Msg-Id, and a plain subscription saw the stream’s events in the same order', async (t) => {
  await stream.settle();
  const info = await jsm.streams.info(EventStream.name);
  t.equal(stream.events.length, info.state.messages, 'the consumer received every stored event');
  const ids = stream.events.map((e) => e.msgId);
  t.equal(new Set(ids).size, ids.length, 'no Nats-Msg-Id twice');
  t.notOk(ids.includes(undefined), 'every event has one');
  t.same(
    core.events.map((e) => `${e.subject} ${e.msgId}`),
    stream.events.map((e) => `${e.subject} ${e.msgId}`),
  );
  t.equal((await svc.sql<{ n: number }[]>`select count(*)::int as n from outbox`)[0]!.n, 0, 'the outbox is empty');
});
