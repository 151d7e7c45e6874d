import { createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../src/logger.js';
import { errorReason, isDatabaseUnreachable, type Sql } from '../../src/infra/postgres.js';
import { createOutageLog, type OutageLog } from '../../src/infra/outage-log.js';
import { setAsideUnpublishable, takeOldestEvents, vacuumOutbox, type OutboxRow } from './sql.js';
import { webhookJobText, WebhookEventsPerJob } from '../../subjects/integrations.js';
import { BundledJobKinds, JobBundleHeader, jobBundleSubject, type JobKind } from '../../subjects/jobs.js';

/**
 * Publishes the outbox to JetStream: the oldest events first, each with Nats-Msg-Id = its row id
 * (and the batch's webhook deliveries after them: a job per webhook, with the events it asks for;
 * the batch's jobs of a bundled kind leave together too, as bundles: subjects/jobs.ts),
 * taken out in a transaction that commits once the stream acknowledged them. If the process dies
 * in between, the rows are published again and the stream drops the repeats (duplicate window).
 * A batch leaves as one write with one reply subscription (publishBatch), its acks awaited together.
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
  nc: NatsConnection;
  log: Logger;
  /** How often to look for events nobody nudged about (default 1000 ms). */
  pollMs?: number;
  /** How long a nudge waits for more events to publish in the same batch (default RelayGatherMs). */
  gatherMs?: number;
  batchSize?: number;
  /** Vacuum the outbox after publishing this many events (default 5000). */
  vacuumEvery?: number;
}

/**
 * How long a nudge waits for more events to publish in the same batch. A batch costs three
 * statements and a JetStream round trip whatever its size, and carries one delivery job per webhook
 * and one bundle per kind of job: at some 190 sales a second, 20 ms made webhook jobs of 52 events
 * instead of 31 and cut what a delivery costs the platform by about a quarter (`npm run bench --
 * webhooks`, 2026-11-27, 5 ms before). Events reach JetStream some 15 ms later for it; nobody waits
 * for them on the HTTP path.
 */
const RelayGatherMs = 20;

const Locked = -1;
const Failed = -2;

