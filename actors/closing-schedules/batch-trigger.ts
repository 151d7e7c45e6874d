import { latestBatchAtOrBefore } from '../../src/domain/closings/schedule.js';
import { logLoopFailure, type Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { parseDuration } from '../../subjects/formats/time.js';
import { batchKey, BatchLogFormats, closingWorkSubject, type BatchLogFormat, type ClosingWork } from '../../subjects/closings.js';
import { claimBatchTime, schedulesToBatch } from './sql.js';

/**
 * The batch trigger of a worker process: the schedules' appendBatchEvery, claimed as the closing
 * trigger claims fire times. node-cron ticks each minute, too coarse for an interval of seconds,
 * so this ticks on its own timer (every second by default). A tick works out, per schedule that
 * appends batches, the latest batch time that is due (a multiple of the interval since the epoch,
 * the same in every process) and claims it if the schedule has not batched at or after it
 * (claimBatchTime: the watermark, the claim unique on schedule and batch time, the work in the
 * outbox with Nats-Msg-Id `batch:<scheduleId>:<batchTimeISO>`). The shop's closing actor appends.
 */
export interface BatchTrigger {
  tick(now?: Date): Promise<ClosingWork[]>;
  start(): void;
  stop(): Promise<void>;
}

export interface BatchTriggerDeps {
  sql: Sql;
  log: Logger;
  now?: () => Date;
  /** Milliseconds between ticks; default 1000 (the finest batch interval is one second). */
  tickMs?: number;
  claimed?: () => void;
}

export function createBatchTrigger(deps: BatchTriggerDeps): BatchTrigger {
  const { sql, log } = deps;
  const now = deps.now ?? (() => new Date());
  const tickMs = deps.tickMs ?? 1000;
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let running: Promise<unknown> = Promise.resolve();

  const tick = async (at = now()): Promise<ClosingWork[]> => {
    const claimed: ClosingWork[] = [];
    for (const schedule of await schedulesToBatch(sql)) {
      const everyMs = parseDuration(schedule.append_batch_every);
      // Schedules stored before batch formats were checked may name others: only these are written.
      const formats = schedule.batch_formats.filter((f): f is BatchLogFormat => (BatchLogFormats as readonly string[]).includes(f));
      if (!everyMs || !formats.length) continue;
      const batchAt = latestBatchAtOrBefore(everyMs, at);
      if (batchAt <= schedule.batched_until) continue;
      const work: ClosingWork = {
        type: 'batch',
        project: schedule.project,
        shopID: schedule.shop_id,
        scheduleID: Number(schedule.id),
        batchAt: batchAt.toISOString(),
        includeAllStates: schedule.include_all_states,
        formats,
      };
      const key = batchKey(work.scheduleID, batchAt);
      if (await claimBatchTime(sql, schedule.id, batchAt, { subject: closingWorkSubject(work), payload: work, msgId: key })) claimed.push(work);
    }
    if (claimed.length) {
      log.debug({ batches: claimed.map((w) => w.type === 'batch' && batchKey(w.scheduleID, new Date(w.batchAt))) }, 'closing batches claimed');
      deps.claimed?.();
    }
    return claimed;
  };

  // A tick starts only after the one before ended (no overlap), then the timer waits again.
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick()
        .catch((err: unknown) => logLoopFailure(log, err, 'closing batch tick failed'))
        .finally(schedule);
    }, tickMs);
  };

  return {
    tick,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
