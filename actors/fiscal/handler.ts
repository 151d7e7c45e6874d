import { derivedUuid } from '../../src/domain/derived-uuid.js';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { readJob, startBatchJobConsumer, type Job, type JobConsumer, type JobConsumerDeps, type JobOutcome } from '../../src/messaging/jobs.js';
import { eventSubject } from '../../subjects/events.js';
import { FiscalJob, FiscalJobFilter, TseOutagePrefix, type FiscalizationSettings, type FiscalLogEntry, type SecurityDeviceModule } from '../../subjects/fiscal.js';
import { receiptJob } from '../../subjects/receipts.js';
import type { ProviderResult, SignedLog, StartedTransaction, TransactionAddress, TseProvider } from './provider.js';
import * as db from './sql.js';
import { undoneProcessJobs } from '../checkout-process/resend.js';
import { resendJobs } from '../outbox/resend.js';

/**
 * The fiscal pool: a consumer of the JOBS stream's `fiscal` jobs (src/messaging/jobs.ts), which the
 * checkout process actor writes to the outbox with the change that causes them: `start` when a
 * process is created, `finish` when it ends. The jobs that arrive within BatchGatherMs of each
 * other are one batch: one statement reads what is recorded of their transactions, the provider is
 * asked for what is missing (the calls side by side), and one statement records the batch's starts
 * (of providers that do not keep them: provider.ts keepsStarts), one its finishes, each finish
 * with the order's fiscalReference (kept with the transaction; readers add it to the order), its
 * `fiscalized` event and (final orders) its receipt job. A
 * recorded revision makes a repeated job do nothing, and the provider answers a repeated revision
 * with what it signed before, so a worker that died between the answer and its ack costs no second
 * signature.
 *
 * The TSE never stops a sale: calls without an answer (unreachable, timeouts, 5xx, 429) are tried
 * again on FISCAL_RETRY_SCHEDULE_MS; after the last attempt, or when the TSE refuses for good, the
 * finish is recorded with `error: "TSE-Ausfall: <reason>"`, announced by the same event and a log
 * line at error level. A start that fails is left to the finish, which starts first.
 */
export interface FiscalProviderSource {
  /** The provider of a process (its name as recorded on the process), with the project's settings; undefined: not available in this build. */
  (name: string, project: string, settings: FiscalizationSettings | undefined): TseProvider | undefined;
}

export interface FiscalJobsDeps {
  nc: NatsConnection;
  sql: Sql;
  log: Logger;
  providers: FiscalProviderSource;
  retryScheduleMs: readonly number[];
  maxAttempts: number;
  /** Jobs this process runs at once (FISCAL_SIGNERS). */
  concurrency: number;
  /** Called after a job wrote to the outbox (wakes the relay). */
  eventsWritten(): void;
  /** Whether a final order's receipt is made ahead of its first request (RECEIPTS_AHEAD): its job queued with the signature then. */
  receiptsAhead: boolean;
  /** Counts jobs that failed their last attempt (src/infra/metrics.ts). */
  metrics?: JobConsumerDeps['metrics'];
}

