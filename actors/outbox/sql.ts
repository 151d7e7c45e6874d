import type { Sql, TransactionSql } from '../../src/infra/postgres.js';

type Db = Sql | TransactionSql;

/**
 * What a change publishes: an event (`events.<project>.<domain>.<id>.<event>`) or a job
 * (`jobs.<kind>...`), written to the outbox in the change's own statement or transaction.
 */
export interface OutboxEvent {
  subject: string;
  payload: unknown;
  /** The Nats-Msg-Id to publish with; the row's own id when absent. */
  msgId?: string;
}

/**
 * Events as rows (subject, payload, msg_id, n) in publishing order, from one JSON parameter: the
 * payload texts pass into the json column as written. For statements that write the outbox
 * together with the change (see checkout-process/sql.ts).
 */
export function outboxRows(db: Db, events: readonly OutboxEvent[]) {
  return db`
    select e.value ->> 'subject' as subject, e.value -> 'payload' as payload, e.value ->> 'msgId' as msg_id, e.n
    from json_array_elements(${JSON.stringify(events)}::text::json) with ordinality as e(value, n)`;
}

/** Writes events to the outbox, in order (inside the transaction of the change that caused them). */
export async function insertOutbox(db: Db, events: readonly OutboxEvent[]): Promise<void> {
  if (!events.length) return;
  await db`insert into outbox (subject, payload, msg_id) select subject, payload, msg_id from (${outboxRows(db, events)}) e order by n`;
}

/** Held by the relay that publishes: one at a time, so events leave in the order they were written. */
const RelayLock = 7_420_002;

export interface OutboxRow {
  seq: string;
  id: string;
  subject: string;
  payload: string;
  /** When the change wrote it (ISO). */
  written_at: string;
  /** An event's active webhook integrations that ask for its type (their delivery jobs go out with it); null: none. */
  webhooks: string[] | null;
}

/**
 * Takes the oldest events out of the outbox, if this relay gets the relay lock (`held`). They are
 * gone only if the transaction commits: the relay commits once the stream has them. Each event
 * comes with the active webhooks of its project that ask for its type, read in the same statement:
 * a webhook made before the batch is taken gets it, one deleted or disabled before does not; each
 * such delivery is recorded in webhook_messages (no attempt yet), so that Postgres knows every
 * delivery not made (sent again when JOBS is lost: actors/webhooks/requeue.ts).
 *
 * The batch is deleted as the range of `seq` from its first to its last row: in the statement's
 * snapshot that range holds exactly the oldest `limit` rows (a row still uncommitted is in neither).
 * Deleted as `seq in (the batch)`, the planner expected `limit` rows and hashed them against a
 * sequential scan of the whole outbox, dead rows included (216 buffers for a batch of twenty in a
 * bench run); a range it reads through the primary key.
 */
export async function takeOldestEvents(tx: TransactionSql, limit: number): Promise<{ held: boolean; rows: OutboxRow[] }> {
  const result = await tx<Array<{ held: boolean } & { [K in keyof OutboxRow]: OutboxRow[K] | null }>>`
    with lock as (select pg_try_advisory_xact_lock(${RelayLock}) as held),
    batch as (
      select min(seq) as first, max(seq) as last
      from (select seq from outbox where (select held from lock) order by seq limit ${limit}) oldest
    ),
    taken as (
      delete from outbox where seq >= (select first from batch) and seq <= (select last from batch)
      returning seq, coalesce(msg_id, id::text) as id, subject, payload::text as payload, created_at
    ),
    deliveries as (
      select taken.seq, taken.id as event_id, taken.subject, taken.payload, taken.created_at, i.id as integration_id, i.project,
             split_part(taken.subject, '.', 3) || '.' || split_part(taken.subject, '.', 5) as event_type
      from taken join integrations i
        on taken.subject like 'events.%' and i.kind = 'webhook' and i.state = 'active'
         and i.project = split_part(taken.subject, '.', 2)
         and (i.events is null
              or split_part(taken.subject, '.', 3) || '.' || split_part(taken.subject, '.', 5) = any(i.events)
              or split_part(taken.subject, '.', 3) || '.*' = any(i.events))
    ),
    recorded as (
      -- Each delivery is recorded as its job leaves (no attempt yet): Postgres knows what is not delivered.
      insert into webhook_messages (project, integration_id, event_id, event_type, subject, payload, written_at, attempts,
                                    last_attempt_at, last_status, last_duration_ms, last_response, queued_at)
      select project, integration_id, event_id, event_type, subject, payload, created_at, 0, created_at, '', 0, '', now() from deliveries
      on conflict do nothing
    )
    select lock.held, taken.seq, taken.id, taken.subject, taken.payload,
      to_char(taken.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as written_at,
      (select array_agg(d.integration_id order by d.integration_id) from deliveries d where d.seq = taken.seq) as webhooks
    from lock left join taken on true
    order by taken.seq`;
  const held = result[0]?.held ?? false;
  const rows = result.filter((r): r is { held: boolean } & OutboxRow => r.seq !== null);
  return { held, rows };
}

/**
 * The outbox is a queue: every row is deleted soon after its insert. Until a vacuum, inserts and
 * the relay's reads wade through the dead rows (hundreds of buffers per statement under load), and
 * autovacuum visits a busy table only about once a minute; so the relay vacuums it as it goes.
 */
export async function vacuumOutbox(sql: Sql): Promise<void> {
  await sql`vacuum (skip_locked) outbox`;
}

/**
 * What waits to be published, for metrics: the rows (counted up to a million: a scrape stays cheap
 * however far the relay fell behind) and the age of the oldest in seconds (0 when none).
 */
export async function outboxBacklog(sql: Sql): Promise<{ rows: number; oldestAgeSeconds: number }> {
  const [row] = await sql<Array<{ rows: number; oldest: number }>>`
    select (select count(*)::int from (select 1 from outbox limit 1000000) waiting) as rows,
           coalesce((select extract(epoch from now() - created_at)::float8 from outbox order by seq limit 1), 0) as oldest`;
  return { rows: row?.rows ?? 0, oldestAgeSeconds: Math.max(0, row?.oldest ?? 0) };
}

/**
 * Sets aside rows the relay took that no message can carry (over the NATS server's limit), in its
 * transaction: they leave the outbox for outbox_unpublishable instead of holding up every row after
 * them.
 */
export async function setAsideUnpublishable(tx: TransactionSql, rows: readonly OutboxRow[]): Promise<void> {
  if (!rows.length) return;
  const input = rows.map((r) => ({ seq: r.seq, id: r.id, subject: r.subject, payload: r.payload, created_at: r.written_at, bytes: Buffer.byteLength(r.payload) }));
  await tx`
    insert into outbox_unpublishable (seq, id, subject, payload, created_at, bytes)
    select seq, id, subject, payload::json, created_at, bytes
    from json_to_recordset(${JSON.stringify(input)}::text::json) as i(seq bigint, id text, subject text, payload text, created_at timestamptz, bytes int)
    on conflict (seq) do nothing`;
}
