import t from 'tap';
import { p } from './support/checkout.js';
import { closingTokens } from './support/closing.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * Pages of the closing list larger than a part (a part travels in one message): the parts follow
 * each other by position, so a page is the same closings whether it is read whole or in smaller
 * pages, newest first, each once.
 */
const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
const tokens = await closingTokens(svc);

// 2 × 300 closings made three at a time: many share their creation time, within a shop and across both.
await svc.sql`
  insert into closings (
    project, shop_id, sequence_number, first_order_sequence_number, last_order_sequence_number, order_count, include_all_states,
    created_at, cut_off_at, zone, currency, shop, tax_shares, tax_rates, share_by_payment_method, total, company, origin
  )
  select ${TestProject}, shop, n, 1, 0, 0, false, timestamptz '2026-11-01T00:00:00Z' + (n / 3) * interval '1 second',
         timestamptz '2026-11-01T00:00:00Z' + (n / 3) * interval '1 second', 'UTC', 'EUR',
         json_build_object('name', shop, 'externalID', '', 'street', '', 'zip', '', 'city', '', 'state', '', 'country', '', 'phone', '', 'email', ''), '[]', '{}', '[]', 0,
         '{"companyName": "", "taxNumber": "", "vatID": "", "companyAdress": {"street": "", "zip": "", "city": "", "country": ""}}',
         json_build_object('type', 'job', 'jobID', gen_random_uuid(), 'deviceID', '', 'skippedCashCount', false)
  from generate_series(1, 300) n, unnest(array['bulk-a', 'bulk-b']) shop`;

const keyOf = (c: { shopID: string; sequenceNumber: number }) => `${c.shopID}/${c.sequenceNumber}`;

t.test('a page of many parts lists every closing once, newest first, as the smaller pages do', async (t) => {
  const whole = await svc.request('GET', `${p}/closings?perPage=600`, { token: tokens.read });
  t.equal(whole.status, 200);
  const keys: string[] = whole.body.closings.map(keyOf);
  t.equal(keys.length, 600);
  t.equal(new Set(keys).size, 600, 'each once');
  const order = whole.body.closings.map((c: { createdAt: string; shopID: string; sequenceNumber: number }) => [c.createdAt, c.shopID, -c.sequenceNumber]);
  const sorted = [...order].sort((a, b) => (a[0] !== b[0] ? (a[0] < b[0] ? 1 : -1) : a[1] !== b[1] ? (a[1] < b[1] ? -1 : 1) : a[2] - b[2]));
  t.same(order, sorted, 'newest first, then by shop, then by number (highest first)');

  const paged: string[] = [];
  for (let page = 0; page < 4; page++) {
    const res = await svc.request('GET', `${p}/closings?perPage=150&page=${page}`, { token: tokens.read });
    paged.push(...res.body.closings.map(keyOf));
  }
  t.same(paged, keys, 'the same as four pages of 150');

  const ofShop = await svc.request('GET', `${p}/closings?shopID=bulk-b&perPage=250&page=1`, { token: tokens.read });
  t.same(ofShop.body.closings.map(keyOf), Array.from({ length: 50 }, (_, i) => `bulk-b/${50 - i}`), "a shop's second page: its 50 oldest");
  t.same(ofShop.body.pagination, { page: 1, perPage: 250, totalPages: 2, totalItems: 300 });
});
