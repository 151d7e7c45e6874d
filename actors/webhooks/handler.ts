import type { KeyObject } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { AppError } from '../../src/errors.js';
import type { DestinationPolicy } from '../../src/infra/destinations.js';
import type { Metrics } from '../../src/infra/metrics.js';
import type { Config } from '../../src/config.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { readJob, retryDelay, startBatchJobConsumer, type Job, type JobConsumer, type JobOutcome } from '../../src/messaging/jobs.js';
import { route, type Route } from '../../src/messaging/worker.js';
import type { KeyRing } from '../../src/secrets/key-ring.js';
import { integrations, WebhookJob, WebhookJobFilter, webhookJobText, type WebhookEvent } from '../../subjects/integrations.js';
import { insertOutbox } from '../outbox/sql.js';
import { JobStream } from '../../subjects/jobs.js';
import { webhookSecretPurpose } from './secrets.js';
import { createSender, type Sender, type SendResult } from './sender.js';
import { createDeliverySlots } from './slots.js';
import { startWebhookRequeue } from './requeue.js';
import { webhookSignature, webhookSigningKey } from './signature.js';
import { findIntegration } from '../integrations/sql.js';
import * as db from './sql.js';

/**
 * Webhook deliveries (docs/integrators.md, "Webhooks"): the relay publishes a job per event and
 * webhook that asks for it; this pool POSTs each in Standard Webhooks' form, signed, and records
 * every attempt before the job is acked. At least once: a worker that dies mid-delivery leaves the
 * job to another, which sends it again with the same webhook-id; a delivery recorded (a 2xx) is
 * never sent again, unless the owner asks for it.
 *
 * A failed attempt (not 2xx, a timeout, a connection that failed) is tried again on the schedule;
 * while a webhook's receiver fails, its other events wait for its next try instead of each trying
 * (one of a batch probes it), so a receiver that hangs holds up no other webhook. What waits is
 * parked in Postgres and its job acked (requeue.ts sends it again when due): a tenant whose
 * receiver is down holds no place of the consumer's max_ack_pending, which every project shares. After
 * WEBHOOK_MAX_ATTEMPTS failures in a row the webhook is disabled with the reason; an event is given
 * up after as many attempts of its own.
 */
export interface WebhooksDeps {
  sql: Sql;
  nc: NatsConnection;
  log: Logger;
  secrets: KeyRing;
  /** Where webhooks may be sent (WEBHOOK_ALLOW_PRIVATE_NETWORKS), and how their names are resolved. */
  destinations: DestinationPolicy;
  webhooks: Pick<Config['webhooks'], 'timeoutMs' | 'retryScheduleMs' | 'maxAttempts' | 'senders' | 'projectConcurrency' | 'originConcurrency' | 'slowMs'>;
  metrics?: Pick<Metrics, 'jobsExhausted' | 'webhookDeliveries'>;
  /** A change wrote to the outbox (a redelivery's job): publish it soon. */
  eventsWritten: () => void;
  /** The software's name and version, for the User-Agent. */
  userAgent: string;
}

export interface WebhooksActor {
  routes: Route[];
  /** The age in seconds of the oldest event that waits for its webhook delivery (0: none), for /metrics. */
  backlogSeconds(): Promise<number>;
  /** The pool that delivers; none when WEBHOOK_SENDERS is 0. */
  startDeliveries(): Promise<JobConsumer | undefined>;
  close(): Promise<void>;
}

/** How long a job waits, at least, before it comes back (a worker that died mid-delivery: another takes it then). */
const RedeliveryMs = 5000;

