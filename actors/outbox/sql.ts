import type { Sql, TransactionSql } from '../../src/infra/postgres.js';

/** Held by the relay that publishes: one at a time, so events leave in the order they were written. */
const RelayLock = 7_420_002;

export interface OutboxRow {
  seq: string;
  id: string;
  subject: string;
  payload: string;
}

/**
 * Takes the oldest events out of the outbox, if this relay gets the relay lock (`held`). They are
 * gone only if the transaction commits: the relay commits once the stream has them.
 */
export async function takeOldestEvents(tx: TransactionSql, limit: number): Promise<{ held: boolean; rows: OutboxRow[] }> {
  const result = await tx<Array<{ held: boolean } & { [K in keyof OutboxRow]: OutboxRow[K] | null }>>`
    with lock as (select pg_try_advisory_xact_lock(${RelayLock}) as held),
    taken as (
      delete from outbox where seq in (select seq from outbox where (select held from lock) order by seq limit ${limit})
      returning seq, id, subject, payload::text as payload
    )
    select lock.held, taken.* from lock left join taken on true
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
