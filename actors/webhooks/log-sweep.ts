import type { NatsConnection } from '@nats-io/transport-node';
import cron, { type ScheduledTask } from 'node-cron';
import { setTimeout as sleep } from 'node:timers/promises';
import { logLoopFailure, type Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { readJob, startJobConsumer, type JobConsumer, type JobConsumerDeps } from '../../src/messaging/jobs.js';
import { WebhookLogSweepFilter, WebhookLogSweepJob, webhookLogSweepJob } from '../../subjects/integrations.js';
import { claimSweep, sweepAttempts } from './sql.js';

/**
 * The delivery log keeps each attempt WEBHOOK_LOG_DAYS (30) days. The sweep runs on the platform's
 * one way of doing scheduled work, as closings do: every worker process ticks each hour (node-cron)
 * and claims the hour in Postgres (claimSweep: a unique insert that writes the sweep's job to the
 * outbox in the same statement), so that N processes sweep once; the job's worker (any process of
 * the pool) deletes what is older, `batch` rows of each table per statement, pausing between
 * statements, and after `budgetMs` of it gives the job back to come again a second later: a sweep
 * of a large backlog (the first after an upgrade, a shorter WEBHOOK_LOG_DAYS) never holds a
 * statement, a lock or the pool for long.
 */
export interface WebhookLogSweep {
  /** Claims the hour of `now` (default: the clock) unless claimed; answers whether this call claimed it. */
  tick(now?: Date): Promise<boolean>;
  /** Ticks each hour and takes sweep jobs, until stop(). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface WebhookLogSweepDeps extends JobConsumerDeps {
  sql: Sql;
  nc: NatsConnection;
  log: Logger;
  /** How many days an attempt is kept. */
  days: number;
  /** Called after a tick wrote the job (wakes the outbox relay). */
  claimed?: () => void;
  /** Rows of each table one statement deletes at most (5000). */
  batch?: number;
  /** How long one job deletes before it comes again (10 s). */
  budgetMs?: number;
}

export function createWebhookLogSweep(deps: WebhookLogSweepDeps): WebhookLogSweep {
  const { sql, log, days, batch = 5000, budgetMs = 10_000 } = deps;
  let task: ScheduledTask | undefined;
  let consumer: JobConsumer | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const tick = async (now = new Date()): Promise<boolean> => {
    const hour = new Date(now);
    hour.setUTCMinutes(0, 0, 0);
    const claimed = await claimSweep(sql, hour, webhookLogSweepJob(hour));
    if (claimed) deps.claimed?.();
    return claimed;
  };

  return {
    tick,
    async start() {
      consumer = await startJobConsumer(
        deps,
        { durable: 'webhook-log', filter: WebhookLogSweepFilter, retryScheduleMs: [1000, 5000, 60_000], maxAttempts: 10_000, concurrency: 1, ownSchedule: true },
        async (job) => {
          const sweep = readJob(WebhookLogSweepJob, job, log, 'webhook log sweep job');
          if (!sweep) return { kind: 'done' };
          const started = performance.now();
          const gone = { attempts: 0, events: 0 };
          for (;;) {
            const round = await sweepAttempts(sql, days, batch);
            gone.attempts += round.attempts;
            gone.events += round.events;
            if (round.attempts < batch && round.events < batch) break;
            if (performance.now() - started > budgetMs) {
              log.info({ hour: sweep.hour, ...gone, days }, 'webhook delivery log sweep goes on');
              return { kind: 'retry', reason: 'more to delete', afterMs: 1000 };
            }
            // Room for other statements between two batches.
            await sleep(50);
          }
          if (gone.attempts || gone.events) log.info({ hour: sweep.hour, ...gone, days }, 'webhook delivery log swept');
          return { kind: 'done' };
        },
      );
      task ??= cron.schedule(
        '7 * * * *',
        () => {
          running = tick().catch((err: unknown) => logLoopFailure(log, err, 'webhook delivery log tick failed'));
          return running;
        },
        { name: 'webhook-log-sweep', noOverlap: true },
      );
    },
    async stop() {
      await task?.destroy();
      task = undefined;
      await running;
      await consumer?.stop();
    },
  };
}
