import { z } from 'zod';
import { Href, ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { FulfillmentError, FulfillmentStates, ProcessId } from './checkout-process.js';

/**
 * Fulfillments: goods a vending machine or a locker hands out, reserved when a checkout process
 * starts (allocation) and handed out once it is paid (delivery), through calls to an external
 * fulfillment service (`POST|PUT {FULFILLMENT_URL}/service`). A fulfillment belongs to its checkout
 * process (one per process and fulfillmentType), and the process actor is its only writer; the
 * fulfillment caller (actors/fulfillment-caller) makes the calls as durable jobs and reports each
 * answer to the process actor before it acks the job.
 */
export const FulfillmentState = z.enum(FulfillmentStates);

/** The calls the platform makes: reserve (POST, state allocating), deliver (PUT, processing), release (PUT, aborted). */
export const FulfillmentCalls = ['allocate', 'deliver', 'abort'] as const;
export type FulfillmentCall = (typeof FulfillmentCalls)[number];

export const FulfillmentLineItem = z
  .object({ id: z.string(), sku: z.string(), amount: z.int(), scannedCode: z.string() })
  .meta({ id: 'FulfillmentLineItem' });
export type FulfillmentLineItem = z.infer<typeof FulfillmentLineItem>;

/** A fulfillment as the platform shows it (the spec's Fulfillment object with its process and type). */
export const Fulfillment = z
  .object({
    id: z.string().describe('Unguessable; its path is the links.fulfillment.href the service receives'),
    type: z.string().describe("The products' fulfillmentType"),
    state: FulfillmentState,
    shopID: z.string(),
    processID: z.string().describe('The checkout process it belongs to'),
    serviceID: z.string().optional().describe("The fulfillment service's id of it, once it answered an allocation"),
    refersTo: z.array(z.string()).describe('The line items of the process it delivers'),
    lineItems: z.array(FulfillmentLineItem),
    errors: z.array(FulfillmentError),
    links: z.object({ self: Href, process: Href }),
  })
  .meta({ id: 'Fulfillment' });
export type Fulfillment = z.infer<typeof Fulfillment>;

export const FulfillmentId = z.string().regex(/^[A-Za-z0-9_-]{20,128}$/, 'a fulfillment id');

/**
 * A state the fulfillment service reports later (PATCH), with the errors it gives. Only the moves of
 * the state table are taken: allocating → allocated | allocationFailed; allocated → processing |
 * processed | failed | allocationTimedOut; processing → processed | failed.
 */
export const FulfillmentUpdate = z
  .object({
    state: FulfillmentState,
    errors: z.array(FulfillmentError.extend({ message: z.string().max(2000).default('') })).max(200).optional(),
  })
  .meta({ id: 'FulfillmentUpdate' });
export type FulfillmentUpdate = z.infer<typeof FulfillmentUpdate>;

/**
 * A call as a job of the stream JOBS (`jobs.fulfillment.<project>.<fulfillmentId>.<call>`,
 * Nats-Msg-Id `<fulfillmentId>.<call>`), with what the call sends, so that a first attempt needs no
 * read; a later attempt asks the process actor first (the answer may be recorded already).
 */
export const FulfillmentJob = z
  .object({
    project: ProjectId,
    processID: ProcessId,
    fulfillmentID: FulfillmentId,
    call: z.enum(FulfillmentCalls),
    shopID: z.string(),
    lineItems: z.array(FulfillmentLineItem),
    serviceID: z.string().optional(),
  })
  .meta({ id: 'FulfillmentJob' });
export type FulfillmentJob = z.infer<typeof FulfillmentJob>;

export function fulfillmentJobId(fulfillmentId: string, call: FulfillmentCall): string {
  return `${fulfillmentId}.${call}`;
}

/** What the service answered a call, as the caller records it on the process. */
export const CallOutcome = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('allocated'), serviceID: z.string().optional() }),
  z.object({ kind: z.literal('allocationFailed'), errors: z.array(FulfillmentError) }),
  z.object({ kind: z.literal('delivered'), state: z.enum(['processed', 'processing']), serviceID: z.string().optional() }),
  z.object({ kind: z.literal('aborted') }),
  /** A final refusal (a 4xx other than an allocation's 400): the fulfillment failed. */
  z.object({ kind: z.literal('refused'), status: z.int(), errors: z.array(FulfillmentError) }),
  /** No answer after the last attempt. */
  z.object({ kind: z.literal('gaveUp'), reason: z.string() }),
]);
export type CallOutcome = z.infer<typeof CallOutcome>;

/** Events `events.<project>.fulfillment.<id>.<event>`: every state change, and `undeliverable` (a paid process whose goods cannot be handed out: a refund case). */
export const FulfillmentEvents = [...FulfillmentStates, 'undeliverable'] as const;
export type FulfillmentEventName = (typeof FulfillmentEvents)[number];

export const FulfillmentEvent = z
  .object({
    project: z.string(),
    id: z.string().describe('The fulfillment id'),
    processID: z.string(),
    version: z.int().describe('The version of the process after the change'),
    at: z.iso.datetime(),
    event: z.enum(FulfillmentEvents),
    fulfillment: Fulfillment,
  })
  .meta({ id: 'FulfillmentEvent' });
export type FulfillmentEvent = z.infer<typeof FulfillmentEvent>;

export function fulfillmentPath(project: string, id: string): string {
  return `/${project}/fulfillments/${id}`;
}

const FulfillmentAddress = z.object({ project: ProjectId, id: FulfillmentId });
export const fulfillments = {
  get: endpoint('svc.fulfillments.get', FulfillmentAddress, Fulfillment, { repeatable: true }),
  /** The service's own report of a state (PATCH /{project}/fulfillments/{id}). */
  update: endpoint('svc.fulfillments.update', FulfillmentAddress.extend({ update: FulfillmentUpdate }), Fulfillment),
};
