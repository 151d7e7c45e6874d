import { z } from 'zod';
import { isTimeZone, parseDuration, Weekdays } from './formats/time.js';
import { Href, ProjectId, subjectToken } from './common.js';
import { endpoint } from './contract.js';
import { OrderShop } from './orders.js';
import { CompanyAddress } from './settings.js';
import { ShopId } from './shops.js';
import { jobSubject } from './jobs.js';

/**
 * Closings: per shop, a gapless sequence of reports, each covering the shop's orders after the
 * previous one (a contiguous range of their sequence numbers). Schedules make them at fire times
 * (claimed once per schedule and fire time, whatever the number of worker processes); report jobs
 * make one now. Each closing gets one log (file) per format. Between closings, a schedule's batches
 * append the orders that came to the coming closing's batch logs (claimed once per batch time).
 */

export const LogFormats = ['dsfinvk_2023_03', 'aggregated_receipts'] as const;
export type LogFormat = (typeof LogFormats)[number];
/**
 * Formats a batch log may have. A DSFinV-K export is the record of one Kassenabschluss (Z_NR): an
 * export per batch would be a closing the tax office never sees as one, so batches log
 * aggregated_receipts only; the closing's own dsfinvk_2023_03 log is the export of the day.
 */
export const BatchLogFormats = ['aggregated_receipts'] as const;
export type BatchLogFormat = (typeof BatchLogFormats)[number];
export const LogStates = ['not_present', 'present'] as const;
export const LogKinds = ['closing', 'batch'] as const;
export const ScheduleModes = ['includeUntilExecution', 'includeUntilScheduled'] as const;
export type ScheduleMode = (typeof ScheduleModes)[number];
export const JobStates = ['pending', 'done', 'failed'] as const;

const MaxDurationMs = 24 * 3_600_000;

const BatchFormats = z
  .array(
    z.enum(BatchLogFormats, {
      error: (issue) => `batch logs are written as ${BatchLogFormats.join(', ')} only (a DSFinV-K export belongs to a closing), not ${JSON.stringify(issue.input)}`,
    }),
  )
  .max(BatchLogFormats.length)
  .refine((formats) => new Set(formats).size === formats.length, 'batchFormats must not repeat');

const Formats = z
  .array(z.enum(LogFormats, { error: (issue) => `unknown log format ${JSON.stringify(issue.input)}: this platform generates ${LogFormats.join(', ')}` }))
  .max(LogFormats.length)
  .refine((formats) => new Set(formats).size === formats.length, 'formats must not repeat');

export const ClosingScheduleInput = z
  .object({
    shop: ShopId.describe('The shop (an existing one)'),
    days: z
      .array(z.enum(Weekdays))
      .min(1, 'at least one day')
      .max(7)
      .refine((days) => new Set(days).size === days.length, 'days must not repeat')
      .describe('Week days on which it fires: Monday ... Sunday'),
    hour: z.int().min(0).max(24).default(0).describe('0..24; 24 is the end of the day (00:00 of the next one), with minute 0 only'),
    minute: z.int().min(0).max(59).default(0),
    location: z.string().max(64).refine(isTimeZone, 'an IANA time zone such as Europe/Berlin').describe('IANA time zone of hour and minute'),
    mode: z
      .enum(ScheduleModes, { error: (issue) => `unknown mode ${JSON.stringify(issue.input)}: includeUntilExecution or includeUntilScheduled` })
      .default('includeUntilExecution')
      .describe('Orders up to the closing\'s execution, or up to the scheduled time'),
    includeAllStates: z.boolean().default(false).describe('List the orders of aborted and failed processes too (they count 0 in the totals)'),
    formats: Formats.default([]).describe('Log formats generated for each closing'),
    appendBatchEvery: z
      .string()
      .max(32)
      .refine((text) => {
        const ms = parseDuration(text);
        return ms !== undefined && ms > 0 && ms <= MaxDurationMs;
      }, 'a duration of the form <h>h<m>m<s>s (such as 1h0m0s or 30m), more than 0 and at most 24h')
      .optional()
      .describe(
        'Between two closings, at every multiple of this interval (counted from 1970-01-01T00:00Z), the orders that came since the last batch are appended to the batch logs of the coming closing',
      ),
    batchFormats: BatchFormats.default([]).describe('Formats of the batch logs: aggregated_receipts (a DSFinV-K export belongs to a closing and is refused here)'),
  })
  .refine((s) => s.hour < 24 || s.minute === 0, { message: 'with hour 24 (the end of the day) minute must be 0', path: ['minute'] })
  .meta({ id: 'ClosingScheduleBody' });
