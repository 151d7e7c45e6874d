import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { claimSweep } from '../actors/webhooks/sql.js';
import { webhookLogSweepJob } from '../subjects/integrations.js';
import { p } from './support/checkout.js';
import { startTestService } from './support/service.js';

/**
 * The delivery log (docs/integrators.md, "Deliveries"): paged by key, newest first, every attempt
 * once however the pages are walked and whatever is added meanwhile; a page after the first only by
 * its link; attempts older than WEBHOOK_LOG_DAYS deleted by the hourly sweep, claimed once.
 */
const svc = await startTestService(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_LOG_DAYS: '30', WEBHOOK_SENDERS: '0' } });
const owner = await svc.token(['projectsWrite']);
const made = await svc.request('POST', `${p}/integrations`, { token: owner, body: { name: 'log', kind: 'webhook', url: 'http://127.0.0.1:9/hooks' } });
const hook = made.body as { id: string };
const project = p.slice(1);

/**
 * Attempts as the sender leaves them: 40 events, each with its latest attempt in webhook_messages
 * and the ones before in webhook_attempts; some at the very same microsecond (ties the key must
 * order), some older than the 30 days kept.
 */
async function seed(): Promise<void> {
  await svc.sql`
    insert into webhook_messages (project, integration_id, event_id, event_type, subject, payload, written_at, attempts, delivered_at,
                                  last_attempt_at, last_status, last_duration_ms, last_response)
    select ${project}, ${hook.id}, 'evt-' || lpad(i::text, 3, '0'), 'order.final', 'events.x', '{}', now() - i * interval '1 day', 1 + i % 3, now(),
           case when i % 5 = 0 then timestamptz '2026-01-01 00:00:00.123456+00' + interval '1 minute' * (i / 10) else now() - i * interval '1 day' end,
           '200', 5, 'ok'
    from generate_series(1, 40) i`;
  await svc.sql`
    insert into webhook_attempts (project, integration_id, event_id, event_type, attempt, at, status, duration_ms, response)
    select m.project, m.integration_id, m.event_id, m.event_type, a, m.last_attempt_at - (m.attempts - a) * interval '1 hour', '503', 7, 'down'
    from webhook_messages m cross join generate_series(1, 2) a
    where m.integration_id = ${hook.id} and a < m.attempts`;
}
await seed();

interface Listed {
  deliveries: Array<{ eventId: string; attempt: number; at: string }>;
  pagination: { page: number; perPage: number; totalPages: number; totalItems: number };
  links: { self: { href: string }; nextPage?: { href: string } };
}
const get = async (path: string) => svc.request('GET', path, { token: owner });

async function walk(perPage: number): Promise<Listed['deliveries']> {
  const all: Listed['deliveries'] = [];
  let path: string | undefined = `${p}/integrations/${hook.id}/deliveries?perPage=${perPage}`;
  for (let pages = 0; path && pages < 100; pages++) {
    const res = await get(path);
    if (res.status !== 200) throw new Error(res.text);
    const body = res.body as Listed;
    t.equal(body.pagination.page, pages, 'each page says which it is');
    all.push(...body.deliveries);
    path = body.links.nextPage?.href;
  }
  return all;
}

const expected = async () =>
  (
    await svc.sql<{ event_id: string; attempt: number }[]>`
      select event_id, attempt from (
        select event_id, attempt, at from webhook_attempts where integration_id = ${hook.id}
        union all select event_id, attempts, last_attempt_at from webhook_messages where integration_id = ${hook.id}
      ) a order by at desc, event_id desc, attempt desc`
  ).map((r) => `${r.event_id}#${r.attempt}`);

