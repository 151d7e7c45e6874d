import { createHash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { canonicalCheckoutInfoOf, verifyCheckoutInfo } from '../../src/domain/signature.js';
import { AppError } from '../../src/errors.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { createMailboxes } from '../../src/messaging/mailbox.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { CheckoutInfo } from '../../subjects/checkout.js';
import { checkoutProcess, type Caller, type CheckoutProcessChange, type CreateCheckoutProcessRequest } from '../../subjects/checkout-process.js';
import { eventSubject } from '../../subjects/events.js';
import { fulfillmentJobId, fulfillments, type CallOutcome, type Fulfillment, type FulfillmentCall, type FulfillmentJob } from '../../subjects/fulfillments.js';
import { jobSubject } from '../../subjects/jobs.js';
import { receiptJob } from '../../subjects/receipts.js';
import { FiscalizationRequiredMessage, FiscalProcessTypes, fiscalJob, type FiscalJob, type FiscalProvider } from '../../subjects/fiscal.js';
import { AbortProcessData, grossPerRate, receiptProcessData, transferProcessData } from '../../src/domain/fiscal/process-data.js';
import { pos } from '../../subjects/pos.js';
import { decidePosUpdate, posView } from './pos.js';
import * as db from './sql.js';
import { decide, decideAll, finishedOrderState, isFinished, type ChangeEvent, type Command, type Decision, type FulfillmentJobRef, type ProcessRecord } from './state.js';
import { couponsToRedeem, redeemCoupons } from './coupons.js';
import { decideAnswer, decideCalling, decideServiceUpdate, fulfillmentOf, hasFulfillmentUnderWay, newFulfillments, withFulfillmentEffects } from './fulfillments.js';
import { fulfillmentView, orderEventPayload, processEventPayload, toCheckoutProcess, toOrder } from './views.js';

export interface CheckoutProcessDeps {
  sql: Sql;
  /** The key checkout infos were signed with. */
  signingKey: Uint8Array;
  /** How long a checkout info may be used to create a process. */
  infoTtlMs: number;
  /** Called after a change wrote events (wakes the outbox relay). */
  eventsWritten(): void;
  /** The TSE provider of a project that chose none (local outside production; null: it cannot sell). */
  defaultFiscalProvider: FiscalProvider | null;
  /** Whether a final order's receipt is made ahead of its first request (RECEIPTS_AHEAD): a job then. */
  receiptsAhead: boolean;
}

const MaxAttempts = 20;

/** Rolls back a transaction whose change lost to another writer. */
const VersionConflict = Symbol('version conflict');

type Db = Sql | TransactionSql;

/** A fulfillment call as the fulfillment caller (a job of this worker process) addresses it. */
export interface FulfillmentCallAddress {
  project: string;
  processID: string;
  fulfillmentID: string;
  call: FulfillmentCall;
}

/**
 * The process actor's side of the fulfillment calls, for the fulfillment caller running in the same
 * worker process: commands in the process's mailbox, written with the same version-compared
 * statement as every other change (so a caller and a request in another worker never race), without
 * a message between the job and the actor.
 */
export interface FulfillmentCallRecorder {
  /**
   * The caller is about to make a call again: the fulfillment as it stands (an allocation moves it
   * from open to allocating), and whether the call's answer is recorded already (a redelivered job).
   */
  calling(address: FulfillmentCallAddress): Promise<{ fulfillment: Fulfillment; answered: boolean }>;
  /** Records the answer of a call, with what it causes, before the caller acks the job. */
  answered(address: FulfillmentCallAddress, outcome: CallOutcome): Promise<void>;
}

export interface CheckoutProcessActor {
  routes: Route[];
  fulfillmentCalls: FulfillmentCallRecorder;
}

/**
 * One logical actor per checkout process: the commands for a process id run one after another in
 * its mailbox; each reads the process, decides in pure code (state.ts, pos.ts) and writes the
 * change, its events and (when it finished the process) its order in one statement that applies
 * only if the process is still at the version it read. Workers in other processes serve the same
 * ids; the version makes the later writer read and decide again, so no change is lost.
 */
export function createCheckoutProcessActor(deps: CheckoutProcessDeps): CheckoutProcessActor {
  const { sql, eventsWritten } = deps;
  const mailboxes = createMailboxes();
  const recent = createRecentProcesses(RecentProcesses);

  const load = async (project: string, id: string): Promise<ProcessRecord> => {
    const stored = await db.findProcess(sql, project, id);
    if (!stored) throw notFound(id);
    return stored.record;
  };

  const command = (project: string, id: string, decideChange: (process: ProcessRecord, at: Date) => Decision): Promise<ProcessRecord> => {
    // Every change of the payment also moves the fulfillments: goods delivered once paid, released once unpaid.
    const decideFor = (process: ProcessRecord, at: Date) => withFulfillmentEffects(process, decideChange(process, at));
    const key = `${project}/${id}`;
    return mailboxes.run(key, async () => {
      for (let attempt = 1; ; attempt++) {
        // What this worker wrote last is the process unless another worker changed it since; the
        // write below finds that out. An answer that writes nothing comes from the database only.
        const cached = recent.take(key);
        const before = cached ?? (await load(project, id));
        const at = new Date();
        const decision = decideFor(before, at);
        if (decision.kind !== 'changed' && cached) continue;
        if (decision.kind === 'refused') throw new AppError(409, 'invalid_state_transition', decision.message);
        if (decision.kind === 'invalid') throw AppError.badRequest(decision.message, decision.details);
        if (decision.kind === 'unchanged') return before;

        const written = await persist(before, { ...decision.next, version: before.version + 1 }, decision, at);
        if (written) {
          recent.keep(key, written);
          eventsWritten();
          return written;
        }
        // Another worker process changed it since: decide again on what it is now.
        if (attempt >= MaxAttempts) throw AppError.unavailable('the checkout process is changing too often; try again');
      }
    });
  };

  /**
   * Writes a decided change with its events, jobs and (when it finished the process) its order, if
   * the process is still at the version it was decided on; undefined when another writer came
   * first. A change that makes a process successful with redeemed coupons records the redemptions
   * in the same transaction (coupons.ts), which may show a coupon as not redeemed after all.
   */
  async function persist(before: ProcessRecord, next: ProcessRecord, decision: Decision & { kind: 'changed' }, at: Date): Promise<ProcessRecord | undefined> {
    const write = async (connection: Db, after: ProcessRecord, couponEvents: db.OutboxEvent[]) => {
      const events = [...outboxEvents(after, decision.events, at), ...fulfillmentJobs(after, decision.jobs ?? []), ...couponEvents];
      const orderState = finishedOrderState(before, after);
      let finished: db.FinishedOrder | undefined;
      if (orderState) {
        // Numbered by the statement that writes it (sequenceNumber 0 marks the place).
        const order = toOrder(after, orderState, 0, at);
        const event = { subject: eventSubject(after.project, 'order', after.id, orderState), payload: orderEventPayload(after, order) };
        finished = { order, event, shopExternalId: after.checkoutInfo.shop.externalId };
        // The TSE finishes the transaction (a job: nothing here waits for it). A final order's
        // receipt is made when first asked for, or with RECEIPTS_AHEAD by a job ahead of that
        // (actors/receipts/jobs.ts); a signed one's once the signature is recorded, so the fiscal
        // job queues it then.
        if (after.fiscalProvider) events.push(fiscalFinishJob(after, orderState === 'final' ? order.paidAmount : undefined));
        else if (orderState === 'final' && deps.receiptsAhead) events.push(receiptJob(after.project, after.id));
      } else if (after.fiscalProvider && after.paymentState === 'transferred' && before.paymentState !== 'transferred') {
        // Handed to another till, which takes the payment: no order here, but the TSE transaction
        // started with the process ends as a transfer.
        events.push(fiscalTransferJob(after));
      }
      return db.writeChange(connection, before.version, after, after.pricing !== before.pricing, events, finished);
    };
    const coupons = couponsToRedeem(before, next);
    if (!coupons.length) return (await write(sql, next, [])) ? next : undefined;
    const outcome = await sql
      .begin(async (tx) => {
        const redeemed = await redeemCoupons(tx, next, coupons, at);
        // A change that lost to another writer leaves no redemption behind either.
        if (!(await write(tx, redeemed.process, redeemed.events))) throw VersionConflict;
        return redeemed.process;
      })
      .catch((err: unknown) => {
        if (err === VersionConflict) return undefined;
        throw err;
      });
    return outcome as ProcessRecord | undefined;
  }

  const routes = [
    route(checkoutProcess.create, async ({ project, id, request }) => {
      const { checkoutInfo, signature } = request.signedCheckoutInfo;
      const canonicalInfo = canonicalCheckoutInfoOf(checkoutInfo);
      const digest = requestDigest(canonicalInfo, signature, request);
      if (id) {
        // A repeated PUT answers the process it made, also once its checkout info has expired.
        const existing = await db.findProcess(sql, project, id);
        if (existing) return { process: toCheckoutProcess(sameRequest(existing, digest)), created: false };
      }
      verifyCheckoutInfo(checkoutInfo, signature, deps.signingKey, { ttlMs: deps.infoTtlMs, canonical: canonicalInfo });
      const { process, jobs } = await newProcess(deps, project, id ?? randomUUID(), request);
      const at = process.createdAt;
      const created: ChangeEvent[] = [
        { domain: 'checkout', event: 'created' },
        { domain: 'pos', event: 'pending' },
        ...process.fulfillments.map((f): ChangeEvent => ({ domain: 'fulfillment', id: f.id, event: 'open' })),
      ];
      const fiscal = { defaultProvider: deps.defaultFiscalProvider, start: fiscalJob({ project, processID: process.id, shopID: process.shopID, step: 'start' }) };
      const inserted = await db.insertProcess(sql, process, digest, [...outboxEvents(process, created, at), ...fulfillmentJobs(process, jobs)], fiscal);
      // Never a silent unsigned sale: a production project must choose how its sales are signed.
      if (inserted.provider === null) throw new AppError(409, 'fiscalization_required', FiscalizationRequiredMessage);
      if (!inserted.created) {
        // The same id was created in between (only a client-chosen id can collide).
        const existing = await db.findProcess(sql, project, process.id);
        if (!existing) throw AppError.unavailable('the checkout process could not be stored; try again');
        return { process: toCheckoutProcess(sameRequest(existing, digest)), created: false };
      }
      const stored: ProcessRecord = inserted.provider === 'fiskaly' || inserted.provider === 'local' ? { ...process, fiscalProvider: inserted.provider } : process;
      recent.keep(`${project}/${process.id}`, stored);
      eventsWritten();
      return { process: toCheckoutProcess(stored), created: true };
    }),

    route(checkoutProcess.get, async ({ project, id }) => toCheckoutProcess(await load(project, id))),

    route(checkoutProcess.listByShop, async ({ project, shop, limit }) => ({
      processes: (await db.listProcessesOfShop(sql, project, shop, limit)).map(toCheckoutProcess),
    })),

    route(checkoutProcess.change, async ({ project, id, change, caller }) =>
      toCheckoutProcess(await command(project, id, (process, at) => decideAll(process, commandsOf(change, caller), at))),
    ),

    route(checkoutProcess.approve, async ({ project, id, approval, caller }) => {
      await command(project, id, (process, at) => decide(process, { type: 'approve', supervisor: { performedBy: caller.sub ?? null } }, at));
      return approval;
    }),

    route(pos.get, async ({ project, id }) => posView(await load(project, id))),

    route(pos.update, async ({ project, id, patch, caller }) => posView(await command(project, id, (process, at) => decidePosUpdate(process, patch, at, caller.sub)))),

    route(fulfillments.get, async ({ project, id }) => {
      const process = await load(project, await processOfFulfillment(project, id));
      return fulfillmentView(process, fulfillmentOf(process, id)!);
    }),

    route(fulfillments.update, async ({ project, id, update }) => {
      const process = await command(project, await processOfFulfillment(project, id), (p, at) => decideServiceUpdate(p, id, update, at));
      return fulfillmentView(process, fulfillmentOf(process, id)!);
    }),

  ];

  const fulfillmentCalls: FulfillmentCallRecorder = {
    async calling({ project, processID, fulfillmentID, call }) {
      const process = await command(project, processID, (p, at) => decideCalling(p, fulfillmentID, call, at));
      const f = fulfillmentOf(process, fulfillmentID)!;
      return { fulfillment: fulfillmentView(process, f), answered: f.answered.includes(call) };
    },
    async answered({ project, processID, fulfillmentID, call }, outcome) {
      await command(project, processID, (p, at) => decideAnswer(p, fulfillmentID, call, outcome, at));
    },
  };

  return { routes, fulfillmentCalls };

  async function processOfFulfillment(project: string, id: string): Promise<string> {
    const processId = await db.findProcessOfFulfillment(sql, project, id);
    if (!processId) throw AppError.notFound(`no fulfillment with id ${id}`);
    return processId;
  }
}

/** The outbox rows of a change's events. */
function outboxEvents(p: ProcessRecord, events: readonly ChangeEvent[], at: Date): db.OutboxEvent[] {
  return events.map((e) => ({
    subject: eventSubject(p.project, e.domain, e.domain === 'fulfillment' ? e.id : p.id, e.event),
    payload: processEventPayload(p, e, at),
  }));
}

/** The outbox rows of the fulfillment calls a change queues: jobs, each published once (Nats-Msg-Id). */
export function fulfillmentJobs(p: ProcessRecord, jobs: readonly FulfillmentJobRef[]): db.OutboxEvent[] {
  return jobs.map(({ fulfillmentID, call }) => {
    const f = fulfillmentOf(p, fulfillmentID)!;
    const payload: FulfillmentJob = {
      project: p.project,
      processID: p.id,
      fulfillmentID,
      call,
      shopID: p.shopID,
      lineItems: f.lineItems,
      ...(f.serviceID ? { serviceID: f.serviceID } : {}),
    };
    return { subject: jobSubject('fulfillment', p.project, fulfillmentID, call), payload, msgId: fulfillmentJobId(fulfillmentID, call) };
  });
}

/**
 * The fiscal finish job of a process that just ended: a paid one (`paid`: its amount) is a receipt
 * (Beleg^...), an aborted or failed one an abort receipt.
 */
export function fiscalFinishJob(p: ProcessRecord, paid: number | undefined): db.OutboxEvent {
  const base: FiscalJob = { project: p.project, processID: p.id, shopID: p.shopID, step: 'finish', processType: FiscalProcessTypes.receipt };
  if (paid === undefined) return fiscalJob({ ...base, processData: AbortProcessData });
  const gross = grossPerRate(p.pricing);
  const data = gross ? receiptProcessData(gross, { amount: paid, method: p.paymentMethod }) : { kind: 'unsignable' as const, reason: 'a line item has no tax rate' };
  return fiscalJob(data.kind === 'signable' ? { ...base, processData: data.processData, final: true } : { ...base, unsignable: data.reason, final: true });
}

/** The fiscal finish job of a process handed to another till: an AVTransfer of its cart, without payment. */
function fiscalTransferJob(p: ProcessRecord): db.OutboxEvent {
  const base: FiscalJob = { project: p.project, processID: p.id, shopID: p.shopID, step: 'finish', processType: FiscalProcessTypes.receipt };
  const gross = grossPerRate(p.pricing);
  const data = gross ? transferProcessData(gross) : { kind: 'unsignable' as const, reason: 'a line item has no tax rate' };
  return fiscalJob(data.kind === 'signable' ? { ...base, processData: data.processData } : { ...base, unsignable: data.reason });
}

/** How many open processes a worker remembers as it last wrote them. */
const RecentProcesses = 2000;

/**
 * The processes this worker wrote last, the oldest forgotten first: open ones, and finished ones
 * whose fulfillments still wait for an answer (a finished process gets no other command).
 * `take` removes the entry: a command puts back what it wrote.
 */
function createRecentProcesses(limit: number) {
  const entries = new Map<string, ProcessRecord>();
  return {
    take(key: string): ProcessRecord | undefined {
      const entry = entries.get(key);
      entries.delete(key);
      return entry;
    },
    keep(key: string, process: ProcessRecord): void {
      entries.delete(key);
      if (isFinished(process.paymentState) && !hasFulfillmentUnderWay(process)) return;
      entries.set(key, process);
      if (entries.size > limit) entries.delete(entries.keys().next().value as string);
    },
  };
}

/**
 * A PATCH as commands: an abort alone, or a pricing update and then a payment state, which is a
 * supervisor's word when the caller holds `supervisor`.
 */
function commandsOf(change: CheckoutProcessChange, caller: Caller): Command[] {
  if (change.aborted) return [{ type: 'abort' }];
  const commands: Command[] = [];
  if (change.pricing) commands.push({ type: 'updatePricing', pricing: change.pricing });
  if (change.paymentState) {
    const supervisor = caller.supervisor ? { supervisor: { performedBy: caller.sub ?? null } } : {};
    commands.push({ type: 'setPaymentState', paymentState: change.paymentState, paymentResult: change.paymentResult, ...supervisor });
  }
  return commands;
}

/**
 * A process from a create request whose checkout info carries its own signature: the info must be
 * for this project and offer the chosen payment method.
 */
async function newProcess(
  deps: CheckoutProcessDeps,
  project: string,
  id: string,
  request: CreateCheckoutProcessRequest,
): Promise<{ process: ProcessRecord; jobs: FulfillmentJobRef[] }> {
  const signed = request.signedCheckoutInfo.checkoutInfo;
  const parsed = CheckoutInfo.safeParse(signed);
  if (!parsed.success) throw AppError.validation(parsed.error, 'checkout info');
  const info = parsed.data;
  if (info.project !== project) throw AppError.badRequest(`the checkout info was made for project ${info.project}`);
  if (!info.availableMethods.includes(request.paymentMethod)) {
    throw new AppError(400, 'invalid_payment_method', `payment method ${request.paymentMethod} is not available for this checkout (${info.availableMethods.join(', ')})`);
  }
  const approvalRequired =
    info.forceControl === true ||
    info.lineItems.some((l) => l.saleRestriction !== '') ||
    (await db.anyForceControlled(
      deps.sql,
      project,
      info.lineItems.map((l) => l.sku),
    ));
  const { fulfillments, jobs } = newFulfillments(info.lineItems);
  const process: ProcessRecord = {
    project,
    id,
    shopID: info.shopID,
    checkoutInfo: info,
    pricing: { lineItems: info.lineItems, price: info.price },
    paymentMethod: request.paymentMethod,
    paymentInformation: request.paymentInformation ?? null,
    paymentResult: null,
    paymentState: 'pending',
    approvalRequired,
    supervisorApproval: approvalRequired ? null : true,
    checksPerformedBy: null,
    paymentApproval: null,
    aborted: false,
    modified: false,
    processedOffline: request.processedOffline,
    pos: {},
    fulfillments,
    version: 1,
    createdAt: new Date(),
    finalizedAt: null,
  };
  return { process, jobs };
}

/** What makes two create requests the same: their content, whatever the key order. */
function requestDigest(canonicalInfo: string, signature: string, request: CreateCheckoutProcessRequest): string {
  const rest = { paymentMethod: request.paymentMethod, paymentInformation: request.paymentInformation ?? null, processedOffline: request.processedOffline };
  let canonicalRest: string | undefined;
  try {
    canonicalRest = canonicalize(rest);
  } catch {
    canonicalRest = undefined;
  }
  if (canonicalRest === undefined) throw AppError.badRequest('paymentInformation has no canonical JSON form (a lone surrogate or a number JSON cannot hold)');
  return createHash('sha256').update(canonicalInfo).update('\n').update(signature).update('\n').update(canonicalRest).digest('hex');
}

function sameRequest(existing: db.StoredProcess, digest: string): ProcessRecord {
  if (existing.requestDigest !== digest) {
    throw AppError.conflict(`checkout process ${existing.record.id} exists and was created with another request`);
  }
  return existing.record;
}

function notFound(id: string): AppError {
  return AppError.notFound(`no checkout process with id ${id}`);
}
