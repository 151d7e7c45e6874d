import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { DeliveryKey as ListKey, WebhookEvent } from '../../subjects/integrations.js';
import { outboxRows, type OutboxEvent } from '../outbox/sql.js';

type Db = Sql | TransactionSql;

/** What was done of an event for a webhook so far. */
export interface EventState {
  /** Attempts made so far (0: none). */
  attempts: number;
  /** Milliseconds until the event may be tried again; 0 or less, or null: now. */
  message_wait_ms: number | null;
  delivered: boolean;
  given_up: boolean;
}

/** An event no attempt was made of yet. */
export const NotTried: EventState = { attempts: 0, message_wait_ms: null, delivered: false, given_up: false };

/** A delivery job's webhook, and what was done of the events the batch's jobs carry for it. */
export interface WebhookState {
  project: string;
  id: string;
  state: 'active' | 'disabled';
  url: string;
  secret: string;
  /** The secret before a rotation, while it still signs. */
  previous_secret: string | null;
  failed_attempts: number;
  /** Milliseconds until the webhook may be tried again (its receiver failed), 0 or less: now. */
  integration_wait_ms: number | null;
  /** The events tried before, by event id (a job's first delivery finds none). */
  tried: Map<string, EventState>;
}

/** How a batch's webhooks are keyed: `<project>/<id>`. */
export function webhookKey(project: string, integrationID: string): string {
  return `${project}/${integrationID}`;
}

/**
 * A batch's webhooks, by webhookKey (one deleted since has none), each with what was done of
 * the events the batch carries for it: one statement for the batch. Each row looked up by its key
 * (lateral subqueries that offset 0 keeps from becoming joins, which a planner that guesses a JSON
 * recordset at 100 rows ran as scans of whole tables).
 */
export async function readDeliveries(sql: Sql, webhooks: ReadonlyArray<{ project: string; integrationID: string; eventIDs: readonly string[] }>): Promise<Map<string, WebhookState>> {
  const input = JSON.stringify(webhooks.map((w) => ({ project: w.project, id: w.integrationID, events: w.eventIDs })));
  const rows = await sql<Array<Omit<WebhookState, 'tried'> & { tried: Array<EventState & { event_id: string }> }>>`
    select i.project, i.id, i.state, i.url, i.secret,
           case when i.previous_secret_until > now() then i.previous_secret end as previous_secret,
           i.failed_attempts, (extract(epoch from i.retry_at - now()) * 1000)::int as integration_wait_ms,
           (select coalesce(json_agg(json_build_object(
                     'event_id', m.event_id, 'attempts', m.attempts, 'message_wait_ms', (extract(epoch from m.next_attempt_at - now()) * 1000)::int,
                     'delivered', m.delivered_at is not null, 'given_up', m.failed_at is not null)), '[]'::json)
            from json_array_elements_text(w.events) as e(event_id)
            cross join lateral (select * from webhook_messages m where m.project = i.project and m.integration_id = i.id and m.event_id = e.event_id offset 0) m) as tried
    from json_to_recordset(${input}::text::json) as w(project text, id text, events json)
    cross join lateral (select * from integrations i where i.project = w.project and i.id = w.id and i.kind = 'webhook' offset 0) i`;
  return new Map(rows.map(({ tried, ...row }) => [webhookKey(row.project, row.id), { ...row, tried: new Map(tried.map(({ event_id, ...state }) => [event_id, state])) }]));
}

export interface DeliveryKey {
  project: string;
  integrationID: string;
  eventID: string;
}

/** An attempt made, with what follows for its event. */
export interface AttemptRecord extends DeliveryKey {
  eventType: string;
  subject: string;
  /** The event as sent (kept for a redelivery by hand). */
  payload: string;
  writtenAt: string;
  attempt: number;
  status: string;
  durationMs: number;
  response: string;
  delivered: boolean;
  /** Delivered, but after WEBHOOK_SLOW_MS: for the webhook's back-off it counts as a failure. */
  slow: boolean;
  /** No attempt follows (the last one failed). */
  givenUp: boolean;
  /** When the event may be tried again, ms from now (a failed attempt that is not the last). */
  retryInMs: number | null;
}

/**
 * Records attempts in one statement: each attempt's row, its event's state, and each integration's:
 * a delivery in time resets its failures; attempts that all failed or were slow (a 2xx after
 * WEBHOOK_SLOW_MS: the event is delivered, the receiver is not well) count one more failure in a row (unless
 * it is already waiting for its next try: what failed meanwhile was under way before), set when it
 * may be tried again (`integrationDelaysMs` by the count; the last repeats), and disable it at
 * `maxAttempts` with the reason. Answers the integrations disabled now.
 */
