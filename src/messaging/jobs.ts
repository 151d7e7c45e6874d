import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { tryParseJson } from '../../subjects/formats/json.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../infra/metrics.js';
import { watchStream, type StreamHealer } from '../infra/healing.js';
import { timeNanos, whileJetStreamStarts, type StreamSpec } from '../infra/jetstream.js';
import { JobBundle, JobBundleHeader, JobStream } from '../../subjects/jobs.js';

/**
 * The consuming side of durable work (subjects/jobs.ts): one durable pull consumer per job kind on
 * the stream JOBS, shared by every worker process of that kind (adding a process adds capacity).
 *
 * A handler does a job and says whether it is done or should be tried again later. Done is acked
 * only after the handler returned, so a handler records its result (in Postgres) before the ack; a
 * job whose worker died is delivered again, and the handler must find its recorded result and do
 * nothing. While a handler runs, the job is kept in progress (`working`), so a slow call is never
 * delivered to a second worker. Retries follow the kind's schedule (`retryScheduleMs`: the delay
 * before attempt 2, 3, ...; the last entry repeats), or later when the handler asks for it (a
 * Retry-After). The consumer carries the same schedule as its `backoff` and `maxAttempts` as its
 * `max_deliver` (what nats-server 2.9 has), so redeliveries after a crash follow it too.
 *
 * A bundle (subjects/jobs.ts: the jobs of a kind one outbox batch carried) is taken apart: each of
 * its jobs goes to the handler as if it had come alone, with the bundle's delivery count as its
 * attempt. The bundle is acked when all its jobs are done, and tried again (all of them: a job done
 * before finds what it recorded and does nothing) after the shortest delay one of them asks for.
 */
export type JobOutcome = { kind: 'done' } | { kind: 'retry'; reason: string; afterMs?: number };

export interface Job {
  subject: string;
  /** The message's bytes: the payload as JSON text (of a job taken from a bundle, the bundle's). */
  data: Uint8Array;
  /** The payload already read (a bundle's jobs): readJob takes it instead of reading `data`. */
  value?: unknown;
  /** 1 for the first delivery. */
  attempt: number;
  /** No delivery follows this one: the handler must finish the job now (record its failure). */
  lastAttempt: boolean;
  /** The Nats-Msg-Id it was published with (the outbox row's id or its msg_id). */
  msgId: string;
}

const utf8 = new TextDecoder();

/**
 * A job's payload read with its schema, or undefined when it cannot be read: such a job never
 * becomes a good one, so its handler drops it (done), and this says so at error level.
 */
export function readJob<T extends z.ZodType>(schema: T, job: Job, log: Logger, what: string): z.output<T> | undefined {
  const parsed = schema.safeParse('value' in job ? job.value : tryParseJson(utf8.decode(job.data)));
  if (parsed.success) return parsed.data;
  log.error({ subject: job.subject, issues: parsed.error.issues }, `${what} that cannot be read was dropped`);
  return undefined;
}

export interface JobConsumerSpec {
  /** The durable consumer's name, shared by every process of the pool. */
  durable: string;
  /** The subjects it takes (jobFilter(kind)). */
  filter: string;
  /** Delay before each further attempt; the last entry repeats until maxAttempts. */
  retryScheduleMs: readonly number[];
  maxAttempts: number;
  /** Jobs one process runs at once (default 16). */
  concurrency?: number;
  /**
   * How long a batch waits, after its first job, for more (at most `concurrency` in all). Unset:
   * a batch is the jobs of one read of the socket. A handler whose batch costs the same whatever
   * its size (one statement each for reading and recording it) trades this much delay for fewer
   * batches.
   */
  gatherMs?: number;
  /**
   * The handler decides every delay itself (its `retry` outcomes' `afterMs`, exactly): the schedule
   * then only paces the redelivery of a job whose worker died with it. Default: a handler's delay
   * can only lengthen the schedule's.
   */
  ownSchedule?: boolean;
  /**
   * Background work that can wait: a job starts only while the process's event loop was busy for
   * at most this share of the last half second (0..1), so that it yields to the requests the
   * process answers (each job waits at most half a minute for that). Unset: jobs start as they come.
   */
  yieldAboveBusyShare?: number;
  /**
   * Sends again, from Postgres, the kind's jobs whose work is not done, after the stream JOBS was
   * lost and made again (src/infra/healing.ts): `life` names the stream's new life (the resent
   * jobs' Nats-Msg-Ids carry it: resentMsgId). Called once per life by each process of the kind;
   * the routine itself makes sure only one of them sends (claimResend).
   */
  resend?: (life: string) => Promise<void>;
  /**
   * How long the resend waits after the loss: a job of the old stream that a worker was doing when
   * it went is finished and recorded meanwhile (the longest call the kind makes), so that the job
   * sent again finds it done. Default 0.
   */
  resendAfterMs?: number;
}

