import { jetstreamManager } from '@nats-io/jetstream';
import t from 'tap';
import { p, seedCheckout } from './support/checkout.js';
import { checkoutIn, eventually } from './support/closing.js';
import { startTestService, type TestService } from './support/service.js';

/**
 * When a receipt is made (docs/api.md, "Receipts"): by default when it is first asked for, so that a
 * sale whose receipt nobody opens costs no receipt; with RECEIPTS_AHEAD=true by a job as soon as the
 * order is final. Both over the wire, through a real sale.
 */
async function receipt(svc: TestService, token: string, id: string) {
  const res = await fetch(`${svc.url}${p}/orders/${id}/receipt`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, etag: res.headers.get('etag'), bytes: Buffer.from(await res.arrayBuffer()) };
}

const stored = async (svc: TestService, id: string) => (await svc.sql<{ etag: string }[]>`select etag from receipts where order_id = ${id}`).map((r) => r.etag);

t.test('by default a receipt is made when first asked for, and kept', async (t) => {
  const svc = await startTestService(t);
  const fx = await seedCheckout(svc);
  const orders = await svc.token(['ordersRead']);
  const id = await checkoutIn(svc, fx, 's1', 'successful');
  // Everything the sale wrote published (the outbox empty) and every job of it done.
  const jsm = await jetstreamManager(svc.nc);
  await eventually('the sale\'s events and jobs to be published', async () => ((await svc.sql`select from outbox`).length === 0 ? true : undefined));
  const consumer = await jsm.consumers.info('JOBS', 'receipt');
  // consumer_seq counts what this consumer was handed; stream_seq may name a message of the stream it only passed over.
  t.equal(consumer.delivered.consumer_seq, 0, 'no receipt job was published');
  t.same(await stored(svc, id), [], 'nothing made before anyone asked');

  const first = await receipt(svc, orders, id);
  t.equal(first.status, 200);
  t.equal(first.bytes.subarray(0, 5).toString(), '%PDF-', 'the request makes it');
  t.same(await stored(svc, id), [first.etag], 'and keeps it');
  const again = await receipt(svc, orders, id);
  t.equal(again.etag, first.etag, 'the next request answers the one kept');
  t.same(again.bytes, first.bytes);
});

t.test('with RECEIPTS_AHEAD=true a final order\'s receipt is made by a job before anyone asks', async (t) => {
  const svc = await startTestService(t, { env: { RECEIPTS_AHEAD: 'true' } });
  const fx = await seedCheckout(svc);
  const orders = await svc.token(['ordersRead']);
  const id = await checkoutIn(svc, fx, 's1', 'successful');
  const failed = await checkoutIn(svc, fx, 's1', 'failed');
  const [made] = await eventually('the receipt to be made ahead', async () => {
    const etags = await stored(svc, id);
    return etags.length ? etags : undefined;
  });
  const res = await receipt(svc, orders, id);
  t.equal(res.status, 200);
  t.equal(res.etag, made, 'the request answers the receipt the job made');
  t.same(await stored(svc, failed), [], 'none for a sale whose payment failed');
});
