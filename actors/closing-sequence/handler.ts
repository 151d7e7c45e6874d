import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { AppError } from '../../src/errors.js';
import type { Sql } from '../../src/infra/postgres.js';
import { readJob, startJobConsumer, type Job, type JobConsumer, type JobConsumerDeps, type JobOutcome } from '../../src/messaging/jobs.js';
import { createMailboxes } from '../../src/messaging/mailbox.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { batchesPath, closings, closingWorkSubject, ClosingWork, logPath } from '../../subjects/closings.js';
import { jobFilter } from '../../subjects/jobs.js';
import { resendJobs } from '../outbox/resend.js';
import { findShop } from '../shops/sql.js';
import { appendBatch, type BatchWork } from './batch.js';
import * as batches from './batch-sql.js';
import { closeShop, event, failJob, type ClosedShop } from './close.js';
import { findLog, logChunk } from './log-sql.js';
import { writeLogs, type LogWriterDeps } from './logs.js';
import * as jobs from './job-sql.js';
import * as read from './read-sql.js';
import { undoneClosingWork } from './resend-sql.js';
import * as db from './sql.js';
import { logLinkName, toJob, toSummary } from './views.js';

export interface ClosingSequenceDeps extends LogWriterDeps {
  nc: NatsConnection;
  /** Retry schedule and attempts of closing work (triggers and report jobs). */
  retryScheduleMs?: readonly number[];
  maxAttempts?: number;
  /** Counts jobs that failed their last attempt (src/infra/metrics.ts). */
  metrics?: JobConsumerDeps['metrics'];
}

export interface ClosingSequenceActor {
  routes: Route[];
  /** Starts taking closing work (triggers, report jobs) from JetStream. */
  startConsumer(): Promise<JobConsumer>;
}

const JobIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The closing sequence of each shop: one logical actor per shop. Its work (schedule triggers and
 * report jobs, durable on JetStream) runs one after another per shop in this process's mailbox,
 * and under the shop's row lock in Postgres across processes (close.ts). After a closing is
 * stored, its logs are written (logs.ts) before the work is acknowledged: a worker that dies
 * leaves them not_present, and the redelivered work writes them. A schedule's batches run here too
 * (batch.ts), in the same mailbox and under the same row lock, so they never interleave with a
 * closing of the shop.
 */
