import canonicalize from 'canonicalize';
import { checkoutPrice } from '../../src/domain/tax.js';
import type { CheckoutInfo } from '../../subjects/checkout.js';
import type { FulfillmentError, FulfillmentState, PaymentState, Pricing } from '../../subjects/checkout-process.js';
import type { CheckoutProcessEventName, PosEventName } from '../../subjects/events.js';
import type { FulfillmentCall, FulfillmentEventName, FulfillmentLineItem } from '../../subjects/fulfillments.js';
import type { OrderState } from '../../subjects/orders.js';

/**
 * The checkout process as its actor sees it, and the pure rules that move it. The handler loads a
 * record under the row's lock, asks `decide` what a command does, and stores the decision with its
 * events and, when the process just finished, its order. Nothing here does I/O.
 *
 * Payment state machine (the PoS `state` is the same fact):
 *
 *     pending ──> processing ──> successful   (needs the supervisor approval when one is required,
 *                                             or a supervisor reporting it: that passes the checks)
 *        │            ├────────> failed
 *        ├────────────┴────────> transferred  (handed to a payment system that reports no outcome)
 *        ├─────────────────────> successful   (a payment confirmed at once; cash at a PoS)
 *        └─────────────────────> failed
 *
 * successful, failed and transferred are terminal: nothing changes a finished process. An abort is
 * possible before that and finishes the process as failed, with `aborted` set. Asking for what
 * already holds (the state it is in, a second abort) changes nothing and is no error: clients retry.
 * Every change publishes at least one event, named after the state it leaves (or what happened).
 */

export type JsonObject = Record<string, unknown>;

/** What a PoS said about the process. */
export interface PosNotes {
  processedBy?: string;
  failedReason?: string;
  loyaltyCard?: string;
}

export interface ProcessRecord {
  project: string;
  id: string;
  shopID: string;
  checkoutInfo: CheckoutInfo;
  /** The pricing in force: the checkout info's own until an update. */
  pricing: Pricing;
  paymentMethod: string;
  paymentInformation: JsonObject | null;
  paymentResult: JsonObject | null;
  paymentState: PaymentState;
  /** Age-restricted or controlled items: the payment may succeed only after a supervisor's approval. */
  approvalRequired: boolean;
  supervisorApproval: boolean | null;
  /**
   * Who passed the checks: a supervisor's token sub, or the PoS that took the process over. null
   * while they wait, and when the performer is not known (stored before it was recorded, a token
   * without sub): shown as `supervisor`.
   */
  checksPerformedBy: string | null;
  paymentApproval: boolean | null;
  aborted: boolean;
  modified: boolean;
  processedOffline: boolean;
  pos: PosNotes;
  /** Deliveries of its goods by a fulfillment service (fulfillments.ts); part of the process. */
  fulfillments: FulfillmentRecord[];
  /** Counts the changes; events carry it. */
  version: number;
  createdAt: Date;
  /** When the payment succeeded. */
  finalizedAt: Date | null;
  /**
   * The TSE provider that signs its transaction (fiscal jobs), fixed when it was created; absent:
   * nothing is signed (provider `none`, or a process from before fiscalization).
   */
  fiscalProvider?: SigningProvider;
}

export type SigningProvider = 'fiskaly' | 'local';

/** A delivery of the process's goods by a fulfillment service; its rules are in fulfillments.ts. */
export interface FulfillmentRecord {
  id: string;
  type: string;
  state: FulfillmentState;
  refersTo: string[];
  lineItems: FulfillmentLineItem[];
  errors: FulfillmentError[];
  serviceID?: string;
  /** Calls queued as jobs (each at most once). */
  queued: FulfillmentCall[];
  /** Calls whose answer is recorded (a redelivered job finds its answer here and does nothing). */
  answered: FulfillmentCall[];
}

export interface FulfillmentJobRef {
  fulfillmentID: string;
  call: FulfillmentCall;
}

export type ChangeEvent =
  | { domain: 'checkout'; event: CheckoutProcessEventName }
  | { domain: 'pos'; event: PosEventName }
  | { domain: 'fulfillment'; id: string; event: FulfillmentEventName };