export function startFiscalJobs(deps: FiscalJobsDeps): Promise<JobConsumer> {
  const { sql, log, providers, eventsWritten } = deps;
  /**
   * The starts this process is asking for, by processKey, until their batch has recorded them. A
   * finish arrives while its start is still on its way more often than not (a TSE answers in tens
   * of milliseconds, a customer pays in less): it waits for that answer instead of asking the TSE
   * for the same revision again (a third of fiskaly's calls were such repeats).
   */
  const startsInFlight = new Map<string, Promise<ProviderResult<StartedTransaction>>>();

  /**
   * A batch of jobs (those that arrived together) costs one read, the provider's calls (side by
   * side; the local signer signs them with one read and one write), one statement for the starts
   * and one transaction for the finishes, whatever its size.
   */
  const handleBatch = async (jobs: readonly Job[]): Promise<JobOutcome[]> => {
    const parsed = jobs.map((job) => readJob(FiscalJob, job, log, 'fiscal job'));
    const states = await db.readTransactions(sql, parsed.flatMap((p) => (p ? [{ project: p.project, processId: p.processID }] : [])));
    // One job per process and step does the work; a start whose finish is in the batch leaves it to the finish, which starts first.
    const finishing = new Set(parsed.flatMap((p) => (p && p.step !== 'start' ? [db.processKey(p.project, p.processID)] : [])));
    const taken = new Set<string>();
    const decisions = await Promise.all(
      jobs.map((job, i): Promise<Decided> | Decided => {
        const p = parsed[i];
        if (!p) return { outcome: { kind: 'done' } };
        const key = db.processKey(p.project, p.processID);
        if (p.step === 'start' && finishing.has(key)) return { outcome: { kind: 'done' } };
        if (taken.has(`${key}/${p.step}`)) return { outcome: { kind: 'retry', reason: 'the same job is being done by another delivery' } };
        taken.add(`${key}/${p.step}`);
        return decide(job, p, states.get(key));
      }),
    );
    try {
      await db.recordStarts(sql, decisions.flatMap((d) => (d.start ? [d.start] : [])));
    } finally {
      for (const p of parsed) if (p?.step === 'start') startsInFlight.delete(db.processKey(p.project, p.processID));
    }
    const recorded = await db.recordFinishes(sql, decisions.flatMap((d) => (d.finish ? [d.finish.record] : [])));
    if (recorded.size) eventsWritten();
    for (const { finish } of decisions) {
      if (finish?.outage && recorded.has(db.processKey(finish.record.project, finish.record.processId))) log.error(finish.outage, 'sale recorded without a TSE signature');
    }
    return decisions.map((d) => d.outcome);
  };

  /** What one job asks the provider, and what it leaves to record. */
  const decide = async (job: Job, parsed: FiscalJob, state: db.TransactionState | undefined): Promise<Decided> => {
    const { project, processID, shopID, step } = parsed;
    const done: Decided = { outcome: { kind: 'done' } };
    if (!state?.fiscal_provider) return done;
    if (state.finish_log || (step === 'start' && state.start_log)) return done;
    const providerName = state.fiscal_provider;
    const address = transactionAddress(project, processID, shopID, state.fiscalization ?? undefined);
    const context = { project, processID, step, provider: providerName };
    const provider = providers(providerName, project, state.fiscalization ?? undefined);

    // A finish records its start too: the one recorded, or the one it asks for now.
    let started: StartedTransaction | undefined =
      state.start_log && state.device && state.transaction_number !== null
        ? { device: state.device, transactionNumber: state.transaction_number, log: { ...state.start_log, time: '', signature: state.start_log.signature ?? '' } }
        : undefined;
    const startedBefore = started !== undefined;
    // A provider that keeps its starts answers the start with the finish (provider.ts keepsStarts).
    const finishStarts = step !== 'start' && parsed.unsignable === undefined && provider?.keepsStarts === true;
    let result: ProviderResult<unknown> | undefined;
    if (!started && !finishStarts) {
      const key = db.processKey(project, processID);
      // A start that failed or threw leaves the finish to ask itself, as it would have.
      const inFlight = step === 'start' ? undefined : await startsInFlight.get(key)?.catch(() => undefined);
      let answer: ProviderResult<StartedTransaction>;
      if (inFlight?.kind === 'signed') answer = inFlight;
      else {
        const asked = provider ? provider.start(address) : Promise.resolve(unavailable(providerName));
        // A provider that keeps its starts answers them with the finish: no finish waits for one.
        if (step === 'start' && !provider?.keepsStarts) startsInFlight.set(key, asked);
        answer = await asked;
      }
      if (answer.kind === 'signed') started = answer.value;
      else result = answer;
    }
    const startRecord = (s: StartedTransaction): db.StartRecord => ({
      project,
      processId: processID,
      shopId: shopID,
      provider: providerName,
      device: s.device,
      clientSerial: address.clientSerialNumber,
      transactionNumber: s.transactionNumber,
      log: logEntry(s.log),
    });

    if (step === 'start') {
      if (started) return provider?.keepsStarts ? done : { outcome: { kind: 'done' }, start: startRecord(started) };
      if (job.lastAttempt || result!.kind === 'failed') {
        // The finish starts the transaction itself, or records the outage.
        log.error({ ...context, reason: reasonOf(result!) }, 'TSE start failed; the finish will try again');
        return done;
      }
      return { outcome: retry(result!, job, context) };
    }

    let finished: StartedTransaction | undefined;
    if ((started || finishStarts) && parsed.unsignable === undefined) {
      const answer = provider ? await provider.finish({ ...address, processType: parsed.processType ?? '', processData: parsed.processData ?? '' }) : unavailable(providerName);
      if (answer.kind === 'signed') {
        finished = answer.value;
        started ??= answer.value.started;
      } else result = answer;
    }
    const finishEntry: FiscalLogEntry = finished
      ? logEntry(finished.log)
      : {
          timestamp: String(Math.floor(Date.now() / 1000)),
          counter: 0,
          processType: parsed.processType ?? '',
          processData: parsed.processData ?? '',
          error: parsed.unsignable === undefined ? `${TseOutagePrefix}: ${reasonOf(result!)}` : `not signed: ${parsed.unsignable}`,
        };
    if (!finished && parsed.unsignable === undefined && !job.lastAttempt && result!.kind === 'retry') {
      // Kept, so the next attempt finishes what is started instead of starting it again.
      return { outcome: retry(result!, job, context), ...(started && !startedBefore ? { start: startRecord(started) } : {}) };
    }
    const device = finished?.device ?? started?.device ?? (await db.lastDevice(sql, project, providerName)) ?? UnknownDevice;
    const reference = {
      securityDeviceModule: device,
      clientSerialNumber: address.clientSerialNumber,
      transactionNumber: finished?.transactionNumber ?? started?.transactionNumber ?? 0,
      logs: [...(started ? [logEntry(started.log)] : []), finishEntry],
    };
    const at = new Date().toISOString();
    const record: db.FinishRecord = {
      project,
      processId: processID,
      shopId: shopID,
      provider: providerName,
      reference,
      event: { subject: eventSubject(project, 'order', processID, 'fiscalized'), envelope: { project, id: processID, version: state.version, at, event: 'fiscalized' } },
      receiptJob: deps.receiptsAhead ? receiptJob(project, processID) : undefined,
    };
    return { outcome: { kind: 'done' }, finish: { record, ...(finishEntry.error ? { outage: { ...context, attempts: job.attempt, error: finishEntry.error } } : {}) } };
  };

  return startBatchJobConsumer(
    { nc: deps.nc, log, metrics: deps.metrics },
    {
      durable: 'fiscal',
      filter: FiscalJobFilter,
      retryScheduleMs: deps.retryScheduleMs,
      maxAttempts: deps.maxAttempts,
      concurrency: deps.concurrency,
      gatherMs: BatchGatherMs,
      // JOBS lost: every ended sale whose TSE finish is not recorded is signed from Postgres (a finish recorded meanwhile makes its job do nothing).
      resend: async (life: string) => {
        const sent = await resendJobs(sql, 'fiscal', life, async (tx) => (await undoneProcessJobs(tx)).fiscal);
        if (sent !== undefined) log.warn({ jobs: sent }, 'TSE finishes not recorded were sent again from Postgres (JOBS was lost)');
        eventsWritten();
      },
    },
    (jobs) => {
      const outcomes = handleBatch(jobs);
      return jobs.map((_, i) => outcomes.then((all) => all[i]!));
    },
  );

  function retry(result: ProviderResult<unknown>, job: Job, context: Record<string, unknown>): JobOutcome {
    const reason = reasonOf(result);
    log.warn({ ...context, attempt: job.attempt, reason }, 'TSE call will be tried again');
    const afterMs = result.kind === 'retry' ? result.afterMs : undefined;
    return { kind: 'retry', reason, ...(afterMs === undefined ? {} : { afterMs }) };
  }
}

