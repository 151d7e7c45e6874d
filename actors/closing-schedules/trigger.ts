import cron, { type ScheduledTask } from 'node-cron';
import { latestFireAtOrBefore } from '../../src/domain/closings/schedule.js';
import { logLoopFailure, type Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { closingWorkSubject, triggerKey, type ClosingWork } from '../../subjects/closings.js';
import { claimFireTime, schedulesToTick } from './sql.js';

/**
 * The schedule trigger of a worker process. Every minute (node-cron) it ticks: for each schedule it
 * works out the latest fire time that is due in the schedule's zone, and claims it if the schedule
 * has not fired at or after it (claimFireTime: one statement that moves the schedule's watermark,
 * inserts the claim, unique on schedule and fire time, and writes the trigger to the outbox with
 * Nats-Msg-Id `<scheduleId>:<fireTimeISO>`). Every worker process ticks; each fire time is claimed
 * once. Fire times missed while every worker was down are caught up by the next tick as one
 * trigger (the latest), so one closing covers what was missed.
 *
 * The clock is a dependency: tests drive `tick(now)` with the times they need (DST days).
 */
export interface ScheduleTrigger {
  /** Claims what is due at `now` (default: the clock); answers the claimed triggers. */
  tick(now?: Date): Promise<ClosingWork[]>;
  /** Ticks every minute until stop(). */
  start(): void;
  /** Stops ticking and waits for a running tick. */
  stop(): Promise<void>;
}

export interface ScheduleTriggerDeps {
  sql: Sql;
  log: Logger;
  now?: () => Date;
  /** Called after a tick wrote triggers (wakes the outbox relay). */
  claimed?: () => void;
}

export function createScheduleTrigger(deps: ScheduleTriggerDeps): ScheduleTrigger {
  const { sql, log } = deps;
  const now = deps.now ?? (() => new Date());
  let task: ScheduledTask | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const tick = async (at = now()): Promise<ClosingWork[]> => {
    const claimed: ClosingWork[] = [];
    for (const schedule of await schedulesToTick(sql)) {
      let fireAt: Date | undefined;
      try {
        fireAt = latestFireAtOrBefore(schedule, at);
      } catch (err) {
        log.error({ err, scheduleId: schedule.id }, 'closing schedule has no fire time');
        continue;
      }
      if (!fireAt || fireAt <= schedule.fired_until) continue;
      const work: ClosingWork = {
        type: 'trigger',
        project: schedule.project,
        shopID: schedule.shop_id,
        scheduleID: Number(schedule.id),
        fireAt: fireAt.toISOString(),
        mode: schedule.mode,
        includeAllStates: schedule.include_all_states,
        formats: schedule.formats,
        location: schedule.location,
      };
      const key = triggerKey(work.scheduleID, fireAt);
      if (await claimFireTime(sql, schedule.id, fireAt, { subject: closingWorkSubject(work), payload: work, msgId: key })) claimed.push(work);
    }
    if (claimed.length) {
      log.info({ triggers: claimed.map((w) => w.type === 'trigger' && triggerKey(w.scheduleID, new Date(w.fireAt))) }, 'closing schedules fired');
      deps.claimed?.();
    }
    return claimed;
  };

  return {
    tick,
    start() {
      task ??= cron.schedule('* * * * *', () => {
        running = tick().catch((err: unknown) => logLoopFailure(log, err, 'closing schedule tick failed'));
        return running;
      }, { name: 'closing-schedules', noOverlap: true });
    },
    async stop() {
      await task?.destroy();
      task = undefined;
      await running;
    },
  };
}
