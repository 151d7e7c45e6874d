import type { JetStreamClient } from '@nats-io/jetstream';
import type { Logger } from '../../src/logger.js';
import { logLoopFailure, type Sql } from '../../src/infra/postgres.js';
import { takeOldestEvents, vacuumOutbox } from './sql.js';

/**
 * Publishes the outbox to JetStream: the oldest events first, each with Nats-Msg-Id = its row id,
 * taken out in a transaction that commits once the stream acknowledged them. If the process dies
 * in between, the rows are published again and the stream drops the repeats (duplicate window).
 *
 * Every worker process runs one; an advisory lock lets one publish at a time, so the events of a
 * process leave in the order they were written. Writers nudge their relay after a commit; a poll
 * catches rows whose writer's relay was busy or gone.
 */
export interface OutboxRelay {
  /** Events were written: publish them soon. */
  nudge(): void;
  /** Publishes what is waiting (if it can) and stops. */
  stop(): Promise<void>;
}

export interface RelayOptions {
  sql: Sql;
  js: JetStreamClient;
  log: Logger;
  /** How often to look for events nobody nudged about (default 1000 ms). */
  pollMs?: number;
  /**
   * How long a nudge waits for more events to publish in the same batch (default 5 ms): a batch
   * costs three statements whatever its size.
   */
  gatherMs?: number;
  batchSize?: number;
  /** Vacuum the outbox after publishing this many events (default 5000). */
  vacuumEvery?: number;
}

const Locked = -1;
const Failed = -2;

export function startOutboxRelay(options: RelayOptions): OutboxRelay {
  const { sql, js, log, pollMs = 1000, gatherMs = 5, batchSize = 500, vacuumEvery = 5000 } = options;
  let running = true;
  let nudged = false;
  let wake: (() => void) | undefined;

  const relayBatch = () =>
    sql.begin(async (tx) => {
      const { held, rows } = await takeOldestEvents(tx, batchSize);
      if (!held) return Locked;
      // Sent together and acknowledged in order: one connection keeps the publish order.
      await Promise.all(rows.map((row) => js.publish(row.subject, row.payload, { msgID: row.id, timeout: 5000 })));
      return rows.length;
    });

  let soon: NodeJS.Timeout | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => {
      wake = undefined;
      clearTimeout(soon);
      soon = undefined;
    });

  let sinceVacuum = 0;
  const loop = async () => {
    while (running) {
      nudged = false;
      const published = await relayBatch().catch((err: unknown) => {
        logLoopFailure(log, err, 'outbox relay failed; retrying');
        return Failed;
      });
      if (published > 0) sinceVacuum += published;
      if (sinceVacuum >= vacuumEvery) {
        sinceVacuum = 0;
        await vacuumOutbox(sql).catch((err: unknown) => log.warn({ err }, 'outbox vacuum failed'));
      }
      if (published === batchSize) continue;
      // Another relay holds the lock: it may have read before our rows committed, so look again soon.
      // Nudged meanwhile: gather what the next few milliseconds write into the same batch.
      await pause(published === Locked ? 25 : published === Failed ? 1000 : nudged ? gatherMs : pollMs);
    }
  };
  const done = loop();

  return {
    nudge() {
      nudged = true;
      if (wake && !soon) soon = setTimeout(() => wake?.(), gatherMs);
    },
    async stop() {
      running = false;
      wake?.();
      await done;
      // What the last handlers wrote leaves now rather than with the next start.
      while ((await relayBatch().catch(() => Failed)) === batchSize);
    },
  };
}