export function createWebhooksActor(deps: WebhooksDeps): WebhooksActor {
  const { sql, log, secrets, webhooks } = deps;
  const slots = createDeliverySlots({ perProject: webhooks.projectConcurrency, perOrigin: webhooks.originConcurrency });
  const sender: Sender = createSender(deps.destinations, webhooks.originConcurrency);
  // Signing keys by their sealed secret: opened once (a rotation seals a new one).
  const opened = new Map<string, KeyObject>();
  const open = (sealed: string, project: string, integrationID: string) => {
    let key = opened.get(sealed);
    if (key === undefined) {
      key = webhookSigningKey(secrets.open(sealed, webhookSecretPurpose(project, integrationID)));
      if (opened.size >= 10_000) opened.clear();
      opened.set(sealed, key);
    }
    return key;
  };

  /**
   * Attempts are recorded as they end, those that end within RecordGatherMs of each other in one
   * statement (a batch's deliveries do not wait for its slowest: a receiver that hangs holds up no
   * other's record, nor its ack).
   */
  const recorder = gatherer(RecordGatherMs, async (records: db.AttemptRecord[]) => {
    const disabled = await db.recordAttempts(sql, records, webhooks.retryScheduleMs, webhooks.maxAttempts);
    for (const integration of disabled) log.error({ integration }, 'webhook disabled: its deliveries failed too many times in a row');
  });

  /**
   * One event's attempt: sent, recorded; answers when it may be tried again (undefined: it is done)
   * and whether the receiver answered well (a 2xx within WEBHOOK_SLOW_MS: a slow one is delivered,
   * and counts as a failure for the webhook's back-off).
   */
  const deliver = async (job: WebhookJob, webhook: db.WebhookState, event: WebhookEvent, state: db.EventState): Promise<{ retryInMs: number | undefined; well: boolean; tookMs: number }> => {
    const attempt = state.attempts + 1;
    const payload = event.event;
    const body = `{"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(event.writtenAt)},"data":${payload}}`;
    const signing = [open(webhook.secret, job.project, job.integrationID), ...(webhook.previous_secret ? [open(webhook.previous_secret, job.project, job.integrationID)] : [])];
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': deps.userAgent,
      'webhook-id': event.eventID,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': webhookSignature(signing, event.eventID, timestamp, body),
    };
    const sent = await sender.send(webhook.url, headers, body, webhooks.timeoutMs);
    const slow = sent.delivered && sent.durationMs > webhooks.slowMs;
    deps.metrics?.webhookDeliveries.inc({ result: slow ? 'slow' : resultLabel(sent) });
    const last = !sent.delivered && attempt >= webhooks.maxAttempts;
    const retryInMs = sent.delivered || last ? undefined : retryDelay(webhooks.retryScheduleMs, attempt);
    await recorder({
      project: job.project,
      integrationID: job.integrationID,
      eventID: event.eventID,
      eventType: event.type,
      subject: event.subject,
      payload,
      writtenAt: event.writtenAt,
      attempt,
      status: sent.status,
      durationMs: sent.durationMs,
      response: sent.response,
      delivered: sent.delivered,
      slow,
      givenUp: last,
      retryInMs: retryInMs ?? null,
    });
    const context = { project: job.project, integration: job.integrationID, event: event.eventID, attempt, status: sent.status };
    if (last) {
      log.error(context, 'webhook delivery given up after its last attempt');
      deps.metrics?.jobsExhausted.inc({ kind: 'webhook' });
    } else if (!sent.delivered) {
      log.warn(context, 'webhook delivery failed; it will be tried again');
    } else if (slow) {
      log.warn({ ...context, durationMs: sent.durationMs }, 'webhook delivered slowly; its other events wait for its next try');
    }
    return { retryInMs, well: sent.delivered && !slow, tookMs: sent.durationMs };
  };

  /**
   * One job: its webhook's events, each sent on its own unless delivered or given up already. While
   * the webhook's receiver fails, the job waits for its next try, and then one event tries it. The
   * events go out on the lanes the job gets of its project's and its origin's (slots.ts), side by
   * side, one after another on each; none free: the job comes again shortly. Once an attempt fails
   * or is slow, no more of the job's events are sent now: they wait for the webhook's next try. The
   * job is done when each of its events is; else it comes back when the earliest of them may be
   * tried again. An event that another job of the batch carries too (a redelivery by hand while its
   * job waits, say) is that job's to send.
   */
  const deliverJob = async (job: WebhookJob, batch: BatchContext): Promise<JobOutcome> => {
    const integration = db.webhookKey(job.project, job.integrationID);
    const webhook = batch.webhooks.get(integration);
    if (webhook?.state !== 'active') return { kind: 'done' };
    const open = job.events
      .map((event) => ({ event, state: webhook.tried.get(event.eventID) ?? db.NotTried }))
      .filter(({ event, state }) => !state.delivered && !state.given_up && claim(batch.sending, `${job.integrationID}:${event.eventID}`));
    if (!open.length) return { kind: 'done' };
    // What waits for a later try is parked in Postgres (its job done): a receiver that fails holds no place in JetStream.
    const park = async (afterMs: number): Promise<JobOutcome> => {
      await db.parkMessages(sql, job.project, job.integrationID, open.map(({ event }) => event), afterMs);
      return { kind: 'done' };
    };
    if (webhook.failed_attempts > 0 && (webhook.integration_wait_ms ?? 0) > 0) return park(webhook.integration_wait_ms! + jitter());
    const due = open.filter(({ state }) => (state.message_wait_ms ?? 0) <= 0);
    const later = open.filter(({ state }) => (state.message_wait_ms ?? 0) > 0).map(({ state }) => state.message_wait_ms!);
    // A receiver that failed is tried with one event (of one job of the batch) until it answers again.
    const failing = webhook.failed_attempts > 0;
    const now = !failing ? due : batch.probing.has(integration) ? [] : due.slice(0, 1);
    if (now.length < due.length) later.push(1000 + jitter());
    if (!now.length) return later.length ? park(Math.min(...later)) : { kind: 'done' };
    const origin = originOf(webhook.url);
    const lanes = slots.take(job.project, origin, now.length);
    if (lanes === 0) return { kind: 'retry', reason: 'its project or its receiver has as many deliveries under way as it may', afterMs: slots.deferMs(origin) };
    if (failing) batch.probing.add(integration);
    const queue = [...now];
    const retries: number[] = [];
    let holding = false;
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        let tookMs = 0;
        try {
          // An event is taken from the queue only to be sent: what is left when the receiver fails waits in it.
          for (let next = holding ? undefined : queue.shift(); next; next = holding ? undefined : queue.shift()) {
            const attempt = await deliver(job, webhook, next.event, next.state);
            tookMs = attempt.tookMs;
            if (attempt.retryInMs !== undefined) retries.push(attempt.retryInMs);
            if (!attempt.well) holding = true;
          }
        } finally {
          slots.give(job.project, origin, tookMs);
        }
      }),
    );
    // Events not sent because the receiver failed or was slow: its next try, which the webhook now waits for.
    if (queue.length) later.push(retryDelay(webhooks.retryScheduleMs, 1) + jitter());
    const waits = [...later, ...retries];
    return waits.length ? park(Math.min(...waits)) : { kind: 'done' };
  };

  /** A batch's webhooks, and what was done of its events, are read in one statement; each job then goes its own way. */
  const deliverBatch = (jobs: readonly Job[]): Array<Promise<JobOutcome>> => {
    const parsed = jobs.map((job) => readJob(WebhookJob, job, log, 'webhook delivery job'));
    const byWebhook = new Map<string, { project: string; integrationID: string; eventIDs: string[] }>();
    for (const job of parsed) {
      if (!job) continue;
      const key = db.webhookKey(job.project, job.integrationID);
      const entry = byWebhook.get(key) ?? { project: job.project, integrationID: job.integrationID, eventIDs: [] };
      entry.eventIDs.push(...job.events.map((e) => e.eventID));
      byWebhook.set(key, entry);
    }
    const context = db.readDeliveries(sql, [...byWebhook.values()]).then((webhooks): BatchContext => ({ webhooks, probing: new Set(), sending: new Set() }));
    return parsed.map(async (job): Promise<JobOutcome> => (job ? deliverJob(job, await context) : { kind: 'done' }));
  };

  const routes = [
    route(integrations.deliveries, async ({ project, id, after, limit }) => {
      await ensureWebhook(sql, project, id);
      // One row more than the page: whether a next page exists, without counting.
      const [rows, totalItems] = await Promise.all([db.listAttempts(sql, project, id, after, limit + 1), db.countAttempts(sql, project, id)]);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        totalItems,
        deliveries: page.map((r) => ({ eventId: r.event_id, eventType: r.event_type, attempt: r.attempt, at: r.at.toISOString(), status: r.status, durationMs: r.duration_ms, response: r.response })),
        ...(rows.length > limit && last ? { next: { at: last.at_key, eventId: last.event_id, attempt: last.attempt } } : {}),
      };
    }),

    route(integrations.redeliver, async ({ project, id, eventId }) => {
      await sql.begin(async (tx) => {
        const integration = await ensureWebhook(tx, project, id);
        if (integration.state !== 'active') throw AppError.conflict('the webhook is disabled: enable it first (PATCH {state: "active"})', 'integration_disabled');
        const message = await db.reopenMessage(tx, { project, integrationID: id, eventID: eventId });
        if (!message) throw AppError.notFound(`no delivery of event ${eventId} to this webhook`);
        const job = webhookJobText([{ id: eventId, subject: message.subject, payload: message.payload, writtenAt: message.written_at }], id);
        // A job of its own (a Nats-Msg-Id of its own): the first one's is remembered by the stream for a while.
        await insertOutbox(tx, [{ subject: job.subject, payload: JSON.parse(job.payload) as unknown, msgId: `${job.msgId}:again:${Date.now()}` }]);
      });
      deps.eventsWritten();
      log.info({ project, integration: id, event: eventId }, 'webhook delivery asked for again');
      return { eventId, queued: true as const };
    }),
  ];

  return {
    routes,
    async backlogSeconds() {
      // The oldest delivery job still in JOBS (a work queue: a delivered one is gone), by when the relay stored it.
      const reply = await deps.nc.request(`$JS.API.STREAM.MSG.GET.${JobStream.name}`, JSON.stringify({ seq: 1, next_by_subj: WebhookJobFilter }), { timeout: 2000 });
      const answer = reply.json<{ message?: { time: string }; error?: { code: number } }>();
      if (!answer.message) return 0;
      return Math.max(0, (Date.now() - Date.parse(answer.message.time)) / 1000);
    },
    async startDeliveries() {
      if (webhooks.senders <= 0) return undefined;
      const requeue = startWebhookRequeue({ sql, log, eventsWritten: deps.eventsWritten });
      const consumer = await startBatchJobConsumer(
        { nc: deps.nc, log, metrics: deps.metrics },
        // JetStream only brings a job back after a worker died with it: the attempts and their schedule are ours.
        {
          durable: 'webhooks', filter: WebhookJobFilter, retryScheduleMs: [RedeliveryMs], maxAttempts: 100_000, concurrency: webhooks.senders, ownSchedule: true,
          // JOBS lost: every delivery not made is parked, and goes again when due (at least once: one under way then may go twice).
          resend: (life) => requeue.resend(life),
        },
        deliverBatch,
      );
      return {
        async stop() {
          await consumer.stop();
          await requeue.stop();
        },
      };
    },
    close: () => sender.close(),
  };
}