export interface JobConsumer {
  /** Stops taking jobs and waits for the running ones. */
  stop(): Promise<void>;
}

/** The delay before attempt `attempt + 1`. */
export function retryDelay(schedule: readonly number[], attempt: number): number {
  return schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 1000;
}

/** The consumer's backoff: one entry per redelivery (the server wants fewer entries than max_deliver). */
function backoffOf(spec: JobConsumerSpec): number[] {
  return Array.from({ length: Math.min(spec.maxAttempts - 1, 50) }, (_, i) => retryDelay(spec.retryScheduleMs, i + 1));
}

/**
 * The pool's durable consumer, created or brought to the spec. It has as many replicas as the
 * stream (JETSTREAM_REPLICAS, given to the stream at start): a work-queue stream's consumers must
 * match it, and one that was made before the count changed is brought to it by this update.
 */
async function ensureConsumer(nc: NatsConnection, spec: JobConsumerSpec, log: Logger): Promise<number> {
  // Like the streams (ensureStream): a JetStream that does not answer yet (a cluster electing its
  // leader, a server too busy to answer the API in time) is waited for, a refusal is not.
  return whileJetStreamStarts(log, `consumer ${spec.durable}`, async () => {
    const jsm = await jetstreamManager(nc);
    const stream = await jsm.streams.info(JobStream.name);
    await ensureConsumerOn(nc, spec, stream.config.num_replicas);
    return stream.config.num_replicas;
  });
}

/** True when this call made the consumer. */
async function ensureConsumerOn(nc: NatsConnection, spec: JobConsumerSpec, replicas: number): Promise<boolean> {
  const jsm = await jetstreamManager(nc);
  const config = {
    ack_policy: AckPolicy.Explicit,
    filter_subject: spec.filter,
    max_deliver: spec.maxAttempts,
    backoff: backoffOf(spec).map((ms) => nanos(ms)),
    ack_wait: nanos(retryDelay(spec.retryScheduleMs, 1)),
    max_ack_pending: 10_000,
    num_replicas: replicas,
  };
  try {
    await jsm.consumers.info(JobStream.name, spec.durable);
    await jsm.consumers.update(JobStream.name, spec.durable, config);
    return false;
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound)) throw err;
  }
  try {
    await jsm.consumers.add(JobStream.name, { ...config, durable_name: spec.durable, deliver_policy: DeliverPolicy.All });
    return true;
  } catch (err) {
    // Another process created it in between: it has this configuration too.
    await jsm.consumers.info(JobStream.name, spec.durable).catch(() => {
      throw err;
    });
    return false;
  }
}

export interface JobConsumerDeps {
  nc: NatsConnection;
  log: Logger;
  /** Counts the jobs that failed their last attempt (`checkout_jobs_exhausted_total`). */
  metrics?: Pick<Metrics, 'jobsExhausted'>;
}

/** A consumer whose handler takes one job at a time (the jobs it is given at once run side by side). */
export function startJobConsumer(deps: JobConsumerDeps, spec: JobConsumerSpec, handler: (job: Job) => Promise<JobOutcome>): Promise<JobConsumer> {
  return startBatchJobConsumer(deps, spec, (jobs) => jobs.map(handler));
}

/**
 * A consumer whose handler takes the jobs that arrived together (one read of the socket, or those
 * of `gatherMs`; at most `concurrency`) as one batch, and answers one outcome per job, in order: a handler can then read
 * and record a batch in one statement each instead of one per job. Each job is acked (or tried
 * again) as soon as its own outcome is known; one whose outcome is an error is tried again on the
 * schedule.
 */
