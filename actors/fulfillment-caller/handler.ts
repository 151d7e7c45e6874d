import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../src/logger.js';
import { isResent, originalMsgId, readJob, startJobConsumer, type Job, type JobConsumer, type JobConsumerDeps, type JobOutcome } from '../../src/messaging/jobs.js';
import { FulfillmentJob, fulfillmentPath, type CallOutcome } from '../../subjects/fulfillments.js';
import type { FulfillmentCallRecorder } from '../checkout-process/handler.js';
import { undoneProcessJobs } from '../checkout-process/resend.js';
import { resendJobs } from '../outbox/resend.js';
import type { Sql } from '../../src/infra/postgres.js';
import { jobFilter } from '../../subjects/jobs.js';
import { callService, type ServiceConfig } from './service.js';

/**
 * The fulfillment caller: a pool on the JetStream work queue of fulfillment calls. For each job it
 * makes the call with the job id as Idempotency-Key (so the service can drop a repeat) and records
 * the answer on the process through the process actor of its own worker process (its mailbox and
 * version-compared write: one statement, no message in between) before the job is acked. A job
 * delivered again asks the process first: one whose answer is recorded does nothing. Calls
 * without an answer are tried again on the retry schedule; after the last attempt the fulfillment
 * fails, with an event and a log line at error level.
 */
export interface FulfillmentCallerDeps {
  nc: NatsConnection;
  /** Where the calls not answered are found when JOBS was lost (unset: not sent again). */
  sql?: Sql;
  /** Wakes the relay after a resend. */
  eventsWritten?: () => void;
  log: Logger;
  /** The process actor of this worker process, which owns the fulfillments. */
  processes: FulfillmentCallRecorder;
  /** Unset url: calls wait (and are tried again) until the service is configured. */
  service: Omit<ServiceConfig, 'url'> & { url?: string };
  retryScheduleMs: readonly number[];
  maxAttempts: number;
  /** Calls this process makes at once. */
  concurrency: number;
  /** Counts jobs that failed their last attempt (src/infra/metrics.ts). */
  metrics?: JobConsumerDeps['metrics'];
}

export function startFulfillmentCaller(deps: FulfillmentCallerDeps): Promise<JobConsumer> {
  const { processes, log, service } = deps;
  const { sql } = deps;
  const spec = {
    durable: 'fulfillment-caller',
    filter: jobFilter('fulfillment'),
    retryScheduleMs: deps.retryScheduleMs,
    maxAttempts: deps.maxAttempts,
    concurrency: deps.concurrency,
    // JOBS lost: the calls queued and not answered go again, once the calls under way then have ended (their timeout).
    resendAfterMs: service.timeoutMs + 1000,
    ...(sql
      ? {
          resend: async (life: string) => {
            const sent = await resendJobs(sql, 'fulfillment', life, async (tx) => (await undoneProcessJobs(tx)).fulfillment);
            if (sent !== undefined) log.warn({ jobs: sent }, 'fulfillment calls not answered were sent again from Postgres (JOBS was lost)');
            deps.eventsWritten?.();
          },
        }
      : {}),
  };

  const handle = async (job: Job): Promise<JobOutcome> => {
    const parsed = readJob(FulfillmentJob, job, log, 'fulfillment job');
    if (!parsed) return { kind: 'done' };
    const { project, processID, fulfillmentID, call, shopID, lineItems, serviceID } = parsed;
    const address = { project, processID, fulfillmentID, call };
    const record = (outcome: CallOutcome) => processes.answered(address, outcome);

    // A first attempt calls with what the job carries. A later one (or one sent again from Postgres
    // after JOBS was lost) asks first: the answer may be recorded already (the worker before died
    // before its ack), or the service may have moved it on.
    let request = { href: fulfillmentPath(project, fulfillmentID), shopID, lineItems, ...(serviceID ? { serviceID } : {}) };
    if (job.attempt > 1 || isResent(job)) {
      const { fulfillment, answered } = await processes.calling(address);
      if (answered) return { kind: 'done' };
      if (!stillWanted(call, fulfillment.state)) {
        log.info({ ...address, state: fulfillment.state }, 'fulfillment call no longer applies; skipped');
        return { kind: 'done' };
      }
      request = { href: fulfillment.links.self.href, shopID: fulfillment.shopID, lineItems: fulfillment.lineItems, ...(fulfillment.serviceID ? { serviceID: fulfillment.serviceID } : {}) };
    }
    const result = service.url
      ? await callService({ ...service, url: service.url }, request, call, originalMsgId(job))
      : { kind: 'retry' as const, reason: 'FULFILLMENT_URL is not set' };
    if (result.kind === 'answered') {
      await record(result.outcome);
      return { kind: 'done' };
    }
    if (job.lastAttempt) {
      log.error({ ...address, attempts: job.attempt, reason: result.reason }, 'fulfillment call failed after its last attempt');
      await record({ kind: 'gaveUp', reason: `no answer after ${job.attempt} attempts: ${result.reason}` });
      return { kind: 'done' };
    }
    log.warn({ ...address, attempt: job.attempt, reason: result.reason }, 'fulfillment call will be tried again');
    return { kind: 'retry', reason: result.reason, ...(result.afterMs === undefined ? {} : { afterMs: result.afterMs }) };
  };

  return startJobConsumer({ nc: deps.nc, log, metrics: deps.metrics }, spec, handle);
}

/** A call applies while the fulfillment is where the call takes it from (a service's own report may have moved it on). */
function stillWanted(call: FulfillmentJob['call'], state: string): boolean {
  if (call === 'allocate') return state === 'open' || state === 'allocating';
  return state === 'allocated';
}
