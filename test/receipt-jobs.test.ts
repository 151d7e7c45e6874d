import { jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { insertOutbox } from '../actors/outbox/sql.js';
import { receiptJob } from '../subjects/receipts.js';
import { p } from './support/checkout.js';
import { eventually, insertOrder, orderDocument, type SeededLine } from './support/closing.js';
import { startTestService } from './support/service.js';

/**
 * Receipt jobs: the receipt of an order that became final is made ahead of its first request. The
 * jobs are enqueued here as the checkout process actor enqueues them: an outbox row (subject,
 * payload, Nats-Msg-Id from subjects/receipts.ts receiptJob) written beside the final order.
 */
const svc = await startTestService(t);
const orders = await svc.token(['ordersRead']);
const lines: SeededLine[] = [
  { type: 'default', sku: 'MILK', name: 'Vollmilch 1 l', amount: 2, price: 119, taxRate: '7' },
  { type: 'deposit', sku: 'DEP', name: 'Pfand 0,15', amount: 2, price: 15, taxRate: '19', refersTo: 'l1' },
];

async function finalOrder(state = 'final'): Promise<string> {
  const order = orderDocument({ shop: 's1', lines, state });
  await insertOrder(svc.sql, order);
  return order.id;
}

const enqueue = (id: string, msgId?: string) => {
  const job = receiptJob('acme-test01', id);
  return insertOutbox(svc.sql, [{ ...job, msgId: msgId ?? job.msgId }]);
};

const stored = (id: string) => svc.sql<{ etag: string }[]>`select etag from receipts where order_id = ${id}`;

// Every receipt made ends in an insert into receipts, also one the store drops (on conflict do
// nothing: the first is kept, and identical anyway). A BEFORE INSERT trigger sees each of them, so
// a receipt made a second time shows here though the receipts table does not change.
await svc.sql`create table receipt_inserts (order_id text not null)`;
await svc.sql`create function count_receipt_insert() returns trigger language plpgsql as $$ begin insert into receipt_inserts values (new.order_id); return new; end $$`;
await svc.sql`create trigger count_receipt_insert before insert on receipts for each row execute function count_receipt_insert()`;
/** How many times the receipt of this order was made. */
const made = async (id: string) => (await svc.sql<{ n: number }[]>`select count(*)::int as n from receipt_inserts where order_id = ${id}`)[0]!.n;

/** Waits until the receipt jobs' consumer has nothing left (published, delivered, acked). */
async function jobsDone(): Promise<void> {
  const jsm = await jetstreamManager(svc.nc);
  await eventually('the receipt jobs to be done', async () => {
    const [outbox] = await svc.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
    const info = await jsm.consumers.info('JOBS', 'receipt');
    return outbox!.n === 0 && info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
  });
}

async function receipt(id: string): Promise<{ status: number; etag: string | null; bytes: Buffer }> {
  const res = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${orders}` } });
  return { status: res.status, etag: res.headers.get('etag'), bytes: Buffer.from(await res.arrayBuffer()) };
}

t.test('a receipt job makes and keeps the receipt of a final order before anyone asks for it', async (t) => {
  const id = await finalOrder();
  await enqueue(id);
  const [made] = await eventually('the receipt to be made', async () => {
    const rows = await stored(id);
    return rows.length ? rows : undefined;
  });
  const res = await receipt(id);
  t.equal(res.status, 200);
  t.equal(res.bytes.subarray(0, 5).toString(), '%PDF-');
  t.equal(res.etag, made!.etag, 'the request answers the receipt the job made');
});

t.test('a job makes nothing for an order that is not final or does not exist, and a job delivered again makes no second receipt', async (t) => {
  const failed = await finalOrder('paymentFailed');
  const final = await finalOrder();
  await enqueue(final);
  await jobsDone();
  const [first] = await stored(final);
  t.equal(await made(final), 1, 'made by its job');
  await enqueue(failed);
  await enqueue('no-such-order');
  await enqueue(final, 'a-second-delivery');
  await jobsDone();
  t.same(await stored(failed), [], 'no receipt of an order that is not final');
  t.equal(await made(failed), 0, 'none made');
  t.same(await stored(final), [first], 'one receipt, the first, unchanged');
  t.equal(await made(final), 1, 'not made again by the job delivered again');
  t.equal((await receipt(failed)).status, 404, 'and none is served');
});

t.test('a request that comes before its job makes the receipt itself; the job then makes nothing', async (t) => {
  const id = await finalOrder();
  const [res] = await Promise.all([receipt(id), enqueue(id)]);
  t.equal(res.status, 200);
  await jobsDone();
  t.same(await stored(id), [{ etag: res.etag }], 'one receipt, the one answered');
  t.equal(await made(id), 1, 'made once: the job made none of its own');
  t.ok((await receipt(id)).bytes.equals(res.bytes), 'the same bytes again');
});