export function startOutboxRelay(options: RelayOptions): OutboxRelay {
  const { sql, nc, log, pollMs = 1000, gatherMs = RelayGatherMs, batchSize = 500, vacuumEvery = 5000 } = options;
  const publisher = createBatchPublisher(nc);
  let running = true;
  let nudged = false;
  let wake: (() => void) | undefined;

  const relayBatch = () =>
    sql.begin(async (tx) => {
      const { held, rows } = await takeOldestEvents(tx, batchSize);
      if (!held) return Locked;
      // A row no message can carry would fail the batch on every try, and every row after it would wait.
      const limit = messageBytes(nc);
      const fits = (row: OutboxRow) => Buffer.byteLength(row.payload) + row.subject.length <= limit;
      const tooLarge = rows.filter((row) => !fits(row));
      if (tooLarge.length) {
        await setAsideUnpublishable(tx, tooLarge);
        for (const row of tooLarge) {
          log.error({ subject: row.subject, id: row.id, seq: row.seq, bytes: Buffer.byteLength(row.payload), limit }, 'an outbox row over the NATS message limit was set aside (outbox_unpublishable), not published');
        }
      }
      await publisher.publish(tooLarge.length ? rows.filter(fits) : rows, AckTimeoutMs);
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
  const outage = streamOutage(log);
  const database = databaseOutage(log);
  let lastRound = 0;
  const loop = async () => {
    while (running) {
      nudged = false;
      const published = await relayBatch().catch((err: unknown) => {
        if (isDatabaseUnreachable(err)) {
          database.failed({ reason: errorReason(err) });
          return Failed;
        }
        database.over();
        if (err instanceof StreamUnavailableError) outage.failed({ reason: err.message });
        else log.error({ err }, 'outbox relay failed; retrying');
        return Failed;
      });
      lastRound = published;
      if (published >= 0) {
        outage.over();
        database.over();
      }
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
      // What the last handlers wrote leaves now rather than with the next start; not while the
      // database or the stream fails (a stop waits for neither: the next relay publishes it).
      if (lastRound !== Failed) while ((await relayBatch().catch(() => Failed)) === batchSize);
      publisher.close();
    },
  };
}

/** How long a batch waits for the stream's acks before it is given up (and published again). */
const AckTimeoutMs = 5000;

/**
 * The stream did not take a batch: it answered 503 (no node leads it now: a node lost, a leader
 * being elected) or did not answer in time. The events stay in the outbox and go again.
 */
class StreamUnavailableError extends Error {
  override name = 'StreamUnavailableError';
}

/** Says a stream outage once, not at every retry (src/infra/outage-log.ts). */
function streamOutage(log: Logger): OutageLog {
  return createOutageLog(log, {
    begins: 'the stream does not take events now; they wait in the outbox, tried again every second',
    lasts: 'the stream has not taken events for a while; they wait in the outbox',
    over: 'the stream takes events again',
  });
}

/** Says once that no Postgres takes writes (a restart, a failover under way), not at every retry. */
function databaseOutage(log: Logger): OutageLog {
  return createOutageLog(log, {
    begins: 'the database takes no writes now; the events wait in the outbox, tried again every second',
    lasts: 'the database has taken no writes for a while; the events wait in the outbox',
    over: 'the database takes writes again',
  });
}

/**
 * Publishes a batch of rows to JetStream the cheap way: each row a plain publish with its
 * Nats-Msg-Id and a reply subject under the relay's one inbox (rather than a request each, with its
 * own reply handler and timer), all written to the socket together, and the stream's acks awaited
 * together under one timer. Sent in order on one connection, they are stored in that order. Fails
 * when the stream refuses a row, nothing answers (no stream), or an ack is missing at the timeout.
 */
function createBatchPublisher(nc: NatsConnection) {
  const inbox = createInbox();
  let batchNo = 0;
  let waiting: { batch: number; left: number; done(err?: Error): void } | undefined;
  const subscription = nc.subscribe(`${inbox}.>`, {
    callback: (_err, msg) => {
      const [batch] = msg.subject.slice(inbox.length + 1).split('.');
      if (!waiting || Number(batch) !== waiting.batch) return; // an ack of a batch given up before
      const refusal = refusalOf(msg);
      if (refusal) return waiting.done(refusal.startsWith('503') ? new StreamUnavailableError(`the stream refused an event: ${refusal}`) : new Error(`the stream refused an event: ${refusal}`));
      if (--waiting.left === 0) waiting.done();
    },
  });
  return {
    publish(rows: readonly OutboxRow[], timeoutMs: number): Promise<void> {
      if (!rows.length) return Promise.resolve();
      const batch = ++batchNo;
      const maxBytes = messageBytes(nc);
      const { alone, bundles } = bundleJobs(rows, maxBytes);
      // The batch's webhook deliveries leave with its events: a job per webhook for the events it asks for.
      const jobs = [...webhookJobs(rows, maxBytes)];
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => waiting?.done(new StreamUnavailableError(`no ack from the stream within ${timeoutMs} ms`)), timeoutMs);
        waiting = {
          batch,
          left: alone.length + bundles.length + jobs.length,
          done: (err) => {
            clearTimeout(timer);
            waiting = undefined;
            if (err) reject(err);
            else resolve();
          },
        };
        let i = 0;
        const send = (subject: string, msgId: string, payload: string, bundled?: number) => {
          const h = headers();
          h.set('Nats-Msg-Id', msgId);
          if (bundled !== undefined) h.set(JobBundleHeader, String(bundled));
          nc.publish(subject, payload, { reply: `${inbox}.${batch}.${i++}`, headers: h });
        };
        for (const row of alone) send(row.subject, row.id, row.payload);
        for (const bundle of bundles) send(bundle.subject, bundle.msgId, bundle.payload, bundle.jobs);
        for (const job of jobs) send(job.subject, job.msgId, job.payload);
      });
    },
    close: () => subscription.unsubscribe(),
  };
}

/** The events of a batch each webhook asks for, in order. */
function eventsByWebhook(rows: readonly OutboxRow[]): Map<string, OutboxRow[]> {
  const byWebhook = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    for (const integration of row.webhooks ?? []) {
      const list = byWebhook.get(integration) ?? [];
      list.push(row);
      byWebhook.set(integration, list);
    }
  }
  return byWebhook;
}