export type ClosingScheduleInput = z.output<typeof ClosingScheduleInput>;

export const ClosingSchedule = z
  .object({
    id: z.int(),
    project: z.string(),
    shop: z.string().describe('The shop id: a string, as everywhere in this API'),
    days: z.array(z.enum(Weekdays)),
    hour: z.int(),
    minute: z.int(),
    location: z.string(),
    mode: z.enum(ScheduleModes),
    includeAllStates: z.boolean(),
    formats: z.array(z.string()),
    appendBatchEvery: z.string().optional(),
    batchFormats: z.array(z.string()),
    links: z.object({ self: Href }),
  })
  .meta({ id: 'ClosingSchedule' });
export type ClosingSchedule = z.infer<typeof ClosingSchedule>;

export const ScheduleId = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const TaxShare = z.object({ rate: z.number(), net: z.int(), tax: z.int(), total: z.int() });
export type TaxShare = z.infer<typeof TaxShare>;
/** The shop as a closing records it (as in Order). */
export type ClosingShop = z.infer<typeof OrderShop>;
export const PaymentShare = z.object({ paymentMethod: z.string(), amount: z.int() });
export const ClosingLog = z.object({
  id: z.int(),
  format: z.string(),
  state: z.enum(LogStates),
  kind: z.enum(LogKinds).describe("closing: made with the closing; batch: the intra-day running log its schedule's batches appended to"),
});
export type ClosingLog = z.infer<typeof ClosingLog>;

export const ClosingOrigin = z.discriminatedUnion('type', [
  z.object({ type: z.literal('schedule'), scheduleID: z.int(), scheduledAt: z.iso.datetime() }),
  z.object({ type: z.literal('job'), jobID: z.string(), deviceID: z.string(), skippedCashCount: z.boolean() }),
]);
export type ClosingOrigin = z.infer<typeof ClosingOrigin>;

/** A closing without its orders (lists carry these; follow links.self for the orders). */
export const ClosingSummary = z
  .object({
    project: z.string(),
    shopID: z.string().describe('The shop id: a string, as everywhere in this API'),
    sequenceNumber: z.int().describe("Number of the closing in its shop's sequence (1, 2, 3, ... without gaps)"),
    firstOrderSequenceNumber: z.int().describe('First order sequence number of the covered range (lastOrderSequenceNumber + 1 when the range is empty)'),
    lastOrderSequenceNumber: z.int().describe('Last order sequence number covered; the next closing starts after it'),
    orderCount: z.int().describe('The orders it lists: the final ones of its range, or all with includeAllStates'),
    includeAllStates: z.boolean(),
    createdAt: z.iso.datetime(),
    cutOffAt: z.iso.datetime().describe('Orders finalized up to this time were taken (the longest such prefix of the range)'),
    currency: z.string(),
    shop: OrderShop,
    taxShares: z.array(TaxShare).describe('Per tax rate: net, tax and total (gross) of its final orders, in the currency subunit'),
    shareByPaymentMethod: z.array(PaymentShare),
    total: z.int(),
    tseFailures: z
      .int()
      .describe(
        'How many of the orders it lists the TSE could not sign: their fiscal reference\'s finish log records an error (TSE-Ausfall). ' +
          'Their receipts say so, and the DSFinV-K export carries the failure in transactions_tse.csv TSE_TA_FEHLER; 0 without a TSE',
      ),
    taxNumber: z.string(),
    vatID: z.string(),
    companyName: z.string(),
    companyAdress: CompanyAddress.describe('Spelled as the spec spells it'),
    origin: ClosingOrigin,
    logs: z.array(ClosingLog),
    links: z.record(z.string(), Href).describe('self, and one link per log, named by its format'),
  })
  .meta({ id: 'ClosingSummary' });
export type ClosingSummary = z.infer<typeof ClosingSummary>;

