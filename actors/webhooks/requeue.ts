import type { Logger } from '../../src/logger.js';
import type { Sql } from '../../src/infra/postgres.js';
import { webhookJobText, WebhookEventsPerJob } from '../../subjects/integrations.js';
import { insertOutbox, type OutboxEvent } from '../outbox/sql.js';
import { resendJobs } from '../outbox/resend.js';
import { parkAllUndone, takeDueMessages, type DueMessage } from './sql.js';

/**
 * Parked webhook deliveries go out again once due (actors/webhooks/handler.ts parks the events of
 * a receiver that fails, instead of holding their job in JetStream, where the consumer's places in
 * flight are every project's). Every webhook worker process ticks each RequeueEveryMs; an advisory
 * lock lets one of them take the due deliveries (a bounded batch, marked queued in the same
 * transaction that writes their jobs to the outbox).
 *
 * After JOBS was lost, `resend` parks every delivery not made (its job went with the stream): the
 * next ticks send each again when it is due.
 */
export interface WebhookRequeue {
  /** Sends what is due now (and what a tick would have). */
  tick(): Promise<number>;
  /** JOBS was lost: every delivery not made goes again (once per life of the stream, whichever process gets it). */
  resend(life: string): Promise<void>;
  stop(): Promise<void>;
}

const RequeueEveryMs = 1000;
const RequeueBatch = 2000;
const RequeueLock = 7_420_047;

export function startWebhookRequeue(deps: { sql: Sql; log: Logger; eventsWritten: () => void }): WebhookRequeue {
  const { sql, log } = deps;
  let running: Promise<number> | undefined;
  const once = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const sent = await sql.begin(async (tx) => {
        const [lock] = await tx<{ held: boolean }[]>`select pg_try_advisory_xact_lock(${RequeueLock}) as held`;
        if (!lock?.held) return 0;
        const due = await takeDueMessages(tx, RequeueBatch);
        await insertOutbox(tx, jobsOf(due));
        return due.length;
      });
      total += sent;
      if (sent) deps.eventsWritten();
      if (sent < RequeueBatch) return total;
    }
  };
  const tick = () => {
    running ??= once()
      .catch((err: unknown) => {
        log.warn({ err }, 'parked webhook deliveries could not be sent again now; tried again shortly');
        return 0;
      })
      .finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => void tick(), RequeueEveryMs);
  timer.unref();
  return {
    tick,
    async resend(life) {
      let parked = 0;
      const claimed = await resendJobs(sql, 'webhook', life, async (tx) => {
        parked = await parkAllUndone(tx);
        return [];
      });
      if (claimed !== undefined) log.warn({ deliveries: parked }, 'webhook deliveries not made were sent again from Postgres (JOBS was lost)');
      await tick();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** The jobs of due deliveries: each webhook's events in order, WebhookEventsPerJob to a job, each job with a Nats-Msg-Id of its own. */
function jobsOf(due: readonly DueMessage[]): OutboxEvent[] {
  const byWebhook = new Map<string, DueMessage[]>();
  for (const m of due) {
    const key = `${m.project}/${m.integration_id}`;
    const list = byWebhook.get(key) ?? [];
    list.push(m);
    byWebhook.set(key, list);
  }
  const at = Date.now();
  const jobs: OutboxEvent[] = [];
  for (const list of byWebhook.values()) {
    list.sort((a, b) => a.written_at.localeCompare(b.written_at));
    for (const part of runsOf(list)) {
      const job = webhookJobText(
        part.map((m) => ({ id: m.event_id, subject: m.subject, payload: m.payload, writtenAt: m.written_at })),
        part[0]!.integration_id,
      );
      jobs.push({ subject: job.subject, payload: JSON.parse(job.payload) as unknown, msgId: `${job.msgId}:requeued:${at}` });
    }
  }
  return jobs;
}

/** What a requeued job carries at most (an event goes in as a JSON string: each byte at most twice). */
const JobBytes = 400_000;

/** Deliveries in runs of at most WebhookEventsPerJob and about JobBytes. */
function* runsOf(list: readonly DueMessage[]): Generator<DueMessage[]> {
  let run: DueMessage[] = [];
  let bytes = 0;
  for (const m of list) {
    const size = 2 * Buffer.byteLength(m.payload) + 1024;
    if (run.length && (run.length === WebhookEventsPerJob || bytes + size > JobBytes)) {
      yield run;
      run = [];
      bytes = 0;
    }
    run.push(m);
    bytes += size;
  }
  if (run.length) yield run;
}
