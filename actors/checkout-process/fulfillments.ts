import { randomUUID } from 'node:crypto';
import type { LineItem } from '../../subjects/checkout.js';
import type { FulfillmentState } from '../../subjects/checkout-process.js';
import type { CallOutcome, FulfillmentCall, FulfillmentUpdate } from '../../subjects/fulfillments.js';
import {
  isFinished,
  movePayment,
  refused,
  type ChangeEvent,
  type Decision,
  type FulfillmentJobRef,
  type FulfillmentRecord,
  type ProcessRecord,
} from './state.js';

/**
 * The fulfillments of a checkout process as pure rules. A fulfillment is part of its process: the
 * process actor writes both in one version-compared statement, with the events and the calls
 * (jobs) a change causes.
 *
 *   open ──allocate──> allocating ──201──> allocated ──deliver──> processing ──> processed
 *                          │                   ├──────────────────────────────> processed
 *                          └──400──> allocationFailed      ├──abort──> aborted
 *                                                          └──(service)──> allocationTimedOut
 *   any call answered with a final 4xx, or unanswered after the last attempt ──> failed
 *
 * - The allocation is queued with the process. The delivery is queued when the payment succeeds
 *   and the goods are reserved (or as soon as they are); the release (abort) when the process ends
 *   unpaid and the goods are reserved (or as soon as they are). Never a delivery before payment,
 *   never one for a failed allocation; each call is queued once.
 * - A failed or timed-out reservation fails a process that is still open (its payment can no
 *   longer succeed); a paid process whose goods cannot be handed out says so with the event
 *   `undeliverable` (a refund case).
 *
 * Their records (FulfillmentRecord) are part of the process record in state.ts.
 */
/** One fulfillment per fulfillmentType among the line items, each with its allocation queued. */
export function newFulfillments(lineItems: readonly LineItem[]): { fulfillments: FulfillmentRecord[]; jobs: FulfillmentJobRef[] } {
  const byType = new Map<string, LineItem[]>();
  for (const line of lineItems) {
    if (line.type !== 'default' || !line.fulfillmentType) continue;
    byType.set(line.fulfillmentType, [...(byType.get(line.fulfillmentType) ?? []), line]);
  }
  const fulfillments = [...byType].map(([type, lines]): FulfillmentRecord => ({
    id: randomUUID(),
    type,
    state: 'open',
    refersTo: lines.map((l) => l.id),
    lineItems: lines.map((l) => ({ id: l.id, sku: l.sku, amount: l.amount, scannedCode: l.scannedCode })),
    errors: [],
    queued: ['allocate'],
    answered: [],
  }));
  return { fulfillments, jobs: fulfillments.map((f) => ({ fulfillmentID: f.id, call: 'allocate' })) };
}

/** A change of a fulfillment: its events and the calls it queues. */
interface Step {
  next: FulfillmentRecord;
  events: ChangeEvent[];
  jobs: FulfillmentJobRef[];
}

function moved(f: FulfillmentRecord, state: FulfillmentState, extra: Partial<FulfillmentRecord> = {}): Step {
  return { next: { ...f, ...extra, state }, events: [{ domain: 'fulfillment', id: f.id, event: state }], jobs: [] };
}

/** Queues a call unless it was queued before. */
function queue(step: Step, call: FulfillmentCall): Step {
  if (step.next.queued.includes(call)) return step;
  return { ...step, next: { ...step.next, queued: [...step.next.queued, call] }, jobs: [...step.jobs, { fulfillmentID: step.next.id, call }] };
}

/** What the reserved goods wait for: delivery (paid) or release (ended unpaid). */
function followUp(step: Step, paymentState: ProcessRecord['paymentState']): Step {
  if (step.next.state !== 'allocated') return step;
  if (paymentState === 'successful') return queue(step, 'deliver');
  if (paymentState === 'failed') return queue(step, 'abort');
  return step;
}

const Unreserved: readonly FulfillmentState[] = ['allocationFailed', 'allocationTimedOut', 'failed'];

/**
 * The fulfillments' side of a process change: when the payment just succeeded, reserved goods are
 * delivered (the others as soon as they are reserved, and `undeliverable` for goods that cannot be);
 * when the process just ended unpaid, reserved goods are released.
 */
export function withFulfillmentEffects(before: ProcessRecord, decision: Decision): Decision {
  if (decision.kind !== 'changed' || !decision.next.fulfillments.length) return decision;
  const to = decision.next.paymentState;
  if (to === before.paymentState || (to !== 'successful' && to !== 'failed')) return decision;
  const events: ChangeEvent[] = [...decision.events];
  const jobs: FulfillmentJobRef[] = [...(decision.jobs ?? [])];
  const fulfillments = decision.next.fulfillments.map((f) => {
    let step: Step = { next: f, events: [], jobs: [] };
    if (to === 'successful' && Unreserved.includes(f.state)) step.events.push({ domain: 'fulfillment', id: f.id, event: 'undeliverable' });
    step = followUp(step, to);
    events.push(...step.events);
    jobs.push(...step.jobs);
    return step.next;
  });
  return { ...decision, next: { ...decision.next, fulfillments }, events, jobs };
}

/** The process's fulfillment with this id. */
export function fulfillmentOf(process: ProcessRecord, id: string): FulfillmentRecord | undefined {
  return process.fulfillments.find((f) => f.id === id);
}