export const ReportJobRequest = z
  .object({
    shopID: ShopId.describe('The shop to close now'),
    deviceID: z
      .string()
      .max(200)
      .refine((text) => !text.includes('\u0000') && text.isWellFormed(), 'text that cannot be stored (U+0000 or a lone surrogate)')
      .default('')
      .describe('The device that asked for the report; recorded'),
    skippedCashCount: z.boolean().default(false).describe('Recorded with the job and the closing; a self-checkout has no cash count to wait for'),
    formats: Formats.optional().describe("Log formats of the closing; default: the formats of the shop's schedules"),
  })
  .meta({ id: 'ReportJobRequest' });
export type ReportJobRequest = z.output<typeof ReportJobRequest>;

export const ReportJob = z
  .object({
    id: z.string(),
    state: z.enum(JobStates),
    shopID: z.string(),
    deviceID: z.string(),
    skippedCashCount: z.boolean(),
    formats: z.array(z.string()),
    createdAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
    sequenceNumber: z.int().nullable().describe('The closing it made, once done'),
    reason: z.string().optional().describe('Why it failed'),
    links: z.object({ self: Href, closing: Href.optional().describe('The closing, once done') }),
  })
  .meta({ id: 'ReportJob' });
export type ReportJob = z.infer<typeof ReportJob>;

/** Durable work of the closing actor (JetStream JOBS, kind `closing`): a schedule's fire time, or a report job. */
export const ClosingWork = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('trigger'),
    project: z.string(),
    shopID: z.string(),
    scheduleID: z.int(),
    fireAt: z.iso.datetime(),
    mode: z.enum(ScheduleModes),
    includeAllStates: z.boolean(),
    formats: z.array(z.enum(LogFormats)),
    location: z.string(),
  }),
  z.object({ type: z.literal('report'), project: z.string(), shopID: z.string(), jobID: z.string() }),
  z.object({
    type: z.literal('batch'),
    project: z.string(),
    shopID: z.string(),
    scheduleID: z.int(),
    batchAt: z.iso.datetime(),
    includeAllStates: z.boolean(),
    formats: z.array(z.enum(BatchLogFormats)),
  }),
]);
export type ClosingWork = z.infer<typeof ClosingWork>;

/** The claim key of a schedule's fire time: its Nats-Msg-Id, and the closing's trigger key. */
export function triggerKey(scheduleID: number, fireAt: Date): string {
  return `${scheduleID}:${fireAt.toISOString()}`;
}

/** The claim key of a schedule's batch time: its Nats-Msg-Id. */
export function batchKey(scheduleID: number, batchAt: Date): string {
  return `batch:${scheduleID}:${batchAt.toISOString()}`;
}

export function closingWorkSubject(work: Pick<ClosingWork, 'project' | 'shopID' | 'type'>): string {
  return jobSubject('closing', work.project, subjectToken(work.shopID), work.type);
}

export const ClosingEvents = ['created', 'logPresent', 'jobPending', 'jobDone', 'jobFailed'] as const;

export function schedulePath(project: string, id: number): string {
  return `/${project}/closings/schedules/id/${id}`;
}

export function closingPath(project: string, shopID: string, sequenceNumber: number): string {
  return `/${project}/closings/shops/${encodeURIComponent(shopID)}/sequenceNumbers/${sequenceNumber}`;
}

export function logPath(project: string, id: number): string {
  return `/${project}/closings/logs/${id}`;
}

export function batchesPath(project: string, shopID: string): string {
  return `/${project}/closings/shops/${encodeURIComponent(shopID)}/batches`;
}

export function jobPath(project: string, id: string): string {
  return `/${project}/closings/jobs/${id}`;
}

const Project = z.object({ project: ProjectId });
const ShopClosing = Project.extend({ shopID: ShopId, sequenceNumber: z.int().min(1) });

export const LogInfo = z.object({
  id: z.int(),
  format: z.string(),
  state: z.enum(LogStates),
  contentType: z.string(),
  fileName: z.string(),
  size: z.int(),
  chunks: z.int(),
});

export const ClosingBatch = z.object({
  scheduleID: z.int(),
  batchAt: z.iso.datetime().describe('The batch time: orders finalized up to it were taken'),
  appendedAt: z.iso.datetime(),
  firstOrderSequenceNumber: z.int(),
  lastOrderSequenceNumber: z.int().describe('firstOrderSequenceNumber - 1 when nothing had come since the batch before'),
  orderCount: z.int().describe('The orders it appended: the final ones of its range, or all with includeAllStates'),
});

