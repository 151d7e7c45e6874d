import type { Sql, TransactionSql } from '../../src/infra/postgres.js';

type Db = Sql | TransactionSql;

/** A delivery job's integration and what was done of its event so far, read for a batch at once. */
export interface DeliveryState {
  /** The job's place in the batch (1-based). */
  n: number;
  /** Null: no webhook integration by that id any more. */
  state: 'active' | 'disabled' | null;
  url: string | null;
  secret: string | null;
  /** The secret before a rotation, while it still signs. */
  previous_secret: string | null;
  failed_attempts: number | null;
  /** Milliseconds until the integration may be tried again (its receiver failed), 0 or less: now. */
  integration_wait_ms: number | null;
  /** Attempts made for the event so far (0: none). */
  attempts: number;
  message_wait_ms: number | null;
  delivered: boolean;
  given_up: boolean;
}

export interface DeliveryKey {
  project: string;
  integrationID: string;
  eventID: string;
}

export async function readDeliveryStates(sql: Sql, jobs: readonly DeliveryKey[]): Promise<DeliveryState[]> {
  return sql<DeliveryState[]>`
    select j.n::int as n, i.state, i.url, i.secret,
           case when i.previous_secret_until > now() then i.previous_secret end as previous_secret,
           i.failed_attempts, (extract(epoch from i.retry_at - now()) * 1000)::int as integration_wait_ms,
           coalesce(m.attempts, 0) as attempts, (extract(epoch from m.next_attempt_at - now()) * 1000)::int as message_wait_ms,
           m.delivered_at is not null as delivered, m.failed_at is not null as given_up
    from unnest(${jobs.map((j) => j.project)}::text[], ${jobs.map((j) => j.integrationID)}::text[], ${jobs.map((j) => j.eventID)}::text[])
         with ordinality as j(project, integration_id, event_id, n)
    left join integrations i on i.project = j.project and i.id = j.integration_id and i.kind = 'webhook'
    left join webhook_messages m on m.project = j.project and m.integration_id = j.integration_id and m.event_id = j.event_id
    order by j.n`;
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
    with a as (
      select * from json_to_recordset(${JSON.stringify(input)}::text::json) as a(
        project text, integration_id text, event_id text, event_type text, subject text, payload text, written_at timestamptz, attempt int,
        status text, duration_ms int, response text, delivered boolean, given_up boolean, retry_in_ms int)
    ),
    messages as (
      insert into webhook_messages as m (project, integration_id, event_id, event_type, subject, payload, written_at, attempts, next_attempt_at, delivered_at, failed_at)
      select project, integration_id, event_id, event_type, subject, payload::json, written_at, attempt,
             case when retry_in_ms is not null then now() + retry_in_ms * interval '1 millisecond' end,
             case when delivered then now() end, case when given_up then now() end
      from a
      on conflict (project, integration_id, event_id) do update
        set attempts = greatest(m.attempts, excluded.attempts), next_attempt_at = excluded.next_attempt_at,
            delivered_at = coalesce(excluded.delivered_at, m.delivered_at), failed_at = excluded.failed_at
    ),
    logged as (
      insert into webhook_attempts (project, integration_id, event_id, event_type, attempt, status, duration_ms, response)
      select project, integration_id, event_id, event_type, attempt, status, duration_ms, response from a
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
      from integrations i join outcome o on i.project = o.project and i.id = o.integration_id
      where i.kind = 'webhook'
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

export async function listAttempts(db: Db, project: string, integrationID: string, offset: number, limit: number) {
  return db<Array<{ event_id: string; event_type: string; attempt: number; at: Date; status: string; duration_ms: number; response: string }>>`
    select event_id, event_type, attempt, at, status, duration_ms, response from webhook_attempts
    where project = ${project} and integration_id = ${integrationID}
    order by at desc, id desc offset ${offset} limit ${limit}`;
}

export async function countAttempts(db: Db, project: string, integrationID: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from webhook_attempts where project = ${project} and integration_id = ${integrationID}`;
  return row?.n ?? 0;
}

/** A delivered or undelivered event of the integration, made ready to be delivered once more: the job that sends it. */
export async function reopenMessage(tx: TransactionSql, key: DeliveryKey): Promise<{ event_type: string; payload: string; written_at: string; subject: string } | undefined> {
  const [row] = await tx<Array<{ event_type: string; payload: string; written_at: string; subject: string }>>`
    update webhook_messages set delivered_at = null, failed_at = null, next_attempt_at = null
    where project = ${key.project} and integration_id = ${key.integrationID} and event_id = ${key.eventID}
    returning event_type, payload::text as payload, to_char(written_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as written_at, subject`;
  return row;
}