export async function startBatchJobConsumer(deps: JobConsumerDeps, spec: JobConsumerSpec, handler: (jobs: Job[]) => Array<Promise<JobOutcome>>): Promise<JobConsumer> {
  const { nc, log, metrics } = deps;
  const exhausted = { kind: jobKindOf(spec.filter) };
  const replicas = await ensureConsumer(nc, spec, log);
  const healing = healJobs(nc, log, replicas);
  const unwatch = healing.watch(spec);
  const concurrency = spec.concurrency ?? 16;
  // A pull waits at the consumer's leader; if that node is lost, only missed heartbeats tell (two of
  // them, half a pull's expiry each): pulls of 5 s notice it within 5 s instead of the default 30 s.
  // Asked for like the consumer's making (ensureConsumer): JetStream can have no responders for a
  // moment while the start pushes the platform's account JWT (seen once in CI: the start failed).
  const consumer = await whileJetStreamStarts(log, `consumer ${spec.durable}`, () => jetstream(nc).consumers.get(JobStream.name, spec.durable));
  const messages = await consumer.consume({ max_messages: concurrency, expires: PullExpiresMs });
  // The pull says when its consumer or the stream went: the healer looks at once (it looks every few seconds anyway).
  void (async () => {
    for await (const status of messages.status()) {
      if (status.type === 'consumer_deleted' || status.type === 'consumer_not_found' || status.type === 'stream_not_found') void healing.check();
    }
  })();
  // A job in progress is reported three times within the shortest time the server waits for its
  // ack, so that a process stalled for a moment (a busy machine, a long GC) keeps its job.
  const heartbeatMs = Math.max(50, Math.floor(Math.min(...spec.retryScheduleMs, 30_000) / 3));
  const running = new Set<Promise<void>>();
  const load = spec.yieldAboveBusyShare === undefined ? undefined : watchEventLoop();
  let stopping = false;

  /** A delivered message (a job, or a bundle of jobs): from its arrival until it is settled, kept in progress (`working`). */
  interface Taken {
    msg: JsMsg;
    jobs: Job[];
    heartbeat: NodeJS.Timeout;
  }

  const take = (msg: JsMsg): Taken => {
    const attempt = msg.info.deliveryCount;
    const lastAttempt = attempt >= spec.maxAttempts;
    const base = { attempt, lastAttempt };
    let jobs: Job[];
    if (msg.headers?.get(JobBundleHeader)) {
      const bundle = JobBundle.safeParse(tryParseJson(utf8.decode(msg.data)));
      if (bundle.success) jobs = bundle.data.jobs.map((j) => ({ ...base, subject: j.subject, data: msg.data, value: j.payload, msgId: j.msgId }));
      else {
        log.error({ subject: msg.subject, issues: bundle.error.issues }, 'a job bundle that cannot be read was dropped');
        jobs = [];
      }
    } else {
      jobs = [{ ...base, subject: msg.subject, data: msg.data, msgId: msg.headers?.get('Nats-Msg-Id') ?? '' }];
    }
    return { msg, jobs, heartbeat: setInterval(() => msg.working(), heartbeatMs) };
  };

  /**
   * A message's outcome from its jobs': done when all are; else tried again after the shortest
   * delay one asks for (its schedule's, or later when its handler asks for it). On the last
   * attempt, what did not succeed has given up.
   */
  const settle = (taken: Taken, outcomes: ReadonlyArray<PromiseSettledResult<JobOutcome>>) => {
    const { msg, jobs } = taken;
    // A message of a JOBS that was lost and made again is not settled: nats-server 2.9 takes an ack
    // by the stream sequence it names, and would remove the new stream's message of that number,
    // whoever it was delivered to. Its work, if not done, is sent again from Postgres (healing.ts).
    // A message stored before the stream it would be acked on was made is of the lost one (the
    // pull may have brought it before the loss and the pool taken it after).
    const life = healing.life();
    if (life !== undefined && msg.info.timestampNanos < timeNanos(life)) {
      log.warn({ subject: msg.subject, stream: JobStream.name }, 'a job of a JOBS that was lost is not acked: the stream was made again');
      return;
    }
    const failed = jobs.flatMap((job, i) => {
      const result = outcomes[i]!;
      if (result.status === 'fulfilled' && result.value.kind === 'done') return [];
      return [{ job, outcome: result.status === 'fulfilled' ? (result.value as Extract<JobOutcome, { kind: 'retry' }>) : undefined, err: result.status === 'rejected' ? (result.reason as unknown) : undefined }];
    });
    if (!failed.length) return msg.ack();
    const attempt = msg.info.deliveryCount;
    if (attempt >= spec.maxAttempts) {
      for (const { job, outcome, err } of failed) {
        if (outcome) log.error({ subject: job.subject, attempt, reason: outcome.reason }, 'job gave up after its last attempt');
        else log.error({ err, subject: job.subject, attempt }, 'job failed on its last attempt');
        metrics?.jobsExhausted.inc(exhausted);
      }
      return msg.term(failed[0]!.outcome?.reason ?? 'failed on its last attempt');
    }
    const scheduled = retryDelay(spec.retryScheduleMs, attempt);
    const delays = failed.map(({ job, outcome, err }) => {
      if (!outcome) {
        log.warn({ err, subject: job.subject, attempt }, 'job failed; it will be tried again');
        return scheduled;
      }
      return spec.ownSchedule && outcome.afterMs !== undefined ? outcome.afterMs : Math.max(outcome.afterMs ?? 0, scheduled);
    });
    msg.nak(Math.min(...delays));
  };

  const run = async (batch: Taken[]) => {
    const jobs = batch.flatMap((taken) => taken.jobs);
    // Yields while the process is busy, but not forever: a job waits at most YieldAtMostMs.
    for (let waited = 0; load && load.busyShare() > spec.yieldAboveBusyShare! && waited < YieldAtMostMs && !stopping; waited += LoadPeriodMs) {
      await sleep(LoadPeriodMs);
    }
    // A bundle can bring more jobs than the pool runs at once: they go to the handler `concurrency` at a time.
    const outcomes: Array<Promise<JobOutcome>> = [];
    let previous: Promise<unknown> = Promise.resolve();
    for (let from = 0; from < jobs.length; from += concurrency) {
      const part = jobs.slice(from, from + concurrency);
      const handed = previous.then(() => handler(part));
      const own = part.map((_, i) => handed.then((all) => all[i] ?? Promise.reject(new Error('the handler answered no outcome for this job'))));
      outcomes.push(...own);
      previous = Promise.allSettled(own);
    }
    // Each message's heartbeat stops, and its places free, when its own jobs' outcomes are known.
    let offset = 0;
    await Promise.all(
      batch.map((taken) => {
        const own = outcomes.slice(offset, offset + taken.jobs.length);
        offset += taken.jobs.length;
        return Promise.allSettled(own)
          .then((settled) => settle(taken, settled))
          .finally(() => {
            clearInterval(taken.heartbeat);
            jobsEnded(Math.max(1, taken.jobs.length));
          });
      }),
    );
  };

  // Jobs taken and not yet settled (a bundle's each); the loop waits for some to end when `concurrency` are.
  let inFlight = 0;
  let oneEnded: (() => void) | undefined;
  function jobsEnded(count: number) {
    inFlight -= count;
    oneEnded?.();
  }

  // The messages of one read of the socket come one microtask after another: gathered until the
  // next turn of the event loop (or for gatherMs, or until `concurrency` are taken), they make one
  // batch. `startGathered` starts the batch being gathered at once.
  const afterGathering = spec.gatherMs ? (start: () => void) => setTimeout(start, spec.gatherMs) : setImmediate;
  let gathering: Taken[] | undefined;
  let startGathered: (() => void) | undefined;
  const loop = (async () => {
    for await (const msg of messages) {
      const taken = take(msg);
      inFlight += Math.max(1, taken.jobs.length);
      if (!gathering) {
        const batch: Taken[] = (gathering = []);
        const start = () => {
          if (gathering !== batch) return; // started already
          gathering = startGathered = undefined;
          const work = run(batch).finally(() => running.delete(work));
          running.add(work);
        };
        startGathered = start;
        afterGathering(start);
      }
      gathering.push(taken);
      // The pull keeps `concurrency` jobs buffered; do not take more than that at once.
      if (inFlight >= concurrency) {
        startGathered?.();
        while (inFlight >= concurrency) await new Promise<void>((resolve) => (oneEnded = resolve));
        oneEnded = undefined;
      }
    }
  })();

  return {
    async stop() {
      stopping = true;
      unwatch();
      load?.stop();
      await messages.close();
      await loop;
      startGathered?.();
      await Promise.allSettled([...running]);
    },
  };
}