export const ClosingBatches = z
  .object({
    shopID: z.string(),
    sequenceNumber: z.int().describe('The closing the batches belong to: by default the coming one, which does not exist yet'),
    closed: z.boolean().describe('Whether that closing was made (then its logs list these batch logs too)'),
    logs: z.array(ClosingLog).describe('Its batch logs; download each at links[batch_<format>] while the day runs'),
    batches: z.array(ClosingBatch).describe('The batches appended to them, oldest first'),
    links: z.record(z.string(), Href).describe('self, and one link per batch log, named batch_<format>'),
  })
  .meta({ id: 'ClosingBatches' });
export type ClosingBatches = z.infer<typeof ClosingBatches>;

export const closings = {
  listSchedules: endpoint('svc.closings.listSchedules', Project, z.object({ schedules: z.array(ClosingSchedule) }), { repeatable: true }),
  getSchedule: endpoint('svc.closings.getSchedule', Project.extend({ id: z.int() }), ClosingSchedule, { repeatable: true }),
  createSchedule: endpoint('svc.closings.createSchedule', Project.extend({ schedule: ClosingScheduleInput }), ClosingSchedule),
  updateSchedule: endpoint('svc.closings.updateSchedule', Project.extend({ id: z.int(), schedule: ClosingScheduleInput }), ClosingSchedule),
  deleteSchedule: endpoint('svc.closings.deleteSchedule', Project.extend({ id: z.int() }), z.null()),

  createJob: endpoint('svc.closings.createJob', Project.extend({ job: ReportJobRequest }), ReportJob),
  getJob: endpoint('svc.closings.getJob', Project.extend({ id: z.string().max(64) }), ReportJob, { repeatable: true }),

  /**
   * Part of a page of the list, newest first: the first part from the page's offset (and counted),
   * each further one after the last closing of the part before (`next`), so that closings made
   * meanwhile never repeat or skip one within a page.
   */
  listPart: endpoint(
    'svc.closings.listPart',
    Project.extend({
      shopID: ShopId.optional(),
      offset: z.int().min(0),
      after: z.string().max(300).optional(),
      limit: z.int().min(1).max(500),
      count: z.boolean(),
    }),
    z.object({ closings: z.array(ClosingSummary), totalItems: z.int().nullable(), next: z.string().nullable() }),
    { repeatable: true },
  ),
  get: endpoint('svc.closings.get', ShopClosing, ClosingSummary, { repeatable: true }),
  /** The orders of a closing as their stored JSON texts, by sequence number, after `after`. */
  ordersPart: endpoint(
    'svc.closings.ordersPart',
    ShopClosing.extend({ after: z.int().min(0), limit: z.int().min(1).max(1000) }),
    z.object({ orders: z.array(z.string()), next: z.int().nullable() }),
    { repeatable: true },
  ),
  /** The batches and batch logs of a closing of a shop: the coming (open) one unless a number is given. */
  batches: endpoint('svc.closings.batches', Project.extend({ shopID: ShopId, sequenceNumber: z.int().min(1).optional() }), ClosingBatches, { repeatable: true }),
  logInfo: endpoint('svc.closings.logInfo', Project.extend({ id: z.int() }), LogInfo, { repeatable: true }),
  /** One chunk of a log's file, base64 (a file of any size travels chunk by chunk). */
  logChunk: endpoint('svc.closings.logChunk', Project.extend({ id: z.int(), n: z.int().min(0) }), z.object({ data: z.string() }), { repeatable: true }),
};

const EventEnvelope = z.object({ project: z.string(), shopID: z.string(), at: z.iso.datetime() });
const JobEvent = <E extends string>(event: E) => EventEnvelope.extend({ event: z.literal(event), job: ReportJob });

/**
 * `events.<project>.closing.<shopID>.<event>`: a closing was stored (`created`, without its orders),
 * one of its logs was written (`logPresent`), a report job was taken, done or failed.
 */
export const ClosingEvent = z
  .discriminatedUnion('event', [
    EventEnvelope.extend({ event: z.literal('created'), closing: ClosingSummary }),
    EventEnvelope.extend({ event: z.literal('logPresent'), sequenceNumber: z.int(), log: ClosingLog, links: z.object({ self: Href }) }),
    JobEvent('jobPending'),
    JobEvent('jobDone'),
    JobEvent('jobFailed'),
  ])
  .meta({ id: 'ClosingEvent' });
export type ClosingEvent = z.infer<typeof ClosingEvent>;