export type Decision =
  /** The machine does not allow it: 409 invalid_state_transition, nothing changes. */
  | { kind: 'refused'; message: string }
  /** The request itself is wrong for this move (a PoS changing fields the move does not allow): 400. */
  | { kind: 'invalid'; message: string; details?: Array<Record<string, unknown>> }
  /** Asked for what already holds: answered as it stands, nothing written. */
  | { kind: 'unchanged' }
  /** `jobs`: fulfillment calls the change queues (written to the outbox with it). */
  | { kind: 'changed'; next: ProcessRecord; events: ChangeEvent[]; jobs?: FulfillmentJobRef[] };

/** A supervisor's word: who gave it (its token's sub), null when the token names nobody. */
export interface Supervisor {
  performedBy: string | null;
}

export type Command =
  | { type: 'abort' }
  /** `supervisor`: the caller holds `supervisor`, so its payment success passes the checks. */
  | { type: 'setPaymentState'; paymentState: PaymentState; paymentResult?: JsonObject; supervisor?: Supervisor }
  | { type: 'updatePricing'; pricing: Pricing }
  | { type: 'approve'; supervisor: Supervisor };

export const PaymentMoves: Readonly<Record<PaymentState, readonly PaymentState[]>> = {
  pending: ['processing', 'successful', 'failed', 'transferred'],
  processing: ['successful', 'failed', 'transferred'],
  transferred: [],
  successful: [],
  failed: [],
};

export function isFinished(state: PaymentState): boolean {
  return PaymentMoves[state].length === 0;
}

export const AbortedReason = 'aborted by the customer';

export function refused(message: string): Decision {
  return { kind: 'refused', message };
}

export function decide(process: ProcessRecord, command: Command, at: Date): Decision {
  switch (command.type) {
    case 'setPaymentState': {
      const { paymentState: to, paymentResult } = command;
      const newResult = paymentResult !== undefined && canonicalize(paymentResult) !== canonicalize(process.paymentResult);
      if (to === process.paymentState) {
        // A repeat (a retry after a lost answer) is answered as it stands; new payment details
        // are kept while the process is open.
        if (!newResult) return { kind: 'unchanged' };
        if (isFinished(to)) return refused(finishedMessage(process));
        return { kind: 'changed', next: { ...process, paymentResult }, events: [{ domain: 'checkout', event: to as CheckoutProcessEventName }] };
      }
      // A supervisor who took the money has checked the customer: one change approves and pays,
      // with the events of both in that order. Anyone else's success waits for the checks.
      const supervisor = to === 'successful' && !isFinished(process.paymentState) ? command.supervisor : undefined;
      const supervision = supervisor ? passChecks(process, supervisor.performedBy) : { next: process, events: [] };
      const decision = movePayment(supervision.next, to, at);
      if (decision.kind !== 'changed') return decision;
      const events = [...supervision.events, ...decision.events];
      return { ...decision, events, next: paymentResult === undefined ? decision.next : { ...decision.next, paymentResult } };
    }
    case 'abort':
      if (process.aborted) return { kind: 'unchanged' };
      if (isFinished(process.paymentState)) return refused(finishedMessage(process));
      return {
        kind: 'changed',
        next: {
          ...process,
          aborted: true,
          paymentState: 'failed',
          paymentApproval: false,
          pos: { ...process.pos, failedReason: process.pos.failedReason || AbortedReason },
        },
        events: [
          { domain: 'checkout', event: 'aborted' },
          { domain: 'pos', event: 'failed' },
        ],
      };
    case 'updatePricing':
      if (isFinished(process.paymentState)) return refused(finishedMessage(process));
      return {
        kind: 'changed',
        next: { ...process, pricing: completePricing(command.pricing), modified: true },
        events: [{ domain: 'checkout', event: 'pricingUpdated' }],
      };
    case 'approve':
      if (isFinished(process.paymentState)) return refused(finishedMessage(process));
      if (process.supervisorApproval === true) return { kind: 'unchanged' };
      return { kind: 'changed', ...passChecks(process, command.supervisor.performedBy) };
  }
}