/** NATS's message limit when the server names none. */
const DefaultMaxPayload = 1024 * 1024;
/** What a job's headers and subject may take of a message. */
const HeaderRoom = 8 * 1024;

/** What a message may carry besides its headers, on the server the relay is connected to. */
function messageBytes(nc: NatsConnection): number {
  return (nc.info?.max_payload ?? DefaultMaxPayload) - HeaderRoom;
}
/** A job's fields around an event's JSON (its id, type, subject, time), or a bundled job's around its payload, at most. */
const EventFieldBytes = 1024;

/**
 * Splits items, in order, into runs of at most `maxCount` items and `maxBytes` (by `bytesOf`); an
 * item that would not fit a run with others is a run of its own.
 */
function* runs<T>(items: readonly T[], maxCount: number, maxBytes: number, bytesOf: (item: T) => number): Generator<T[]> {
  let run: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = bytesOf(item);
    if (run.length && (run.length === maxCount || bytes + size > maxBytes)) {
      yield run;
      run = [];
      bytes = 0;
    }
    run.push(item);
    bytes += size;
  }
  if (run.length) yield run;
}

/**
 * Each webhook's jobs: its events in order, at most WebhookEventsPerJob and `maxBytes` to a job (an
 * event's JSON goes in as a JSON string: escaped, each byte at most twice).
 */
function* webhookJobs(rows: readonly OutboxRow[], maxBytes: number) {
  for (const [integration, events] of eventsByWebhook(rows)) {
    for (const run of runs(events, WebhookEventsPerJob, maxBytes, (row) => 2 * Buffer.byteLength(row.payload) + EventFieldBytes)) yield jobOf(run, integration);
  }
}

/** Jobs in one bundle at most. */
const JobsPerBundle = 100;

/**
 * The batch's rows that leave alone (events, jobs of kinds that are not bundled, a job with no
 * other of its kind), and its bundles: the jobs of each bundled kind in order, at most
 * JobsPerBundle and `maxBytes` to a bundle, each job's payload in it as written.
 */
function bundleJobs(rows: readonly OutboxRow[], maxBytes: number) {
  const alone: OutboxRow[] = [];
  const byKind = new Map<JobKind, OutboxRow[]>();
  for (const row of rows) {
    const kind = bundledKindOf(row.subject);
    if (!kind) alone.push(row);
    else if (byKind.has(kind)) byKind.get(kind)!.push(row);
    else byKind.set(kind, [row]);
  }
  const bundles: Array<{ subject: string; msgId: string; payload: string; jobs: number }> = [];
  for (const [kind, jobs] of byKind) {
    for (const run of runs(jobs, JobsPerBundle, maxBytes, (row) => Buffer.byteLength(row.payload) + row.subject.length + row.id.length + EventFieldBytes)) {
      if (run.length === 1) {
        alone.push(run[0]!);
        continue;
      }
      const members = run.map((row) => `{"subject":${JSON.stringify(row.subject)},"msgId":${JSON.stringify(row.id)},"payload":${row.payload}}`);
      bundles.push({ subject: jobBundleSubject(kind), msgId: `bundle:${kind}:${run[0]!.id}:${run.length}:${run.at(-1)!.id}`, payload: `{"jobs":[${members.join(',')}]}`, jobs: run.length });
    }
  }
  return { alone, bundles };
}

/** The kind of a job row whose kind is bundled, or undefined (an event, another kind). */
function bundledKindOf(subject: string): JobKind | undefined {
  if (!subject.startsWith('jobs.')) return undefined;
  return BundledJobKinds.find((kind) => subject.startsWith(`jobs.${kind}.`));
}

function jobOf(rows: readonly OutboxRow[], integration: string) {
  return webhookJobText(rows.map((row) => ({ id: row.id, subject: row.subject, payload: row.payload, writtenAt: row.written_at })), integration);
}

/** Why the stream did not take a published row, or undefined for its ack. */
function refusalOf(msg: Msg): string | undefined {
  if (msg.headers?.hasError) return `${msg.headers.code} ${msg.headers.description}`;
  try {
    const ack = msg.json<{ error?: { code?: number; description?: string } }>();
    return ack.error ? `${ack.error.code ?? ''} ${ack.error.description ?? ''}`.trim() : undefined;
  } catch {
    return 'an answer that is not a JetStream ack';
  }
}
