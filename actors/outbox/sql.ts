import type { TransactionSql } from '../../src/infra/postgres.js';

/** Held by the relay that publishes: one at a time, so events leave in the order they were written. */
const RelayLock = 7_420_002;

export async function tryRelayLock(tx: TransactionSql): Promise<boolean> {
  const [row] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${RelayLock}) as locked`;
  return row!.locked;
}

export interface OutboxRow {
  seq: string;
  id: string;
  subject: string;
  payload: string;
}

export function oldestEvents(tx: TransactionSql, limit: number) {
  return tx<OutboxRow[]>`select seq, id, subject, payload::text as payload from outbox order by seq limit ${limit}`;
}

export async function deleteEvents(tx: TransactionSql, seqs: readonly string[]): Promise<void> {
  await tx`delete from outbox where seq = any(${seqs as string[]}::bigint[])`;
}