/** A process with one fulfillment changed, and what the change causes for the process. */
function apply(process: ProcessRecord, step: Step, at: Date): Decision {
  const next: ProcessRecord = { ...process, fulfillments: process.fulfillments.map((f) => (f.id === step.next.id ? step.next : f)) };
  const decision: Decision = { kind: 'changed', next, events: step.events, jobs: step.jobs };
  if (!Unreserved.includes(step.next.state)) return decision;
  // Goods that cannot be reserved: an open process can no longer be paid; a paid one is a refund case.
  if (process.paymentState === 'successful') {
    return { ...decision, events: [...decision.events, { domain: 'fulfillment', id: step.next.id, event: 'undeliverable' }] };
  }
  if (isFinished(process.paymentState)) return decision;
  const failed = movePayment(next, 'failed', at);
  if (failed.kind !== 'changed') return decision;
  const reason = `${step.next.type}: the goods cannot be reserved${step.next.errors[0] ? ` (${step.next.errors[0].message || step.next.errors[0].type})` : ''}`;
  // The process actor's command adds what the failed payment causes (withFulfillmentEffects).
  return {
    kind: 'changed',
    next: {
      ...failed.next,
      pos: { ...failed.next.pos, failedReason: failed.next.pos.failedReason || reason },
      paymentResult: { ...failed.next.paymentResult, failureCause: 'fulfillmentFailed', message: reason },
    },
    events: [...step.events, ...failed.events],
    jobs: step.jobs,
  };
}

/**
 * A first allocation attempt is made without a write before it (the caller asks first only when it
 * tries again): its answer records `allocating` on the way, so every fulfillment's events show it.
 */
function throughAllocating(f: FulfillmentRecord, step: Step): Step {
  if (f.state !== 'open') return step;
  return { ...step, events: [{ domain: 'fulfillment', id: f.id, event: 'allocating' }, ...step.events] };
}

/** The caller tries a call again: an allocation takes the fulfillment from open to allocating. */
export function decideCalling(process: ProcessRecord, id: string, call: FulfillmentCall, at: Date): Decision {
  const f = fulfillmentOf(process, id);
  if (!f) return { kind: 'invalid', message: `no fulfillment ${id} in process ${process.id}` };
  if (call === 'allocate' && f.state === 'open' && !f.answered.includes('allocate')) return apply(process, moved(f, 'allocating'), at);
  return { kind: 'unchanged' };
}

/** The answer of a call; an answer recorded before (a redelivered job) changes nothing. */
export function decideAnswer(process: ProcessRecord, id: string, call: FulfillmentCall, outcome: CallOutcome, at: Date): Decision {
  const f = fulfillmentOf(process, id);
  if (!f) return { kind: 'invalid', message: `no fulfillment ${id} in process ${process.id}` };
  if (f.answered.includes(call)) return { kind: 'unchanged' };
  const answered = { answered: [...f.answered, call] };
  const serviceID = 'serviceID' in outcome && outcome.serviceID ? { serviceID: outcome.serviceID } : {};
  switch (outcome.kind) {
    case 'allocated':
      // The service may have reported the state itself already (PATCH): keep what it said.
      if (f.state !== 'open' && f.state !== 'allocating') return apply(process, { next: { ...f, ...answered, ...serviceID }, events: [], jobs: [] }, at);
      return apply(process, throughAllocating(f, followUp(moved(f, 'allocated', { ...answered, ...serviceID }), process.paymentState)), at);
    case 'allocationFailed':
      return apply(process, throughAllocating(f, moved(f, 'allocationFailed', { ...answered, errors: outcome.errors })), at);
    case 'delivered':
      return apply(process, moved(f, outcome.state, { ...answered, ...serviceID }), at);
    case 'aborted':
      return apply(process, moved(f, 'aborted', answered), at);
    case 'refused':
      return apply(process, throughAllocating(f, moved(f, 'failed', { ...answered, errors: outcome.errors })), at);
    case 'gaveUp':
      return apply(process, throughAllocating(f, moved(f, 'failed', { ...answered, errors: [{ type: 'unreachable', message: outcome.reason }] })), at);
  }
}

/** The states a fulfillment service may report for a fulfillment in each state. */
const ServiceMoves: Readonly<Record<FulfillmentState, readonly FulfillmentState[]>> = {
  open: ['allocated', 'allocationFailed'],
  allocating: ['allocated', 'allocationFailed'],
  allocated: ['processing', 'processed', 'failed', 'allocationTimedOut'],
  processing: ['processed', 'failed'],
  processed: [],
  aborted: [],
  allocationFailed: [],
  allocationTimedOut: [],
  failed: [],
};

/** Whether a fulfillment of the process can still change (its calls' answers are still to come). */
export function hasFulfillmentUnderWay(process: ProcessRecord): boolean {
  return process.fulfillments.some((f) => ServiceMoves[f.state].length > 0);
}

/** A state the fulfillment service reports later (PATCH): only the moves of ServiceMoves. */
export function decideServiceUpdate(process: ProcessRecord, id: string, update: FulfillmentUpdate, at: Date): Decision {
  const f = fulfillmentOf(process, id);
  if (!f) return { kind: 'invalid', message: `no fulfillment ${id} in process ${process.id}` };
  if (update.state === f.state && update.errors === undefined) return { kind: 'unchanged' };
  if (!ServiceMoves[f.state].includes(update.state)) return refused(`a fulfillment cannot move from ${f.state} to ${update.state}`);
  const errors = update.errors ? { errors: update.errors } : {};
  if ((update.state === 'processing' || update.state === 'processed') && process.paymentState !== 'successful') {
    return refused(`the goods of fulfillment ${id} may not be handed out: its process is not paid`);
  }
  const step = moved(f, update.state, errors);
  return apply(process, update.state === 'allocated' ? followUp(step, process.paymentState) : step, at);
}