/** How long JOBS keeps a job: two weeks outlasts every retry schedule (older work is not sent again after a loss). */
export const JobsKeptDays = 14;

/** The stream JOBS: jobs stay until a worker acked them, JobsKeptDays at most. */
export function jobStreamSpec(replicas: number): StreamSpec {
  return { ...JobStream, retention: 'workqueue', maxAgeMs: JobsKeptDays * 86_400_000, duplicateWindowMs: 120_000, replicas };
}

/** The Nats-Msg-Id of a job sent again from Postgres in the stream's life `life` (its own id: the first is remembered a while). */
export function resentMsgId(msgId: string, life: string): string {
  return `${msgId}${ResentMark}${life}`;
}

/** Whether a job was sent again from Postgres after its stream was lost (a first delivery that must first look at what is recorded). */
export function isResent(job: Pick<Job, 'msgId'>): boolean {
  return job.msgId.includes(ResentMark);
}

/** A job's own id, without the mark of a resend. */
export function originalMsgId(job: Pick<Job, 'msgId'>): string {
  const at = job.msgId.indexOf(ResentMark);
  return at < 0 ? job.msgId : job.msgId.slice(0, at);
}

const ResentMark = ':resent:';

/**
 * The JOBS watch of a connection's process (src/infra/healing.ts): every job consumer started on it
 * is looked after, the stream with them, and each kind's resend is called when the stream was made
 * again.
 */