async function ensureWebhook(db: Sql | TransactionSql, project: string, id: string): Promise<{ state: string }> {
  const row = await findIntegration(db, project, id);
  if (!row) throw AppError.notFound(`no integration ${id}`);
  if (row.kind !== 'webhook') throw AppError.badRequest(`integration ${id} is not a webhook: it has no deliveries`, []);
  return row;
}

/** `delivered`, `rejected` (an answer that is not 2xx), `timeout`, `connection_failed` (and `slow`, a 2xx after WEBHOOK_SLOW_MS, counted by the caller). */
function resultLabel(sent: SendResult): string {
  if (sent.delivered) return 'delivered';
  if (sent.status === 'timeout' || sent.status === 'connection_failed') return sent.status;
  return 'rejected';
}

/**
 * How long the first attempt of a record statement waits for more. A statement costs much the
 * same for one attempt as for thirty (its planning, the round trip, the commit), and a job's
 * deliveries end within a few milliseconds of each other: one statement per job instead of one per
 * three or four attempts cut what an attempt's record costs the worker and Postgres from about 130
 * to 50 µs (2026-11-27). It delays only the job's ack, never a delivery.
 */
const RecordGatherMs = 20;

/**
 * Gathers what callers hand in within `windowMs` of the first into one call of `flush`; each
 * caller's promise settles with that call.
 */
