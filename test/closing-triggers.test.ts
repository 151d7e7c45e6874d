import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import postgres from 'postgres';
import t from 'tap';
import { createScheduleTrigger, type ScheduleTrigger } from '../actors/closing-schedules/trigger.js';
import { createLogger } from '../src/logger.js';
import { closingWorkSubject, type ClosingWork } from '../subjects/closings.js';
import { p, seedCheckout } from './support/checkout.js';
import { checkoutIn, closingTokens, eventually, getClosing, storedClosings } from './support/closing.js';
import { startMoreWorkers, startTestService } from './support/service.js';

/**
 * Schedule triggers against the real database and NATS, with an injected clock: the trigger is
 * built as the service builds it and ticked at the times a test needs; the closings are made by
 * the running service's workers.
 */
const svc = await startTestService(t, { env: { CLOSING_SCHEDULER_ENABLED: 'false' } });
const fx = await seedCheckout(svc);
const tokens = await closingTokens(svc);
const log = createLogger({ level: 'silent' });
const admin = await svc.token(['shopsWrite']);
for (const id of ['dst', 'late', 'many']) await svc.request('POST', `${p}/shops`, { token: admin, body: { id, name: `Shop ${id}` } });

function trigger(): ScheduleTrigger {
  const sql = postgres(svc.databaseUrl, { max: 2, onnotice: () => {} });
  t.teardown(() => sql.end());
  return createScheduleTrigger({ sql, log });
}

async function schedule(body: object): Promise<number> {
  const res = await svc.request('POST', `${p}/closings/schedules`, { token: tokens.write, body });
  if (res.status !== 201) throw new Error(`schedule refused: ${res.status} ${res.text}`);
  return res.body.id;
}

const minute = 60_000;
const day = 24 * 60 * minute;
/**
 * The fire times a test ticks at lie in the next calendar year: always after the schedule is made
 * (a schedule fires nothing before it existed), and in a known season (December is CET: 17:00 in
 * Berlin is 16:00 UTC; the DST changes are March's and October's last Sundays).
 */
const year = new Date().getUTCFullYear() + 1;
const iso = (ms: number) => new Date(ms).toISOString();
const lastSunday = (month: number) => {
  const last = Date.UTC(year, month + 1, 0);
  return last - new Date(last).getUTCDay() * day;
};
const december = (date: number, hour: number, minutes = 0) => Date.UTC(year, 11, date, hour, minutes);
const fireTimes = (claims: ClosingWork[]) => claims.map((w) => (w.type === 'trigger' ? w.fireAt : ''));
/** The claims of one schedule: a tick claims what is due of every schedule, the other tests' too. */
const claimsOf = (scheduleID: number, claims: ClosingWork[]) => claims.filter((w) => w.type === 'trigger' && w.scheduleID === scheduleID);

/** Ticks every minute from `from` to `to` (inclusive); answers what each tick claimed, by tick time. */
async function tickEveryMinute(tr: ScheduleTrigger, from: string, to: string): Promise<Array<[string, string[]]>> {
  const claimed: Array<[string, string[]]> = [];
  for (let at = Date.parse(from); at <= Date.parse(to); at += minute) {
    const claims = await tr.tick(new Date(at));
    if (claims.length) claimed.push([new Date(at).toISOString(), fireTimes(claims)]);
  }
  return claimed;
}

async function closingsOf(shop: string, count: number) {
  return eventually(`${count} closings of ${shop}`, async () => {
    const rows = await storedClosings(svc.sql, shop);
    return rows.length >= count ? rows : undefined;
  });
}

t.test('Europe/Berlin across both DST changes: 02:30 that does not exist fires at 03:00, 02:30 that happens twice fires once', async (t) => {
  const id = await schedule({ shop: 'dst', days: ['Sunday'], hour: 2, minute: 30, location: 'Europe/Berlin', mode: 'includeUntilScheduled' });
  const tr = trigger();
  // The first tick catches up what passed since the schedule was made: one fire time, the latest.
  const spring = lastSunday(2); // midnight UTC of the Sunday clocks go from 02:00 CET to 03:00 CEST
  const autumn = lastSunday(9); // and back from 03:00 CEST to 02:00 CET
  const springFire = iso(spring + 60 * minute);
  const autumnFire = iso(autumn + 30 * minute);
  t.same(fireTimes(await tr.tick(new Date(spring - day + 12 * 60 * minute))), [iso(spring - 7 * day + 90 * minute)], 'catch-up: the Sunday before, 02:30 CET');

  const springTicks = await tickEveryMinute(tr, iso(spring - 60 * minute), iso(spring + 3 * 60 * minute));
  t.same(springTicks, [[springFire, [springFire]]], 'spring forward: once, at 03:00 CEST (01:00 UTC)');

  t.same(fireTimes(await tr.tick(new Date(autumn - day + 12 * 60 * minute))), [iso(autumn - 7 * day + 30 * minute)], 'catch-up to the Sunday before');
  const autumnTicks = await tickEveryMinute(tr, iso(autumn - 2 * 60 * minute), iso(autumn + 3 * 60 * minute));
  t.same(autumnTicks, [[autumnFire, [autumnFire]]], 'fall back: once, at the first 02:30 (CEST, 00:30 UTC), not at the second');

  const rows = await closingsOf('dst', 4);
  t.same(
    rows.map((r) => r.trigger_key),
    [iso(spring - 7 * day + 90 * minute), springFire, iso(autumn - 7 * day + 30 * minute), autumnFire].map((at) => `${id}:${at}`),
    'one closing per fire time, in order',
  );
  const closing = (await getClosing(svc, tokens.read, 'dst', 2)).body;
  t.match(closing.origin, { type: 'schedule', scheduleID: id, scheduledAt: springFire });
  t.equal(closing.cutOffAt, springFire, 'includeUntilScheduled: cut off at the scheduled time');
});