export async function recordAttempts(sql: Sql, attempts: readonly AttemptRecord[], integrationDelaysMs: readonly number[], maxAttempts: number): Promise<string[]> {
  if (!attempts.length) return [];
  // The batch as one JSON text: JSON.stringify escapes an event's text natively, faster than the driver's array escaping.
  const input = attempts.map((a) => ({
    project: a.project,
    integration_id: a.integrationID,
    event_id: a.eventID,
    event_type: a.eventType,
    subject: a.subject,
    payload: a.payload,
    written_at: a.writtenAt,
    attempt: a.attempt,
    status: a.status,
    duration_ms: a.durationMs,
    response: a.response,
    delivered: a.delivered,
    slow: a.slow,
    given_up: a.givenUp,
    retry_in_ms: a.retryInMs,
  }));
  const rows = await sql<{ id: string; project: string; disabled_now: boolean }[]>`
    with input as (
      select * from json_to_recordset(${JSON.stringify(input)}::text::json) as a(
        project text, integration_id text, event_id text, event_type text, subject text, payload text, written_at timestamptz, attempt int,
        status text, duration_ms int, response text, delivered boolean, slow boolean, given_up boolean, retry_in_ms int)
    ),
    a as (
      -- One attempt per event: the same event in two jobs (sent again by hand while its job still
      -- waits, say) may end in one flush, and a row is changed once per statement. A delivery wins.
      select distinct on (project, integration_id, event_id) * from input
      order by project, integration_id, event_id, delivered desc, attempt desc
    ),
    previous as (
      -- The events' latest attempts so far: they move to webhook_attempts (the statement's snapshot sees them as they were).
      -- Each looked up by its key: a lateral subquery that offset 0 keeps from being made a join, which a
      -- planner with statistics older than the table's growth ran as a scan of the whole table.
      select m.project, m.integration_id, m.event_id, m.event_type, m.attempts, m.last_attempt_at, m.last_status, m.last_duration_ms, m.last_response
      from a cross join lateral (
        select * from webhook_messages m where m.project = a.project and m.integration_id = a.integration_id and m.event_id = a.event_id offset 0
      ) m
      -- A delivery recorded as its job left (no attempt yet) has no attempt to move.
      where m.attempts > 0
    ),
    moved as (
      insert into webhook_attempts (project, integration_id, event_id, event_type, attempt, at, status, duration_ms, response)
      select project, integration_id, event_id, event_type, attempts, last_attempt_at, last_status, last_duration_ms, last_response from previous
    ),
    messages as (
      insert into webhook_messages as m (project, integration_id, event_id, event_type, subject, payload, written_at, attempts, next_attempt_at, delivered_at, failed_at,
                                         last_attempt_at, last_status, last_duration_ms, last_response)
      select project, integration_id, event_id, event_type, subject, payload, written_at, attempt,
             case when retry_in_ms is not null then now() + retry_in_ms * interval '1 millisecond' end,
             case when delivered then now() end, case when given_up then now() end,
             now(), status, duration_ms, response
      from a
      on conflict (project, integration_id, event_id) do update
        set attempts = greatest(m.attempts, excluded.attempts), next_attempt_at = excluded.next_attempt_at,
            delivered_at = coalesce(excluded.delivered_at, m.delivered_at), failed_at = excluded.failed_at,
            last_attempt_at = excluded.last_attempt_at, last_status = excluded.last_status,
            last_duration_ms = excluded.last_duration_ms, last_response = excluded.last_response
    ),
    outcome as (
      -- delivered: answered well (a 2xx in time); a slow 2xx counts as a failure here (the reason's last says 200 after N ms).
      select project, integration_id, bool_or(delivered and not slow) as delivered,
             (array_agg(status || case when slow then format(' after %s ms', duration_ms) else '' end || ' ' || left(response, 200) order by attempt desc))[1] as last
      from a group by project, integration_id
    ),
    before as (
      -- open: it waits for its next try already (what failed meanwhile was under way before).
      select i.project, i.id, i.state, i.failed_attempts, i.failing_since, o.delivered, o.last,
             i.retry_at is not null and i.retry_at > now() as open,
             not o.delivered and not (i.retry_at is not null and i.retry_at > now()) and i.failed_attempts + 1 >= ${maxAttempts} as disable
      -- Each integration looked up by its key (offset 0: not made a join, which scanned the whole table of integrations).
      from outcome o cross join lateral (
        select * from integrations i where i.project = o.project and i.id = o.integration_id and i.kind = 'webhook' offset 0
      ) i
    )
    update integrations i set
      failed_attempts = case when b.delivered then 0 when b.open then b.failed_attempts else b.failed_attempts + 1 end,
      failing_since = case when b.delivered then null else coalesce(b.failing_since, now()) end,
      retry_at = case when b.delivered then null when b.open then i.retry_at
                      else now() + (${integrationDelaysMs as number[]}::int[])[least(b.failed_attempts + 1, ${integrationDelaysMs.length})] * interval '1 millisecond' end,
      state = case when b.disable then 'disabled' else i.state end,
      disabled_reason = case when b.disable
                             then format('%s deliveries in a row failed, since %s; the last: %s', b.failed_attempts + 1,
                                         to_char(coalesce(b.failing_since, now()) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), b.last)
                             else i.disabled_reason end,
      updated_at = now()
    from before b
    -- A webhook that delivers and has no failures to forget is left as it is (no write per delivery).
    where i.project = b.project and i.id = b.id and not (b.delivered and b.failed_attempts = 0 and b.failing_since is null)
    returning i.id, i.project, b.disable and b.state = 'active' as disabled_now`;
  return rows.filter((r) => r.disabled_now).map((r) => `${r.project}/${r.id}`);
}

