import type { Sql, TransactionSql } from '../../src/infra/postgres.js';

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
  /** No attempt follows (the last one failed). */
  givenUp: boolean;
  /** When the event may be tried again, ms from now (a failed attempt that is not the last). */
  retryInMs: number | null;
}

/**
 * Records attempts in one statement: each attempt's row, its event's state, and each integration's:
 * a delivery resets its failures; attempts that all failed count one more failure in a row (unless
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
    given_up: a.givenUp,
    retry_in_ms: a.retryInMs,
  }));
  const rows = await sql<{ id: string; project: string; disabled_now: boolean }[]>`
    with input as (
      select * from json_to_recordset(${JSON.stringify(input)}::text::json) as a(
        project text, integration_id text, event_id text, event_type text, subject text, payload text, written_at timestamptz, attempt int,
        status text, duration_ms int, response text, delivered boolean, given_up boolean, retry_in_ms int)
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
      select project, integration_id, bool_or(delivered) as delivered,
             (array_agg(status || ' ' || left(response, 200) order by attempt desc))[1] as last
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

/** Every attempt of the integration, newest first: the latest of each event (webhook_messages) and those before (webhook_attempts). */
export async function listAttempts(db: Db, project: string, integrationID: string, offset: number, limit: number) {
  return db<Array<{ event_id: string; event_type: string; attempt: number; at: Date; status: string; duration_ms: number; response: string }>>`
    select * from (
      select event_id, event_type, attempt, at, status, duration_ms, response from webhook_attempts
      where project = ${project} and integration_id = ${integrationID}
      union all
      select event_id, event_type, attempts, last_attempt_at, last_status, last_duration_ms, last_response from webhook_messages
      where project = ${project} and integration_id = ${integrationID}
    ) attempts
    order by at desc, attempt desc offset ${offset} limit ${limit}`;
}

export async function countAttempts(db: Db, project: string, integrationID: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select (select count(*) from webhook_attempts where project = ${project} and integration_id = ${integrationID})::int
         + (select count(*) from webhook_messages where project = ${project} and integration_id = ${integrationID})::int as n`;
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
