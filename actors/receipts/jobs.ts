import type { NatsConnection } from '@nats-io/transport-node';
import type { Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { readJob, startJobConsumer, type Job, type JobConsumer, type JobConsumerDeps, type JobOutcome } from '../../src/messaging/jobs.js';
import { ReceiptJob, ReceiptJobFilter } from '../../subjects/receipts.js';
import type { ReceiptMaker } from './maker.js';
import * as db from './sql.js';

/**
 * The receipt jobs' consumer: makes the receipt of each order that became final, ahead of its
 * first request. A job is only a head start: one that cannot be done (after its attempts) is
 * dropped, and the first request makes the receipt then. Jobs yield to requests: while the
 * process is busy answering them (a checkout rush), receipts wait and are made when it is not.
 */
export interface ReceiptJobDeps {
  nc: NatsConnection;
  sql: Sql;
  log: Logger;
  maker: ReceiptMaker;
  /** Receipts made at once by this process (their renders queue for the render threads). */
  concurrency: number;
  retryScheduleMs?: readonly number[];
  maxAttempts?: number;
  /** Counts jobs that failed their last attempt (src/infra/metrics.ts). */
  metrics?: JobConsumerDeps['metrics'];
}

export function startReceiptJobs(deps: ReceiptJobDeps): Promise<JobConsumer> {
  const { sql, log, maker } = deps;
  const work = async (job: Job): Promise<JobOutcome> => {
    const parsed = readJob(ReceiptJob, job, log, 'receipt job');
    if (!parsed) return { kind: 'done' };
    const { project, orderID } = parsed;
    try {
      const order = await db.orderWithoutReceipt(sql, project, orderID);
      // A receipt prints the TSE's signature: it waits for it (the fiscal job queues the receipt job
      // once the signature is recorded, so this is rare: a job queued before that).
      if (order?.fiscalPending) {
        if (job.lastAttempt) log.error({ project, orderID }, 'receipt job gave up waiting for the TSE signature; the first request makes the receipt');
        return job.lastAttempt ? { kind: 'done' } : { kind: 'retry', reason: 'the order waits for its TSE signature', afterMs: 500 };
      }
      if (order) await maker.make(project, orderID, order.doc);
      return { kind: 'done' };
    } catch (err) {
      if (!job.lastAttempt) throw err;
      log.error({ err, project, orderID, attempt: job.attempt }, 'receipt job failed on its last attempt; the first request makes the receipt');
      return { kind: 'done' };
    }
  };
  return startJobConsumer(
    { nc: deps.nc, log, metrics: deps.metrics },
    {
      durable: 'receipt',
      filter: ReceiptJobFilter,
      retryScheduleMs: deps.retryScheduleMs ?? [1000, 5000, 30_000, 120_000],
      maxAttempts: deps.maxAttempts ?? 5,
      concurrency: deps.concurrency,
      // A receipt made ahead is a head start, not checkout work: it waits while requests keep the process busy.
      yieldAboveBusyShare: 0.6,
    },
    work,
  );
}
