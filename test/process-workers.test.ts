import t from 'tap';
import { p, seedCheckout, watchEvents } from './support/checkout.js';
import { startMoreWorkers, startTestService } from './support/service.js';

/**
 * Two worker sides serve the same checkout processes, as when operators scale out: each remembers
 * the processes it wrote last, and a memory the other side made stale must never decide a change or
 * an answer. Requests go to either side at random (NATS queue groups).
 */
const svc = await startTestService(t);
await startMoreWorkers(t, svc);
const fx = await seedCheckout(svc);
const stream = await watchEvents(t, svc, 'stream');

const patch = (id: string, body: object) => fx.patchProcess(id, body);
const patchPos = (id: string, body: object) =>
  svc.request('PATCH', `${p}/pos/checkout/id/${id}`, { token: fx.tokens.pricing, body, headers: { 'content-type': 'application/merge-patch+json' } });
const pricing = (total: number) => ({ pricing: { lineItems: [{ sku: 'WATER', amount: 1, price: total, totalPrice: total }], price: { price: total } } });

t.test('moves each process through both worker sides without losing or refusing a change', async (t) => {
  const ids = await Promise.all(Array.from({ length: 20 }, async () => (await fx.createProcess()).body.id as string));
  const steps = (i: number): Array<[string, () => Promise<any>]> => [
    ['pricing 1', () => patch(ids[i]!, pricing(100 + i))],
    ['pricing 2', () => patch(ids[i]!, pricing(200 + i))],
    ['PoS processing', () => patchPos(ids[i]!, { state: 'processing', processedBy: `pos-${i}` })],
    ['pricing 3', () => patch(ids[i]!, pricing(300 + i))],
    ['successful', () => patch(ids[i]!, { paymentState: 'successful' })],
  ];
  const answers = await Promise.all(
    ids.map(async (_, i) => {
      const statuses: string[] = [];
      for (const [name, step] of steps(i)) statuses.push(`${name} ${(await step()).status}`);
      return statuses;
    }),
  );
  t.same(answers, ids.map((_, i) => steps(i).map(([name]) => `${name} 200`)), 'every step accepted, whichever side served it');

  // Refusals are decided on the database's state, not on a side's memory of an open process.
  const late = await Promise.all(ids.map((id) => patch(id, pricing(1))));
  t.same(late.map((r) => `${r.status} ${r.body.type}`), ids.map(() => '409 invalid_state_transition'), 'a finished process refuses a late pricing update on both sides');
  const repeat = await Promise.all(ids.map((id) => patchPos(id, { state: 'processing', processedBy: 'someone-else' })));
  t.same(repeat.map((r) => r.status), ids.map(() => 409), 'and a late PoS move');

  await stream.settle();
  for (const [i, id] of ids.entries()) {
    const process = (await fx.getProcess(id)).body;
    t.match(process, { paymentState: 'successful', modified: true, pricing: { price: { price: 300 + i } } }, `${id}: the last pricing and the end`);
    const [row] = await svc.sql<{ version: number; processed_by: string }[]>`select version, pos ->> 'processedBy' as processed_by from checkout_processes where id = ${id}`;
    t.same(row, { version: 6, processed_by: `pos-${i}` }, `${id}: five changes, none lost`);
    t.same([...new Set(stream.of(id).map((e) => e.payload.version))], [1, 2, 3, 4, 5, 6], `${id}: an event for every version`);
  }
  const orders = await svc.sql<{ n: number; numbers: string[] }[]>`select count(*)::int as n, array_agg(sequence_number::text order by sequence_number) as numbers from orders`;
  t.same(orders[0], { n: 20, numbers: ids.map((_, i) => String(i + 1)) }, 'one order per process, numbered 1..20');
});

t.test('answers a state it reads from the database after the other side changed it', async (t) => {
  for (let round = 0; round < 10; round++) {
    const id = (await fx.createProcess()).body.id as string;
    t.equal((await patch(id, { paymentState: 'processing' })).status, 200);
    // Whichever side serves these, each sees the move the other may have made.
    t.equal((await patch(id, { paymentState: 'processing' })).status, 200, `round ${round}: a repeat`);
    const failed = await patch(id, { paymentState: 'failed' });
    t.equal(failed.status, 200, `round ${round}: failed`);
    const again = await patchPos(id, { state: 'processing' });
    t.match(again, { status: 409, body: { type: 'invalid_state_transition' } }, `round ${round}: nothing moves a failed process`);
  }
});
