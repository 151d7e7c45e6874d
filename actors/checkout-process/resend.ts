import type { TransactionSql } from '../../src/infra/postgres.js';
import type { OutboxEvent } from '../outbox/sql.js';
import { fiscalFinishJob, fulfillmentJobs } from './handler.js';
import { processesWithUndoneWork } from './sql.js';

/**
 * The jobs of checkout processes whose work is not done, as their change wrote them (the same
 * subjects, payloads and Nats-Msg-Ids): each ended sale's TSE finish not recorded yet, and each
 * fulfillment call queued and not answered. Sent again after JOBS was lost (actors/outbox/resend.ts).
 */
export async function undoneProcessJobs(tx: TransactionSql): Promise<{ fiscal: Array<OutboxEvent & { msgId: string }>; fulfillment: Array<OutboxEvent & { msgId: string }> }> {
  const { unsigned, calling } = await processesWithUndoneWork(tx);
  const fiscal = unsigned.map(({ record, state }) => fiscalFinishJob(record, state === 'final' ? record.pricing.price.price : undefined) as OutboxEvent & { msgId: string });
  const fulfillment = calling.flatMap((record) =>
    fulfillmentJobs(
      record,
      record.fulfillments.flatMap((f) => f.queued.filter((call) => !f.answered.includes(call)).map((call) => ({ fulfillmentID: f.id, call }))),
    ),
  ) as Array<OutboxEvent & { msgId: string }>;
  return { fiscal, fulfillment };
}