/** An attempt as the deliveries list shows it, with the exact time its key carries. */
export interface ListedAttempt {
  event_id: string;
  event_type: string;
  attempt: number;
  at: Date;
  /** `at` to the microsecond, UTC (a DeliveryKey's). */
  at_key: string;
  status: string;
  duration_ms: number;
  response: string;
}

/**
 * A page of the integration's attempts, newest first (time, then event id and attempt, descending),
 * after `after` when given: the latest of each event (webhook_messages) and those before
 * (webhook_attempts), each side read by its index from the key on, at most `limit` rows of each,
 * merged. Costs the same on any page (no offset to skip).
 */
export async function listAttempts(db: Db, project: string, integrationID: string, after: ListKey | undefined, limit: number): Promise<ListedAttempt[]> {
  // The key's time goes in as text: a parameter typed timestamptz would be sent through a JS Date, to the millisecond.
  const past = after ? db`and (at, event_id, attempt) < (${after.at}::text::timestamptz, ${after.eventId}, ${after.attempt})` : db``;
  const latest = after ? db`and (last_attempt_at, event_id, attempts) < (${after.at}::text::timestamptz, ${after.eventId}, ${after.attempt})` : db``;
  return db<ListedAttempt[]>`
    select *, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at_key from (
      (select event_id, event_type, attempt, at, status, duration_ms, response from webhook_attempts
       where integration_id = ${integrationID} and project = ${project} ${past}
       order by at desc, event_id desc, attempt desc limit ${limit})
      union all
      (select event_id, event_type, attempts, last_attempt_at, last_status, last_duration_ms, last_response from webhook_messages
       where integration_id = ${integrationID} and project = ${project} and attempts > 0 ${latest}
       order by last_attempt_at desc, event_id desc, attempts desc limit ${limit})
    ) attempts
    order by at desc, event_id desc, attempt desc limit ${limit}`;
}

/**
 * Deletes up to `limit` attempts older than `days` days, and up to `limit` events whose latest
 * attempt is that old (with it, the event is no longer sent again by hand), each webhook's found
 * through its own index (integration, time: no index on time alone to keep up on every attempt).
 * Answers how many rows of each went.
 */
export async function sweepAttempts(sql: Sql, days: number, limit: number): Promise<{ attempts: number; events: number }> {
  const [row] = await sql<{ attempts: number; events: number }[]>`
    with webhooks as (
      select project, id from integrations where kind = 'webhook'
    ),
    old_attempts as (
      select a.project, a.integration_id, a.id from webhooks w cross join lateral (
        select project, integration_id, id from webhook_attempts
        where integration_id = w.id and project = w.project and at < now() - ${days} * interval '1 day'
        order by at limit ${limit}
      ) a limit ${limit}
    ),
    old_events as (
      select m.project, m.integration_id, m.event_id from webhooks w cross join lateral (
        select project, integration_id, event_id from webhook_messages
        where integration_id = w.id and project = w.project and last_attempt_at < now() - ${days} * interval '1 day'
        order by last_attempt_at limit ${limit}
      ) m limit ${limit}
    ),
    gone_attempts as (
      delete from webhook_attempts a using old_attempts o
      where a.project = o.project and a.integration_id = o.integration_id and a.id = o.id
      returning 1
    ),
    gone_events as (
      delete from webhook_messages m using old_events o
      where m.project = o.project and m.integration_id = o.integration_id and m.event_id = o.event_id
      returning 1
    )
    select (select count(*) from gone_attempts)::int as attempts, (select count(*) from gone_events)::int as events`;
  return row!;
}

/**
 * Claims an hour of the delivery log's sweep for this process, in one statement: the unique insert
 * of the hour, and the sweep's job written to the outbox only when the insert took place (any
 * number of processes may try; one gets it). Claims older than a day go with it.
 */