export function createClosingSequenceActor(deps: ClosingSequenceDeps): ClosingSequenceActor {
  const { sql, log } = deps;
  const mailboxes = createMailboxes();

  // A batch that fails on its last attempt is left un-appended: the next batch (or the closing) takes its orders.
  const batch = async (job: Job, parsed: BatchWork): Promise<JobOutcome> => {
    try {
      const appended = await appendBatch(sql, parsed);
      if (appended?.orderCount) log.debug({ shopId: parsed.shopID, batchAt: parsed.batchAt, ...appended }, 'closing batch appended');
    } catch (err) {
      if (!job.lastAttempt) throw err;
      log.error({ err, subject: job.subject, attempt: job.attempt }, 'closing batch failed on its last attempt; the next batch takes its orders');
    }
    return { kind: 'done' };
  };

  const work = async (job: Job): Promise<JobOutcome> => {
    const parsed = readJob(ClosingWork, job, log, 'closing work');
    if (!parsed) return { kind: 'done' };
    if (parsed.type === 'batch') return mailboxes.run(`${parsed.project}/${parsed.shopID}`, () => batch(job, parsed));
    return mailboxes.run(`${parsed.project}/${parsed.shopID}`, async () => {
      let closed: ClosedShop | null;
      try {
        closed = await closeShop(sql, parsed);
      } catch (err) {
        if (!job.lastAttempt) throw err;
        log.error({ err, subject: job.subject, attempt: job.attempt }, 'closing work failed on its last attempt');
        if (parsed.type === 'report' && (await failJob(sql, parsed.project, parsed.jobID, 'the closing could not be made; see the service logs'))) deps.eventsWritten();
        return { kind: 'done' };
      }
      deps.eventsWritten();
      if (!closed) return { kind: 'done' };
      try {
        await writeLogs(deps, await read.logsToWrite(sql, closed.project, closed.shopId, closed.sequenceNumber));
      } catch (err) {
        // The closing stands (and its job is done); only its logs wait for the next attempt.
        if (!job.lastAttempt) throw err;
        log.error({ err, subject: job.subject, attempt: job.attempt, closing: closed }, 'closing logs could not be written on the last attempt; they stay not_present');
      }
      return { kind: 'done' };
    });
  };

  const routes = [
    route(closings.createJob, async ({ project, job: request }) => {
      if (!(await findShop(sql, project, request.shopID))) {
        throw AppError.badRequest(`shopID: no shop with id ${request.shopID}`, [{ path: 'shopID', message: 'no such shop' }]);
      }
      const formats = request.formats ?? (await db.scheduleFormatsOfShop(sql, project, request.shopID)).formats;
      const id = randomUUID();
      const created = await sql.begin(async (tx) => {
        const row = await jobs.insertJob(tx, {
          id, project, shop_id: request.shopID, device_id: request.deviceID, skipped_cash_count: request.skippedCashCount, formats, created_at: new Date(),
        });
        const closingWork: ClosingWork = { type: 'report', project, shopID: request.shopID, jobID: id };
        await db.insertOutbox(tx, [
          { subject: closingWorkSubject(closingWork), payload: closingWork, msgId: `report:${id}` },
          event(project, request.shopID, { project, shopID: request.shopID, at: row.created_at.toISOString(), event: 'jobPending', job: toJob(row) }),
        ]);
        return row;
      });
      deps.eventsWritten();
      return toJob(created);
    }),

    route(closings.getJob, async ({ project, id }) => {
      // Only a well-formed UUID reaches Postgres: anything else (36 hyphens too) is no job's id, never a 500.
      const row = JobIdPattern.test(id) ? await jobs.findJob(sql, project, id) : undefined;
      if (!row) throw AppError.notFound(`no report job with id ${id}`);
      return toJob(row);
    }),

    route(closings.listPart, async ({ project, shopID, offset, after, limit, count }) => {
      const rows = await read.listClosings(sql, { project, shopId: shopID, offset, after: after === undefined ? undefined : listPosition(after) }, limit);
      const last = rows.at(-1);
      return {
        closings: rows.map(toSummary),
        totalItems: count ? await read.countClosings(sql, project, shopID) : null,
        next: rows.length === limit && last ? `${last.created_at.toISOString()}|${last.shop_id}|${last.sequence_number}` : null,
      };
    }),

    route(closings.get, async ({ project, shopID, sequenceNumber }) => toSummary(await foundClosing(sql, project, shopID, sequenceNumber))),

    route(closings.ordersPart, async ({ project, shopID, sequenceNumber, after, limit }) => {
      const closing = await foundClosing(sql, project, shopID, sequenceNumber);
      const rows = await read.ordersPage(sql, {
        project,
        shopId: shopID,
        after: Math.max(after, Number(closing.first_order_sequence_number) - 1),
        last: Number(closing.last_order_sequence_number),
        includeAllStates: closing.include_all_states,
      }, limit);
      return { orders: rows.map((r) => r.doc), next: rows.length === limit ? Number(rows.at(-1)!.sequence_number) : null };
    }),

    route(closings.batches, async ({ project, shopID, sequenceNumber }) => {
      if (!(await findShop(sql, project, shopID))) throw AppError.notFound(`no shop with id ${shopID}`);
      // One snapshot for the three reads: a batch appended between them would be listed without its log.
      const read = await sql.begin('isolation level repeatable read read only', async (tx) => {
        const open = await batches.openClosingNumber(tx, project, shopID);
        const number = sequenceNumber ?? open;
        if (number > open) throw AppError.notFound(`no closing ${number} of shop ${shopID}: the coming one is ${open}`);
        return { open, number, logs: await batches.batchLogsOf(tx, project, shopID, number), batches: await batches.batchesOf(tx, project, shopID, number) };
      });
      const { open, number } = read;
      const logs = read.logs.map((l) => ({ id: Number(l.id), format: l.format, state: l.state, kind: l.kind }));
      const links: Record<string, { href: string }> = { self: { href: batchesPath(project, shopID) + (sequenceNumber === undefined ? '' : `?sequenceNumber=${number}`) } };
      for (const l of logs) links[logLinkName(l)] = { href: logPath(project, l.id) };
      return {
        shopID,
        sequenceNumber: number,
        closed: number < open,
        logs,
        batches: read.batches.map((b) => ({
          scheduleID: Number(b.schedule_id),
          batchAt: b.batch_at.toISOString(),
          appendedAt: b.appended_at.toISOString(),
          firstOrderSequenceNumber: Number(b.first_order_sequence_number),
          lastOrderSequenceNumber: Number(b.last_order_sequence_number),
          orderCount: b.order_count,
        })),
        links,
      };
    }),

    route(closings.logInfo, async ({ project, id }) => {
      const row = await findLog(sql, project, id);
      if (!row) throw AppError.notFound(`no closing log with id ${id}`);
      if (row.state !== 'present') throw AppError.notFound(`closing log ${id} is not written yet (state not_present)`);
      return {
        id: Number(row.id),
        format: row.format,
        state: row.state,
        contentType: row.content_type ?? 'application/octet-stream',
        fileName: row.file_name ?? `closing-log-${id}`,
        size: Number(row.size ?? 0),
        chunks: row.chunks,
      };
    }),

    route(closings.logChunk, async ({ project, id, n }) => {
      const data = await logChunk(sql, project, id, n);
      if (!data) throw AppError.notFound(`closing log ${id} has no chunk ${n}`);
      return { data: data.toString('base64') };
    }),
  ];

  return {
    routes,
    startConsumer: () =>
      startJobConsumer(
        { nc: deps.nc, log, metrics: deps.metrics },
        {
          durable: 'closing',
          filter: jobFilter('closing'),
          retryScheduleMs: deps.retryScheduleMs ?? [1000, 5000, 15_000, 60_000, 300_000, 900_000],
          maxAttempts: deps.maxAttempts ?? 50,
          // A closing holds a connection of the shared pool for its transaction: two at a time per
          // process leave the pool to checkouts when every shop closes at midnight (add worker
          // processes to close more shops at once).
          concurrency: 2,
          // JOBS lost: the closings asked for (report jobs, fire times) and not made, the logs not written, the batches not appended go again from Postgres.
          resend: async (life: string) => {
            const sent = await resendJobs(sql, 'closing', life, undoneClosingWork);
            if (sent !== undefined) log.warn({ jobs: sent }, 'closing work not done was sent again from Postgres (JOBS was lost)');
            deps.eventsWritten();
          },
        },
        work,
      ),
  };
}

/** Where a part of the list ends, as `next` wrote it: creation time, shop and number of its last closing. */
function listPosition(after: string): read.ListPosition {
  const [at = '', shopId = '', number = ''] = after.split('|');
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime()) || !/^\d{1,15}$/.test(number)) throw AppError.badRequest('after: not a position in the list of closings');
  return { createdAt, shopId, sequenceNumber: Number(number) };
}

async function foundClosing(sql: Sql, project: string, shopId: string, sequenceNumber: number): Promise<read.ClosingRow> {
  const row = await read.findClosing(sql, project, shopId, sequenceNumber);
  if (!row) throw AppError.notFound(`no closing ${sequenceNumber} of shop ${shopId}`);
  return row;
}