interface JobHealing {
  watch(spec: JobConsumerSpec): () => void;
  check(): Promise<void>;
  /** JOBS's life (its creation time) as last seen. */
  life(): string | undefined;
}

const jobHealings = new WeakMap<NatsConnection, JobHealing>();

function healJobs(nc: NatsConnection, log: Logger, replicas: number): JobHealing {
  const existing = jobHealings.get(nc);
  if (existing) return existing;
  const specs = new Set<JobConsumerSpec>();
  let healer: StreamHealer | undefined;
  const healing: JobHealing = {
    watch(spec) {
      specs.add(spec);
      healer ??= watchStream(nc, log, {
        spec: jobStreamSpec(replicas),
        consumers: () => [...specs].map((s) => ({ name: s.durable, ensure: () => ensureConsumerOn(nc, s, replicas) })),
        async renewed(life) {
          const results = await Promise.allSettled(
            [...specs].map(async (s) => {
              if (!s.resend) return;
              if (s.resendAfterMs) await sleep(s.resendAfterMs);
              await s.resend(life);
            }),
          );
          const failed = results.find((r) => r.status === 'rejected');
          if (failed) throw failed.reason;
        },
      });
      return () => {
        specs.delete(spec);
        if (!specs.size) {
          healer?.stop();
          healer = undefined;
        }
      };
    },
    check: () => healer?.check() ?? Promise.resolve(),
    life: () => healer?.life(),
  };
  jobHealings.set(nc, healing);
  return healing;
}

/** The kind a consumer's filter takes (`jobs.<kind>.>`), for metric labels. */
function jobKindOf(filter: string): string {
  return filter.split('.')[1] ?? filter;
}

export interface JobConsumerState {
  kind: string;
  /** Jobs in the stream not yet delivered. */
  pending: number;
  /** Delivered and not yet acknowledged. */
  ackPending: number;
  /** Delivered more than once and not yet acknowledged. */
  redelivered: number;
}

/** What the server knows of every job consumer now (one JetStream API request), for metrics. */
export async function jobConsumerStates(nc: NatsConnection): Promise<JobConsumerState[]> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const consumers = await jsm.consumers.list(JobStream.name).next();
  return consumers.map((c) => ({
    kind: jobKindOf(c.config.filter_subject ?? `jobs.${c.name}`),
    pending: c.num_pending,
    ackPending: c.num_ack_pending,
    redelivered: c.num_redelivered,
  }));
}

const PullExpiresMs = 5000;
const LoadPeriodMs = 500;
const YieldAtMostMs = 30_000;

/** The share of the last period the event loop spent running code (not waiting for I/O). */
function watchEventLoop(): { busyShare(): number; stop(): void } {
  let mark = performance.eventLoopUtilization();
  let share = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    share = performance.eventLoopUtilization(now, mark).utilization;
    mark = now;
  }, LoadPeriodMs).unref();
  return { busyShare: () => share, stop: () => clearInterval(timer) };
}