export async function claimSweep(sql: Sql, hour: Date, job: OutboxEvent): Promise<boolean> {
  const [row] = await sql<{ claimed: number }[]>`
    with forgotten as (
      delete from webhook_log_sweeps where hour < now() - interval '1 day'
    ),
    claimed as (
      insert into webhook_log_sweeps (hour) values (${hour}) on conflict do nothing returning hour
    ),
    queued as (
      insert into outbox (subject, payload, msg_id)
      select subject, payload, msg_id from (${outboxRows(sql, [job])}) e where exists (select from claimed)
    )
    select count(*)::int as claimed from claimed`;
  return row!.claimed === 1;
}

export async function countAttempts(db: Db, project: string, integrationID: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select (select count(*) from webhook_attempts where project = ${project} and integration_id = ${integrationID})::int
         + (select count(*) from webhook_messages where project = ${project} and integration_id = ${integrationID} and attempts > 0)::int as n`;
  return row?.n ?? 0;
}

/** A delivered or undelivered event of the integration, made ready to be delivered once more: the job that sends it. */
export async function reopenMessage(tx: TransactionSql, key: DeliveryKey): Promise<{ event_type: string; payload: string; written_at: string; subject: string } | undefined> {
  const [row] = await tx<Array<{ event_type: string; payload: string; written_at: string; subject: string }>>`
    update webhook_messages set delivered_at = null, failed_at = null, next_attempt_at = null
    where project = ${key.project} and integration_id = ${key.integrationID} and event_id = ${key.eventID}
    returning event_type, payload, to_char(written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as written_at, subject`;
  return row;
}

/**
 * Parks a job's events that wait for a later try (their receiver failed, or their own next attempt
 * is later): their job is done, and they wait here, not in JetStream, until `afterMs` from now at
 * the earliest (requeue.ts sends them again once due). One not recorded yet (a job from before
 * deliveries were recorded as they left) is recorded now; a delivered or given up one is left alone.
 */
export async function parkMessages(sql: Sql, project: string, integrationID: string, events: readonly WebhookEvent[], afterMs: number): Promise<void> {
  if (!events.length) return;
  const input = JSON.stringify(events.map((e) => ({ event_id: e.eventID, event_type: e.type, subject: e.subject, payload: e.event, written_at: e.writtenAt })));
  await sql`
    insert into webhook_messages as m (project, integration_id, event_id, event_type, subject, payload, written_at, attempts,
                                       last_attempt_at, last_status, last_duration_ms, last_response, queued_at, next_attempt_at)
    select ${project}, ${integrationID}, event_id, event_type, subject, payload, written_at, 0, written_at, '', 0, '', null,
           now() + ${Math.max(0, Math.round(afterMs))} * interval '1 millisecond'
    from json_to_recordset(${input}::text::json) as e(event_id text, event_type text, subject text, payload text, written_at timestamptz)
    on conflict (project, integration_id, event_id) do update
      set queued_at = null, next_attempt_at = greatest(coalesce(m.next_attempt_at, now()), excluded.next_attempt_at)
      where m.delivered_at is null and m.failed_at is null`;
}

/** A parked delivery that is due, taken to be sent again. */
export interface DueMessage {
  project: string;
  integration_id: string;
  event_id: string;
  subject: string;
  payload: string;
  written_at: string;
}

/**
 * Takes up to `limit` parked deliveries that are due (their own next attempt and their webhook's
 * next try have come; the webhook active), oldest first, and marks them queued: the caller writes
 * their jobs in the same transaction.
 */
export async function takeDueMessages(tx: TransactionSql, limit: number): Promise<DueMessage[]> {
  return tx<DueMessage[]>`
    with due as (
      select m.project, m.integration_id, m.event_id from webhook_messages m
      join integrations i on i.project = m.project and i.id = m.integration_id and i.kind = 'webhook' and i.state = 'active'
                          and (i.retry_at is null or i.retry_at <= now())
      where m.delivered_at is null and m.failed_at is null and m.queued_at is null and coalesce(m.next_attempt_at, now()) <= now()
      order by m.next_attempt_at nulls first limit ${limit}
      for update of m skip locked
    )
    update webhook_messages m set queued_at = now() from due
    where m.project = due.project and m.integration_id = due.integration_id and m.event_id = due.event_id
    returning m.project, m.integration_id, m.event_id, m.subject, m.payload,
              to_char(m.written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as written_at`;
}

/** Every delivery not made yet is parked (its job was lost with JOBS): requeue.ts sends it again when due. Answers how many. */
export async function parkAllUndone(tx: TransactionSql): Promise<number> {
  const rows = await tx`update webhook_messages set queued_at = null where delivered_at is null and failed_at is null and queued_at is not null`;
  return rows.count;
}