function gatherer<T>(windowMs: number, flush: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let pending: Array<{ item: T; done: () => void; failed: (err: unknown) => void }> = [];
  return (item) =>
    new Promise<void>((resolve, reject) => {
      if (!pending.length) {
        setTimeout(() => {
          const batch = pending;
          pending = [];
          flush(batch.map((p) => p.item)).then(
            () => batch.forEach((p) => p.done()),
            (err: unknown) => batch.forEach((p) => p.failed(err)),
          );
        }, windowMs);
      }
      pending.push({ item, done: resolve, failed: reject });
    });
}

/** A webhook URL's origin (scheme, host, port), what its connections and lanes are counted by; each URL read once. */
const origins = new Map<string, string>();
function originOf(url: string): string {
  let origin = origins.get(url);
  if (origin === undefined) {
    origin = URL.canParse(url) ? new URL(url).origin : url;
    if (origins.size >= 10_000) origins.clear();
    origins.set(url, origin);
  }
  return origin;
}

/** Spreads the events that wait for one receiver over a second. */
function jitter(): number {
  return Math.floor(Math.random() * 1000);
}

/** What the jobs of one batch share: their webhooks as read (with what was done of their events), the webhooks one of them probes, and the events one of them sends. */
interface BatchContext {
  webhooks: Map<string, db.WebhookState>;
  probing: Set<string>;
  sending: Set<string>;
}

/** Adds `key` to `set`; answers whether it was not there yet. */
function claim(set: Set<string>, key: string): boolean {
  if (set.has(key)) return false;
  set.add(key);
  return true;
}
