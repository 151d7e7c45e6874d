import t from 'tap';
import { p, seedCheckout, watchEvents } from './support/checkout.js';
import { checkoutIn, closingTokens, closingWithLogs, downloadLog, eventually, getClosing, postJob, runJob } from './support/closing.js';
import { validateDsfinvk } from './support/dsfinvk-validator.js';
import { startTestService } from './support/service.js';

/**
 * Closing work that fails: the database refuses what the closing actor writes (a trigger raising an
 * error, installed by the test), as a full disk or a broken constraint would. Attempts are few and
 * quick here (CLOSING_MAX_ATTEMPTS, CLOSING_RETRY_SCHEDULE_MS), so a job reaches its last one.
 */
const MaxAttempts = 3;
const svc = await startTestService(t, {
  env: { CLOSING_SCHEDULER_ENABLED: 'false', CLOSING_MAX_ATTEMPTS: String(MaxAttempts), CLOSING_RETRY_SCHEDULE_MS: '400' },
});
const fx = await seedCheckout(svc);
const tokens = await closingTokens(svc);
const events = await watchEvents(t, svc);
const admin = await svc.token(['shopsWrite']);
for (const id of ['doomed', 'flaky']) await svc.request('POST', `${p}/shops`, { token: admin, body: { id, name: `Shop ${id}` } });

// Every closing of the shop `doomed` is refused, and each refusal counted.
await svc.sql.unsafe(`
  create sequence refused_closings;
  create function refuse_doomed_closing() returns trigger language plpgsql as $$
  begin
    if new.shop_id = 'doomed' then
      perform nextval('refused_closings');
      raise exception 'the disk is full';
    end if;
    return new;
  end $$;
  create trigger refuse_doomed_closing before insert on closings for each row execute function refuse_doomed_closing();

  create sequence refused_log_chunks;
  create sequence failed_log_runs;
  create function refuse_log_chunks() returns trigger language plpgsql as $$
  begin
    -- The file's own chunks (part 0) of the first two runs: the staged members are written by then.
    -- Each refusal (which fails its run) is counted.
    if new.part = 0 and nextval('refused_log_chunks') <= 2 then
      perform nextval('failed_log_runs');
      raise exception 'the disk is full';
    end if;
    return new;
  end $$;
`);

const count = async (query: string): Promise<number> => Number((await svc.sql.unsafe<{ n: string }[]>(query))[0]!.n);

t.test('a report job whose closing cannot be made is tried again, then failed with a reason; the shop closes as before once it can', async (t) => {
  const order = await checkoutIn(svc, fx, 'doomed', 'successful');
  const posted = await postJob(svc, tokens.both, { shopID: 'doomed', deviceID: 'tablet' });
  t.equal(posted.status, 202);
  const failed = await eventually('the job to fail', async () => {
    const res = await svc.request('GET', `${p}/closings/jobs/${posted.body.id}`, { token: tokens.read });
    return res.body.state === 'pending' ? undefined : res.body;
  });
  t.match(failed, { id: posted.body.id, state: 'failed', shopID: 'doomed', sequenceNumber: null, reason: 'the closing could not be made; see the service logs' });
  t.notOk(failed.reason.includes('disk'), 'the reason shows no internals');
  t.ok(failed.finishedAt, 'with the time it ended');
  t.notOk(failed.links.closing, 'and no closing link');
  t.equal(await count('select last_value as n from refused_closings'), MaxAttempts, 'every attempt was made, and no more');

  const listed = await svc.request('GET', `${p}/closings?shopID=doomed`, { token: tokens.read });
  t.equal(listed.body.pagination.totalItems, 0, 'no closing was stored');
  t.equal(await count("select count(*) as n from closing_sequences where shop_id = 'doomed' and last_number > 0"), 0, "the shop's sequence did not move");

  await events.settle();
  const jobEvents = events.events.filter((e) => e.domain === 'closing' && e.payload.job?.id === posted.body.id).map((e) => e.event);
  t.same(jobEvents, ['jobPending', 'jobFailed'], 'pending, then failed');

  await svc.sql.unsafe('drop trigger refuse_doomed_closing on closings');
  const job = await runJob(svc, tokens, { shopID: 'doomed' });
  t.equal(job.state, 'done');
  t.equal(job.sequenceNumber, 1, 'the first closing of the shop is number 1: a failed job takes no number');
  const closing = (await getClosing(svc, tokens.read, 'doomed', 1)).body;
  t.same(closing.orders.map((o: { id: string }) => o.id), [order], 'and it takes the order the failed job left');
  const again = await svc.request('GET', `${p}/closings/jobs/${posted.body.id}`, { token: tokens.read });
  t.equal(again.body.state, 'failed', 'a failed job stays failed');
});

t.test('a log whose writing fails is never served half-written; a later attempt writes it whole and leaves no stray chunks', async (t) => {
  await svc.sql.unsafe('create trigger refuse_log_chunks before insert on closing_log_chunks for each row execute function refuse_log_chunks()');
  t.teardown(() => svc.sql.unsafe('drop trigger if exists refuse_log_chunks on closing_log_chunks'));
  await checkoutIn(svc, fx, 'flaky', 'successful');
  await checkoutIn(svc, fx, 'flaky', 'successful', { paymentMethod: 'girocard' });
  const job = await runJob(svc, tokens, { shopID: 'flaky', formats: ['dsfinvk_2023_03'] });
  t.equal(job.state, 'done', 'the closing is made; only its log waits');

  // Ask for the log all the while: until it is present it is a 404, never part of a file.
  const answers = new Set<number>();
  const logId = (await getClosing(svc, tokens.read, 'flaky', job.sequenceNumber)).body.logs[0].id;
  const closing = await eventually('the log to be written', async () => {
    // The download first: a log never goes back to not_present, so one still not present after it
    // was not present for the download either.
    const download = await downloadLog(svc, tokens.read, `${p}/closings/logs/${logId}`);
    const res = await getClosing(svc, tokens.read, 'flaky', job.sequenceNumber);
    if (res.body.logs[0].state === 'present') return res.body;
    answers.add(download.status);
    return undefined;
  });
  t.equal(await count('select last_value as n from failed_log_runs'), 2, 'two runs failed on the way');
  t.same([...answers], [404], 'while it was not written, the log was not found');

  const log = closing.logs[0];
  const done = await closingWithLogs(svc, tokens.read, 'flaky', job.sequenceNumber);
  const zip = await downloadLog(svc, tokens.read, done.links.dsfinvk_2023_03.href);
  t.equal(zip.status, 200);
  t.same(validateDsfinvk(zip.bytes, done).problems, [], 'the file is whole and passes the checks');
  const [chunks] = await svc.sql<{ runs: number; staged: number }[]>`
    select count(distinct generation)::int as runs, count(*) filter (where part > 0)::int as staged from closing_log_chunks where log_id = ${log.id}`;
  t.same(chunks, { runs: 1, staged: 0 }, 'only the chunks of the run that made the file remain');
});
