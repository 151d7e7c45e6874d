import fc from 'fast-check';
import t from 'tap';
import { p, seedCheckout } from './support/checkout.js';
import { checkoutIn, closingTokens, eventually, getClosing, postJob, runJob } from './support/closing.js';
import { startMoreWorkers, startTestService } from './support/service.js';

/**
 * Orders finalized while closings run, on two worker sides: whatever interleaving, every final
 * order is in exactly one closing, the closings of a shop are numbered 1, 2, 3, ... and cover
 * contiguous ranges of its order numbers, and each closing's total is the sum of its orders.
 */
const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
await startMoreWorkers(t, svc);
const fx = await seedCheckout(svc);
const tokens = await closingTokens(svc);
const admin = await svc.token(['shopsWrite']);
const orders = await svc.token(['ordersRead']);

type End = 'successful' | 'failed' | 'aborted';
const Step = fc.record({
  checkouts: fc.array(fc.constantFrom<End>('successful', 'successful', 'failed', 'aborted'), { maxLength: 4 }),
  jobs: fc.integer({ min: 0, max: 2 }),
});

let run = 0;

t.test('every final order is in exactly one closing, closings are gapless, each total is the sum of its orders', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(Step, { minLength: 1, maxLength: 4 }), async (steps) => {
      const shop = `prop-${++run}`;
      await svc.request('POST', `${p}/shops`, { token: admin, body: { id: shop, name: shop } });
      // Each step: its checkouts and its report jobs at the same time.
      for (const step of steps) {
        const jobs = Array.from({ length: step.jobs }, () => postJob(svc, tokens.both, { shopID: shop }));
        await Promise.all([...step.checkouts.map((end) => checkoutIn(svc, fx, shop, end)), ...jobs]);
      }
      const last = await runJob(svc, tokens, { shopID: shop });
      // Jobs of the last step may still be running: the closing after all of them is the last one.
      const count = await waitForJobs(shop, last.sequenceNumber);

      const listed = await svc.request('GET', `${p}/orders?shopID=${shop}&includeAllStates=true&perPage=1000`, { token: orders });
      const all: Array<{ id: string; state: string; sequenceNumber: number; paidAmount: number }> = listed.body.resources;
      const closings: any[] = [];
      for (let seq = 1; seq <= count; seq++) {
        const res = await getClosing(svc, tokens.read, shop, seq);
        if (res.status !== 200) throw new Error(`closing ${shop}/${seq}: ${res.status}`);
        closings.push(res.body);
      }
      t.same(closings.map((c) => c.sequenceNumber), closings.map((_, i) => i + 1), 'closings 1..n');
      let next = 1;
      for (const c of closings) {
        if (c.firstOrderSequenceNumber !== next) throw new Error(`closing ${c.sequenceNumber} starts at ${c.firstOrderSequenceNumber}, not ${next}`);
        next = c.lastOrderSequenceNumber + 1;
        const sum = c.orders.reduce((s: number, o: { paidAmount: number }) => s + o.paidAmount, 0);
        if (c.total !== sum) throw new Error(`closing ${c.sequenceNumber}: total ${c.total} ≠ Σ orders ${sum}`);
        if (c.orderCount !== c.orders.length) throw new Error(`closing ${c.sequenceNumber}: orderCount ${c.orderCount} ≠ ${c.orders.length}`);
        if (c.taxShares.reduce((s: number, x: { total: number }) => s + x.total, 0) !== c.total) throw new Error('the tax shares do not add up to the total');
      }
      t.equal(next - 1, all.length, 'the closings cover every order number');
      const inClosings = closings.flatMap((c) => c.orders.map((o: { id: string }) => o.id));
      const finals = all.filter((o) => o.state === 'final').map((o) => o.id);
      t.same([...inClosings].sort(), [...finals].sort(), 'every final order once, no other order');
      t.equal(new Set(inClosings).size, inClosings.length, 'no order twice');
    }),
    { numRuns: 8 },
  );
});

/** Waits until no report job of the shop is pending; answers its number of closings. */
async function waitForJobs(shop: string, atLeast: number): Promise<number> {
  return eventually(`the report jobs of ${shop} to finish`, async () => {
    const [row] = await svc.sql<{ pending: number; closings: number }[]>`
      select (select count(*)::int from closing_jobs where shop_id = ${shop} and state = 'pending') as pending,
             (select count(*)::int from closings where shop_id = ${shop}) as closings`;
    return row!.pending === 0 && row!.closings >= atLeast ? row!.closings : undefined;
  });
}