/**
 * How long a batch waits for more jobs after its first. A batch costs about the same whatever its
 * size (a read, the signer's read and write, the records), and nobody waits for a signature on the
 * HTTP path: at 170 sales a second, 20 ms made batches of about eleven jobs instead of two or three, and
 * cut what signing costs Postgres by half (`npm run bench -- fiscal`, 2026-11-26).
 */
const BatchGatherMs = 20;

/** A job's outcome, with the start or finish it leaves to the batch's statements. */
interface Decided {
  outcome: JobOutcome;
  start?: db.StartRecord;
  /** `outage`: the log line's context when the finish is recorded unsigned. */
  finish?: { record: db.FinishRecord; outage?: Record<string, unknown> };
}

/** The device an outage names when the project's TSE never answered. */
const UnknownDevice: SecurityDeviceModule = { serialNumber: '', signatureAlgorithm: '', logTimeFormat: '', certificate: '', publicKey: '' };

function unavailable(name: string): ProviderResult<never> {
  return { kind: 'retry', reason: `the TSE provider ${name} is not available in this build` };
}

function reasonOf(result: ProviderResult<unknown>): string {
  return result.kind === 'signed' ? 'signed' : result.reason;
}

function logEntry(log: SignedLog | (FiscalLogEntry & { time: string })): FiscalLogEntry {
  const { timestamp, counter, processType, processData, signature } = log;
  return { timestamp, counter, processType, processData, ...(signature ? { signature } : {}) };
}

/**
 * A process's TSE transaction, by ids derived from it: the same on every attempt. The TSE client is
 * the shop (its serial the shop id); ids a TSE wants as UUIDs are derived UUIDs (a process id chosen
 * by a client need not be one). fiskaly wants client ids unique across its whole system, so the
 * client id is derived from the TSS too: a project that moves to another TSS registers new clients.
 */
export function transactionAddress(project: string, processId: string, shopId: string, settings: FiscalizationSettings | undefined): TransactionAddress {
  return {
    project,
    tssId: settings?.tssId ?? project,
    clientId: derivedUuid(`${project}/${settings?.tssId ?? ''}/client/${shopId}`),
    clientSerialNumber: shopId,
    transactionId: Uuid.test(processId) ? processId.toLowerCase() : derivedUuid(`${project}/transaction/${processId}`),
  };
}

const Uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