t.test('walked page by page by its links, the log holds every attempt once, newest first, ties in a fixed order', async (t) => {
  const want = await expected();
  for (const perPage of [7, 13, 1000]) {
    const got = (await walk(perPage)).map((d) => `${d.eventId}#${d.attempt}`);
    t.same(got, want, `${perPage} a page: every attempt once, in order`);
  }
  const first = (await get(`${p}/integrations/${hook.id}/deliveries?perPage=7`)).body as Listed;
  t.match(first.pagination, { page: 0, perPage: 7, totalItems: want.length, totalPages: Math.ceil(want.length / 7) });
  t.match(first.links.nextPage?.href, /page=1&after=[\w-]+/, 'the next page\'s link carries its key');
});

t.test('attempts made while someone reads do not shift the pages after the first', async (t) => {
  const first = (await get(`${p}/integrations/${hook.id}/deliveries?perPage=10`)).body as Listed;
  const second = (await get(first.links.nextPage!.href)).body as Listed;
  await svc.sql`
    insert into webhook_attempts (project, integration_id, event_id, event_type, attempt, at, status, duration_ms, response)
    select ${project}, ${hook.id}, 'evt-new-' || i, 'order.final', 1, now(), '500', 1, 'new' from generate_series(1, 5) i`;
  const again = (await get(first.links.nextPage!.href)).body as Listed;
  t.same(again.deliveries, second.deliveries, 'the second page is the same page');
  t.equal(again.pagination.totalItems, second.pagination.totalItems + 5, 'the count has the new ones');
  await svc.sql`delete from webhook_attempts where event_id like 'evt-new-%'`;
});

t.test('a page after the first without its key, or a key that is not one, is refused at `after`', async (t) => {
  const bare = await get(`${p}/integrations/${hook.id}/deliveries?page=2&perPage=10`);
  t.equal(bare.status, 400);
  t.match(bare.body, { type: 'bad_request', message: /links\.nextPage/, details: [{ path: 'after' }] });
  for (const after of ['nonsense', Buffer.from('["2026-01-01","e",1]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url'), 'x'.repeat(500)]) {
    const res = await get(`${p}/integrations/${hook.id}/deliveries?page=1&after=${after}`);
    t.equal(res.status, 400, after.slice(0, 40));
    t.match(res.body.details, [{ path: 'after' }]);
  }
});

t.test('the hourly sweep is claimed once and deletes what is older than the days kept, and nothing else', async (t) => {
  const old = await svc.sql<{ n: number }[]>`
    select (select count(*) from webhook_attempts where integration_id = ${hook.id} and at < now() - interval '30 days')
         + (select count(*) from webhook_messages where integration_id = ${hook.id} and last_attempt_at < now() - interval '30 days') as n`;
  t.ok(Number(old[0]!.n) > 10, 'there is something to sweep');
  const young = (await expected()).length - Number(old[0]!.n);
  // An hour the service's own hourly tick (at :07) never claims: a run across hh:07 would find this
  // hour taken. The sweep deletes by the days kept back from now, whichever hour it is for.
  const hour = new Date('2001-01-01T07:00:00Z');
  // Two worker processes ticking at the same hour: one claim.
  const claims = await Promise.all([claimSweep(svc.sql, hour, webhookLogSweepJob(hour)), claimSweep(svc.sql, hour, webhookLogSweepJob(hour))]);
  t.same(claims.sort(), [false, true], 'the hour is claimed once');
  for (let waited = 0; waited < 15_000; waited += 100) {
    const [left] = await svc.sql<{ n: number }[]>`
      select (select count(*) from webhook_attempts where integration_id = ${hook.id} and at < now() - interval '30 days')::int
           + (select count(*) from webhook_messages where integration_id = ${hook.id} and last_attempt_at < now() - interval '30 days')::int as n`;
    if (left!.n === 0) break;
    await sleep(100);
  }
  const after = await expected();
  t.equal(after.length, young, 'what is younger than 30 days stays');
  const listed = (await get(`${p}/integrations/${hook.id}/deliveries?perPage=1000`)).body as Listed;
  t.equal(listed.pagination.totalItems, young, 'and is what the log lists');
  t.ok(listed.deliveries.every((d) => Date.parse(d.at) > Date.now() - 30 * 86_400_000), 'nothing older');
});
