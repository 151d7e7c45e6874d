import type { Sql } from '../../src/infra/postgres.js';
import { SealedPrefix } from '../../src/secrets/key-ring.js';

/** How long a key names its first answer (Stripe's rule, design.md "Running at scale"). */
const KeptFor = "interval '24 hours'";

export interface KeyRow {
  fingerprint: string;
  claim: string;
  status: number | null;
  answer: Buffer | null;
}

export interface Claim {
  project: string;
  keyHash: string;
  fingerprint: string;
  claim: string;
  leaseMs: number;
}

/**
 * Claims a key for a request: a new key, one whose 24 hours are over, or one whose first request
 * with the same fingerprint was abandoned (still running after its lease: its edge died). False
 * when the key stands (find it to learn why).
 */
export async function claimKey(sql: Sql, c: Claim): Promise<boolean> {
  const rows = await sql`
    insert into idempotency_keys as k (project, key_hash, fingerprint, claim, locked_until)
    values (${c.project}, ${c.keyHash}, ${c.fingerprint}, ${c.claim}, now() + ${c.leaseMs}::int * interval '1 millisecond')
    on conflict (project, key_hash) do update
      set fingerprint = excluded.fingerprint, claim = excluded.claim, locked_until = excluded.locked_until, status = null, answer = null,
          created_at = case when k.created_at < now() - ${sql.unsafe(KeptFor)} then now() else k.created_at end
      where k.created_at < now() - ${sql.unsafe(KeptFor)}
         or (k.status is null and k.locked_until < now() and k.fingerprint = excluded.fingerprint)
    returning 1`;
  return rows.length > 0;
}

/** The key's row while it is kept. */
export async function findKey(sql: Sql, project: string, keyHash: string): Promise<KeyRow | undefined> {
  const [row] = await sql<KeyRow[]>`
    select fingerprint, claim, status, answer from idempotency_keys
    where project = ${project} and key_hash = ${keyHash} and created_at >= now() - ${sql.unsafe(KeptFor)}`;
  return row;
}

/** Records the answer of the claim's request; a claim taken over meanwhile records nothing. */
export async function completeKey(sql: Sql, k: { project: string; keyHash: string; claim: string; status: number; answer: Buffer }): Promise<void> {
  await sql`
    update idempotency_keys set status = ${k.status}, answer = ${k.answer}, locked_until = null
    where project = ${k.project} and key_hash = ${k.keyHash} and claim = ${k.claim} and status is null`;
}

/** Forgets a kept answer that does not carry the server's seal (handler.ts), unless another claim took the key meanwhile. */
export async function forgetUnsealedAnswer(sql: Sql, project: string, keyHash: string, claim: string): Promise<void> {
  await sql`
    delete from idempotency_keys
    where project = ${project} and key_hash = ${keyHash} and claim = ${claim} and status is not null
      and substring(answer from 1 for ${SealedPrefix.length}) <> ${Buffer.from(SealedPrefix)}::bytea`;
}

/** Forgets the claim's key, so that the client's next try runs the request again. */
export async function releaseKey(sql: Sql, k: { project: string; keyHash: string; claim: string }): Promise<void> {
  await sql`delete from idempotency_keys where project = ${k.project} and key_hash = ${k.keyHash} and claim = ${k.claim} and status is null`;
}

/** Deletes up to `limit` keys whose 24 hours are over; answers how many. */
export async function deleteExpiredKeys(sql: Sql, limit: number): Promise<number> {
  const result = await sql`
    delete from idempotency_keys k
    using (
      select project, key_hash from idempotency_keys
      where created_at < now() - ${sql.unsafe(KeptFor)}
      limit ${limit}
      for update skip locked
    ) expired
    where k.project = expired.project and k.key_hash = expired.key_hash`;
  return result.count;
}