t.test('after a downtime the next tick makes one closing for everything missed, and repeated ticks make none', async (t) => {
  const id = await schedule({ shop: 'late', days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'], hour: 17, minute: 0, location: 'Europe/Berlin', mode: 'includeUntilScheduled' });
  const tr = trigger();
  const first = await checkoutIn(svc, fx, 'late', 'successful');
  const firstFire = iso(december(1, 16));
  const lastFire = iso(december(4, 16));
  t.same(fireTimes(claimsOf(id, await tr.tick(new Date(december(1, 16, 5))))), [firstFire]);
  await closingsOf('late', 1);
  const missed = [await checkoutIn(svc, fx, 'late', 'successful'), await checkoutIn(svc, fx, 'late', 'successful')];
  // Every worker was down from Dec 1 to Dec 4: three fire times passed.
  t.same(fireTimes(claimsOf(id, await tr.tick(new Date(december(4, 18))))), [lastFire], 'one trigger, for the latest fire time');
  t.same(claimsOf(id, await tr.tick(new Date(december(4, 18)))), [], 'the same tick again claims nothing');
  t.same(claimsOf(id, await tr.tick(new Date(december(4, 18, 1)))), [], 'nor does the next minute');
  const rows = await closingsOf('late', 2);
  t.same(rows.map((r) => r.trigger_key), [`${id}:${firstFire}`, `${id}:${lastFire}`]);
  t.same((await getClosing(svc, tokens.read, 'late', 1)).body.orders.map((o: any) => o.id), [first]);
  t.same((await getClosing(svc, tokens.read, 'late', 2)).body.orders.map((o: any) => o.id), missed, 'the second closing covers what was missed');
  const n = (await svc.sql<{ n: number }[]>`select count(*)::int as n from closing_triggers where schedule_id = ${id}`)[0]!.n;
  t.equal(n, 2, 'two claims');
});

t.test('three worker sides ticking at once close each fire time exactly once', async (t) => {
  // Their own schedulers stay off: they would tick with the real clock beside the test's triggers.
  await startMoreWorkers(t, svc, { CLOSING_SCHEDULER_ENABLED: 'false' });
  await startMoreWorkers(t, svc, { CLOSING_SCHEDULER_ENABLED: 'false' });
  const id = await schedule({ shop: 'many', days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'], hour: 22, minute: 0, location: 'Europe/Berlin' });
  const triggers = [trigger(), trigger(), trigger()];
  const claimed: string[] = [];
  for (let date = 1; date <= 6; date++) {
    await checkoutIn(svc, fx, 'many', 'successful');
    const at = new Date(december(date, 21) + 30_000);
    const ofThis = (claims: ClosingWork[][]) => claimsOf(id, claims.flat());
    const results = ofThis(await Promise.all(triggers.map((tr) => tr.tick(at))));
    t.equal(results.length, 1, `day ${date}: one side claimed the fire time`);
    claimed.push(...fireTimes(results));
    // Everyone ticks the next minute too; nothing is due.
    t.same(ofThis(await Promise.all(triggers.map((tr) => tr.tick(new Date(at.getTime() + minute))))), []);
    await closingsOf('many', date);
  }
  const rows = await closingsOf('many', 6);
  t.same(rows.map((r) => r.trigger_key), claimed.map((at) => `${id}:${at}`), 'one closing per fire time');
  t.same(rows.map((r) => [Number(r.first_order_sequence_number), Number(r.last_order_sequence_number)]), [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6]]);

  // A trigger delivered again (as after a relay crash outside the duplicate window) closes nothing new.
  const work: ClosingWork = { type: 'trigger', project: 'acme-test01', shopID: 'many', scheduleID: id, fireAt: claimed[5]!, mode: 'includeUntilExecution', includeAllStates: false, formats: [], location: 'Europe/Berlin' };
  const published = await jetstream(svc.nc).publish(closingWorkSubject(work), JSON.stringify(work), { msgID: 'a-second-delivery' });
  const jsm = await jetstreamManager(svc.nc);
  await eventually('the second delivery to be consumed', async () => {
    const [outbox] = await svc.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
    const info = await jsm.consumers.info('JOBS', 'closing');
    const consumed = info.delivered.stream_seq >= published.seq && info.num_pending === 0 && info.num_ack_pending === 0;
    return outbox!.n === 0 && consumed ? true : undefined;
  });
  t.equal((await storedClosings(svc.sql, 'many')).length, 6, 'still six closings');
});