/**
 * Several commands as one change (a pricing update with the payment state it led to): each decides
 * on what the one before left; the first refusal refuses them all.
 */
export function decideAll(process: ProcessRecord, commands: readonly Command[], at: Date): Decision {
  let current = process;
  const events: ChangeEvent[] = [];
  const jobs: FulfillmentJobRef[] = [];
  for (const command of commands) {
    const decision = decide(current, command, at);
    if (decision.kind === 'refused' || decision.kind === 'invalid') return decision;
    if (decision.kind === 'changed') {
      current = decision.next;
      events.push(...decision.events);
      jobs.push(...(decision.jobs ?? []));
    }
  }
  return events.length ? { kind: 'changed', next: current, events, jobs } : { kind: 'unchanged' };
}

/**
 * A pricing update as stored: as given, with what can be derived filled in, so that apps can read
 * it: line items without id or type get `line-<n>` and `default`; a price without netPrice gets
 * it from its taxes, or, when the line items carry every rate and total and add up to the price,
 * the per-rate figures of the tax rules (tax.ts).
 */
export function completePricing(pricing: Pricing): Pricing {
  const lineItems = pricing.lineItems.map((l, i) => ({ ...l, id: l.id ?? `line-${i + 1}`, type: l.type ?? 'default' }));
  let price = pricing.price;
  if (price.netPrice === undefined) {
    const complete = lineItems.every((l) => l.taxRate !== undefined && l.totalPrice !== undefined);
    const derived = complete ? checkoutPrice(lineItems as Array<{ totalPrice: number; taxRate: string }>) : undefined;
    if (price.tax) price = { ...price, netPrice: price.price - Object.values(price.tax).reduce((a, b) => a + b, 0) };
    else if (derived && derived.price === price.price) price = { ...derived, ...price, netPrice: derived.netPrice };
  }
  return { lineItems, price };
}

/** A move of the payment state, by the payment system or (as its `state`) by a PoS. */
export function movePayment(process: ProcessRecord, to: PaymentState, at: Date): Decision {
  const from = process.paymentState;
  if (to === from) return { kind: 'unchanged' };
  if (isFinished(from)) return refused(finishedMessage(process));
  if (!PaymentMoves[from].includes(to)) return refused(`the payment cannot move from ${from} to ${to}`);
  if (to === 'successful' && process.approvalRequired && process.supervisorApproval !== true) {
    return refused('the payment cannot succeed before a supervisor approved the process (it has age-restricted or controlled items)');
  }
  const next: ProcessRecord = { ...process, paymentState: to };
  if (to === 'successful') {
    next.paymentApproval = true;
    next.finalizedAt = at;
  } else if (to === 'failed') {
    next.paymentApproval = false;
  }
  return {
    kind: 'changed',
    next,
    events: [
      { domain: 'checkout', event: to as CheckoutProcessEventName },
      { domain: 'pos', event: to as PosEventName },
    ],
  };
}

/** The order a change creates: when it finished the process (a transferred one has no outcome to record). */
export function finishedOrderState(before: ProcessRecord, after: ProcessRecord): OrderState | undefined {
  if (isFinished(before.paymentState) || !isFinished(after.paymentState)) return undefined;
  if (after.aborted) return 'userAborted';
  if (after.paymentState === 'successful') return 'final';
  if (after.paymentState === 'failed') return 'paymentFailed';
  return undefined;
}

/**
 * The checks passed by a supervisor (an approval, a PoS that takes the process over, a supervisor's
 * payment success): supervisorApproval with its `approved` event, and who performed them. Checks
 * passed before keep their performer and publish nothing.
 */
export function passChecks(process: ProcessRecord, performedBy: string | null): { next: ProcessRecord; events: ChangeEvent[] } {
  if (process.supervisorApproval === true) return { next: process, events: [] };
  return { next: { ...process, supervisorApproval: true, checksPerformedBy: performedBy }, events: [{ domain: 'checkout', event: 'approved' }] };
}

export function finishedMessage(process: ProcessRecord): string {
  return `the process is finished (${process.aborted ? 'aborted' : `payment ${process.paymentState}`}): nothing changes it any more`;
}
