import { derivedUuid } from '../../src/domain/derived-uuid.js';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { readJob, startJobConsumer, type Job, type JobConsumer, type JobConsumerDeps, type JobOutcome } from '../../src/messaging/jobs.js';
import { eventSubject } from '../../subjects/events.js';
import { FiscalJob, FiscalJobFilter, TseOutagePrefix, type FiscalizationSettings, type FiscalLogEntry, type SecurityDeviceModule } from '../../subjects/fiscal.js';
import { receiptJob } from '../../subjects/receipts.js';
import type { ProviderResult, SignedLog, StartedTransaction, TransactionAddress, TseProvider } from './provider.js';
import * as db from './sql.js';

/**
 * The fiscal pool: a consumer of the JOBS stream's `fiscal` jobs (src/messaging/jobs.ts), which the
 * checkout process actor writes to the outbox with the change that causes them: `start` when a
 * process is created, `finish` when it ends. For each job it reads what is recorded of the
 * transaction (one statement), asks the provider for what is missing, and records the answer: a
 * start alone, or the finish with the order's fiscalReference, its `fiscalized` event and (final
 * orders) its receipt job, in one statement. A recorded revision makes a repeated job do nothing,
 * and the provider answers a repeated revision with what it signed before, so a worker that died
 * between the answer and its ack costs no second signature.
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
  /** Counts jobs that failed their last attempt (src/infra/metrics.ts). */
  metrics?: JobConsumerDeps['metrics'];
}

export function startFiscalJobs(deps: FiscalJobsDeps): Promise<JobConsumer> {
  const { sql, log, providers, eventsWritten } = deps;

  const handle = async (job: Job): Promise<JobOutcome> => {
    const parsed = readJob(FiscalJob, job, log, 'fiscal job');
    if (!parsed) return { kind: 'done' };
    const { project, processID, shopID, step } = parsed;
    const state = await db.readTransaction(sql, project, processID);
    if (!state?.fiscal_provider) return { kind: 'done' };
    if (state.finish_log || (step === 'start' && state.start_log)) return { kind: 'done' };
    const providerName = state.fiscal_provider;
    const address = transactionAddress(project, processID, shopID, state.fiscalization ?? undefined);
    const context = { project, processID, step, provider: providerName };
    const provider = providers(providerName, project, state.fiscalization ?? undefined);

    // A finish records its start too: the one recorded, or the one it asks for now.
    let started: StartedTransaction | undefined =
      state.start_log && state.device && state.transaction_number !== null
        ? { device: state.device, transactionNumber: state.transaction_number, log: { ...state.start_log, time: '', signature: state.start_log.signature ?? '' } }
        : undefined;
    let result: ProviderResult<unknown> | undefined;
    if (!started) {
      const answer: ProviderResult<StartedTransaction> = provider ? await provider.start(address) : unavailable(providerName);
      if (answer.kind === 'signed') started = answer.value;
      else result = answer;
    }
    const recordStarted = (s: StartedTransaction) =>
      db.recordStart(sql, { project, processId: processID, shopId: shopID, provider: providerName, device: s.device, clientSerial: address.clientSerialNumber, transactionNumber: s.transactionNumber, log: logEntry(s.log) });

    if (step === 'start') {
      if (started) {
        await recordStarted(started);
        return { kind: 'done' };
      }
      if (job.lastAttempt || result!.kind === 'failed') {
        // The finish starts the transaction itself, or records the outage.
        log.error({ ...context, reason: reasonOf(result!) }, 'TSE start failed; the finish will try again');
        return { kind: 'done' };
      }
      return retry(result!, job, context);
    }

    let finished: StartedTransaction | undefined;
    if (started && parsed.unsignable === undefined) {
      const answer = provider ? await provider.finish({ ...address, processType: parsed.processType ?? '', processData: parsed.processData ?? '' }) : unavailable(providerName);
      if (answer.kind === 'signed') finished = answer.value;
      else result = answer;
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
      if (started) await recordStarted(started);
      return retry(result!, job, context);
    }
    const device = finished?.device ?? started?.device ?? (await db.lastDevice(sql, project)) ?? UnknownDevice;
    const reference = {
      securityDeviceModule: device,
      clientSerialNumber: address.clientSerialNumber,
      transactionNumber: finished?.transactionNumber ?? started?.transactionNumber ?? 0,
      logs: [...(started ? [logEntry(started.log)] : []), finishEntry],
    };
    const at = new Date().toISOString();
    const recorded = await db.recordFinish(sql, {
      project,
      processId: processID,
      shopId: shopID,
      provider: providerName,
      reference,
      event: { subject: eventSubject(project, 'order', processID, 'fiscalized'), envelope: { project, id: processID, version: state.version, at, event: 'fiscalized' } },
      receiptJob: receiptJob(project, processID),
    });
    if (recorded) {
      eventsWritten();
      if (finishEntry.error) log.error({ ...context, attempts: job.attempt, error: finishEntry.error }, 'sale recorded without a TSE signature');
    }
    return { kind: 'done' };
  };

  return startJobConsumer(
    { nc: deps.nc, log, metrics: deps.metrics },
    { durable: 'fiscal', filter: FiscalJobFilter, retryScheduleMs: deps.retryScheduleMs, maxAttempts: deps.maxAttempts, concurrency: deps.concurrency },
    handle,
  );

  function retry(result: ProviderResult<unknown>, job: Job, context: Record<string, unknown>): JobOutcome {
    const reason = reasonOf(result);
    log.warn({ ...context, attempt: job.attempt, reason }, 'TSE call will be tried again');
    const afterMs = result.kind === 'retry' ? result.afterMs : undefined;
    return { kind: 'retry', reason, ...(afterMs === undefined ? {} : { afterMs }) };
  }
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
