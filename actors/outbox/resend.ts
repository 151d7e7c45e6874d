import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { resentMsgId } from '../../src/messaging/jobs.js';
import type { JobKind } from '../../subjects/jobs.js';
import { insertOutbox, type OutboxEvent } from './sql.js';

/**
 * Sends again, from Postgres, a kind's jobs whose work is not done, after the stream JOBS was lost
 * and made again (its life `life`, src/infra/healing.ts): in one transaction, the claim of (kind,
 * life), which one process of all gets, and the outbox rows of the jobs `undone` finds, each with a
 * Nats-Msg-Id of its own (resentMsgId). A job still in the outbox (not published before the loss)
 * is left to go as it is. Answers how many were sent again (undefined: another process has it).
 */
export async function resendJobs(sql: Sql, kind: JobKind, life: string, undone: (tx: TransactionSql) => Promise<Array<OutboxEvent & { msgId: string }>>): Promise<number | undefined> {
  return sql.begin(async (tx) => {
    const [claimed] = await tx<{ kind: string }[]>`insert into job_resends (kind, life, jobs) values (${kind}, ${life}, 0) on conflict do nothing returning kind`;
    if (!claimed) return undefined;
    await tx`delete from job_resends where at < now() - interval '30 days'`;
    const jobs = await undone(tx);
    const waiting = new Set(
      jobs.length ? (await tx<{ msg_id: string }[]>`select msg_id from outbox where msg_id = any(${jobs.map((j) => j.msgId)})`).map((r) => r.msg_id) : [],
    );
    const again = jobs.filter((j) => !waiting.has(j.msgId)).map((j) => ({ ...j, msgId: resentMsgId(j.msgId, life) }));
    await insertOutbox(tx, again);
    await tx`update job_resends set jobs = ${again.length} where kind = ${kind} and life = ${life}`;
    return again.length;
  });
}
