import { z } from 'zod';
import { Href, ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { CheckoutInfo, checkoutProcessPath, LineItem, Price } from './checkout.js';
import { ShopId } from './shops.js';

/**
 * Checkout processes: created from a signed checkout info, moved by the payment system, a supervisor
 * or a PoS, finished as an order. One logical actor per process id (actors/checkout-process).
 */

export const PaymentStates = ['pending', 'processing', 'transferred', 'successful', 'failed'] as const;
export const PaymentState = z.enum(PaymentStates);
export type PaymentState = z.infer<typeof PaymentState>;

/**
 * Process ids travel in paths and QR codes (`service:<id>`). Knowing one is part of the permission,
 * so the platform generates them from 128 random bits; a client choosing one (PUT) must choose as
 * well: at least 20 characters.
 */
export const ProcessId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{20,128}$/, 'a checkout process id is 20-128 letters, digits, "-" or "_": choose it at random (a UUID v4)')
  .describe('Checkout process id: unguessable (the platform generates a UUID v4). It is a token of event subjects, so it has no dots');

const JsonObject = z.record(z.string(), z.unknown());

/**
 * Pricing as stored: the checkout info's own at first; after an update as given, which the spec
 * allows to be incomplete (line items or their fields missing, netPrice and tax optional), with
 * what can be derived filled in (see state.ts completePricing).
 */
/** A line item of a pricing: any part of a checkout line item; types and price origins are open (a PoS's `discount`). */
export const PricingLine = LineItem.partial().extend({
  type: z.string().min(1).max(64).optional(),
  priceOrigin: z.string().min(1).max(64).optional(),
});
export type PricingLine = z.infer<typeof PricingLine>;

export const Pricing = z
  .object({
    lineItems: z.array(PricingLine).max(1000),
    price: Price.partial().extend({ price: z.int().min(0).max(Number.MAX_SAFE_INTEGER) }),
  })
  .meta({ id: 'CheckoutPricing' });
export type Pricing = z.infer<typeof Pricing>;

/** A tax rate as decimal text; the docs' samples also write it as a number (19), taken as "19". */
const TaxRateInput = z.preprocess((v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : v), z.string().max(16));

/** A pricing update as clients send it: line item types and price origins are open, taxRate may be a number. */
export const PricingInput = Pricing.extend({
  lineItems: z.array(PricingLine.extend({ taxRate: TaxRateInput.optional() })).max(1000),
}).meta({ id: 'PricingUpdate' });

/**
 * What must be checked before the payment may succeed: the age for age-restricted items
 * (`min_age`), a supervisor's look for controlled ones (`supervisor_approval`). A supervisor's
 * approval, a PoS taking the process over, or a payment success reported by a supervisor performs
 * them. `performedBy` is the performer's id; the Android SDK decodes any string (its known values
 * `app|supervisor|backend|payment`, else null), so it stays an open string.
 */
export const CheckTypes = ['min_age', 'supervisor_approval'] as const;
export const CheckStates = ['pending', 'successful', 'failed'] as const;
export const Check = z
  .object({
    id: z.string(),
    type: z.enum(CheckTypes),
    requiredAge: z.int().optional().describe('min_age: the age the customer must have'),
    state: z.enum(CheckStates),
    performedBy: z
      .string()
      .optional()
      .describe(
        "Once it is done: the performer's id. The approving supervisor's token `sub`, the supervisor who reported the payment success, or the PoS that took the process over " +
          '(its `processedBy`, else its credential or token `sub`); `supervisor` when the performer is not known (a token without `sub`, or a process checked before performers were recorded)',
      ),
  })
  .meta({ id: 'Check' });
export type Check = z.infer<typeof Check>;

/** Where the customer is sent: nowhere, or to a supervisor while a check waits for one. */
export const RoutingTargets = ['none', 'supervisor'] as const;

export const FulfillmentStates = ['open', 'allocating', 'allocated', 'processing', 'processed', 'aborted', 'allocationFailed', 'allocationTimedOut', 'failed'] as const;
export type FulfillmentState = (typeof FulfillmentStates)[number];

export const FulfillmentError = z
  .object({
    type: z.string().describe('outOfStock, ... (the fulfillment service\'s types)'),
    refersTo: z.string().optional().describe('The line item it is about'),
    itemsAvailable: z.number().optional(),
    message: z.string(),
  })
  .meta({ id: 'FulfillmentError' });
export type FulfillmentError = z.infer<typeof FulfillmentError>;

/** A fulfillment as the process shows it (the shape the app SDKs decode). */
export const ProcessFulfillment = z
  .object({
    id: z.string(),
    type: z.string().describe("The products' fulfillmentType"),
    state: z.enum(FulfillmentStates),
    refersTo: z.array(z.string()).describe('The line items it delivers'),
    errors: z.array(FulfillmentError),
    links: z.object({ self: Href }),
  })
  .meta({ id: 'ProcessFulfillment' });
export type ProcessFulfillment = z.infer<typeof ProcessFulfillment>;

export const CheckoutProcess = z
  .object({
    id: ProcessId,
    supervisorApproval: z.boolean().nullable().describe('null: pending; true: granted (also for processes that need no check); false: rejected'),
    paymentApproval: z.boolean().nullable().describe('null until the payment outcome; true when successful, false when failed or aborted'),
    aborted: z.boolean(),
    checkoutInfo: CheckoutInfo,
    pricing: Pricing,
    paymentMethod: z.string(),
    paymentState: PaymentState,
    paymentInformation: JsonObject.describe('What the app sent, with qrCodeContent: the PoS handover code `service:<id>`'),
    paymentResult: JsonObject.nullable(),
    modified: z.boolean().describe('Set when the pricing was updated'),
    createdAt: z.iso.datetime(),
    finalizedAt: z.iso.datetime().nullable().describe('When the payment succeeded; null before'),
    processedOffline: z.boolean(),
    clientID: z.string(),
    appUserID: z.string(),
    currency: z.string(),
    routingTarget: z.enum(RoutingTargets).describe('supervisor while a check waits for one, else none'),
    checks: z.array(Check).describe('What must be checked before the payment may succeed; supervisorApproval sums them up'),
    fulfillments: z.array(ProcessFulfillment).describe('Deliveries by vending machines or lockers, one per fulfillmentType of its products'),
    orderID: z.string().optional().describe('Once the process finished as an order: its id'),
    links: z.object({
      self: Href,
      approval: Href.describe('POST a supervisor approval here'),
      payment: Href.describe('The PoS handover of this process (QR code `service:<id>`); payment systems PATCH `self`'),
      receipt: Href.optional().describe('Once the order is final: its receipt (PDF)'),
    }),
  })
  .meta({ id: 'CheckoutProcess' });
export type CheckoutProcess = z.infer<typeof CheckoutProcess>;

export const SignedCheckoutInfoInput = z
  .object({
    checkoutInfo: JsonObject.describe('The CheckoutInfo exactly as received: any changed value fails the signature'),
    signature: z.string().min(1).max(4096),
    links: z.unknown().optional(),
  })
  .describe('The Signed Checkout Info as returned by POST /{project}/checkout/info');

export const CreateCheckoutProcessRequest = z
  .object({
    signedCheckoutInfo: SignedCheckoutInfoInput,
    paymentMethod: z.string().min(1).max(64),
    paymentInformation: JsonObject.optional(),
    processedOffline: z.boolean().default(false).describe('Set when the customer was offline while creating the process'),
  })
  .meta({ id: 'CreateCheckoutProcessRequest' });
export type CreateCheckoutProcessRequest = z.infer<typeof CreateCheckoutProcessRequest>;

/**
 * A PATCH of a checkout process: an abort (`{aborted: true}`), a payment state (`{paymentState,
 * paymentResult?}`), a pricing update (`{pricing}`), or a pricing update with a payment state (a PoS
 * that reports its final figures and the payment at once). Each part needs its own permission.
 */
export const CheckoutProcessChange = z
  .strictObject({
    aborted: z.literal(true).optional().describe('Abort the process (alone)'),
    paymentState: PaymentState.optional().describe("pending, processing, successful or failed; `transferred` (this platform's use): handed to a payment system that reports no outcome"),
    paymentResult: JsonObject.optional().describe('What the payment system reports, such as a transaction id (stored with the move)'),
    pricing: PricingInput.optional().describe('New pricing; applied before a paymentState given with it'),
  })
  .superRefine((change, ctx) => {
    if (change.aborted && Object.keys(change).length > 1) ctx.addIssue({ code: 'custom', path: ['aborted'], message: 'an abort comes alone' });
    if (change.paymentResult && !change.paymentState) ctx.addIssue({ code: 'custom', path: ['paymentResult'], message: 'paymentResult comes with a paymentState' });
    if (!change.aborted && !change.paymentState && !change.pricing) ctx.addIssue({ code: 'custom', path: [], message: 'a change names aborted, paymentState or pricing' });
  })
  .meta({ id: 'CheckoutProcessChange' });
export type CheckoutProcessChange = z.infer<typeof CheckoutProcessChange>;

export const CheckoutApproval = z.strictObject({ type: z.literal('supervisor') }).meta({ id: 'CheckoutApproval' });

export const CheckoutProcessList = z.object({ processes: z.array(CheckoutProcess) }).meta({ id: 'CheckoutProcessList' });

export function processPath(project: string, id: string): string {
  return `${checkoutProcessPath(project)}/${id}`;
}

const ProcessAddress = z.object({ project: ProjectId, id: ProcessId });

/**
 * Who sends a command, as the edge verified it: the worker knows nothing else of the caller. `sub`
 * is the token's (a PoS credential's is `pos:<user>`), absent when the token names nobody;
 * `supervisor`: the token holds that permission, so its payment success passes the checks.
 */
export const Caller = z.object({
  sub: z.string().min(1).optional(),
  supervisor: z.boolean(),
});
export type Caller = z.infer<typeof Caller>;
/**
 * In a request: an edge of an older release sends none during a rolling restart; it then counts as
 * a caller without supervisor (its payment success cannot pass a pending check: 409, as before).
 */
export const RequestCaller = Caller.default({ supervisor: false });

export const checkoutProcess = {
  /** Creates a process; with an id (PUT) idempotently: the same request again answers the same process. */
  create: endpoint(
    'svc.checkoutProcess.create',
    z.object({ project: ProjectId, id: ProcessId.optional(), request: CreateCheckoutProcessRequest }),
    z.object({ process: CheckoutProcess, created: z.boolean() }),
    { repeatable: (request) => request.id !== undefined },
  ),
  get: endpoint('svc.checkoutProcess.get', ProcessAddress, CheckoutProcess, { repeatable: true }),
  listByShop: endpoint(
    'svc.checkoutProcess.listByShop',
    z.object({ project: ProjectId, shop: ShopId, limit: z.int().min(1).max(1000) }),
    CheckoutProcessList,
    { repeatable: true },
  ),
  change: endpoint('svc.checkoutProcess.change', ProcessAddress.extend({ change: CheckoutProcessChange, caller: RequestCaller }), CheckoutProcess, { repeatable: true }),
  /** The caller holds `supervisor` (the edge checked it); its `sub` is recorded as the checks' performer. */
  approve: endpoint('svc.checkoutProcess.approve', ProcessAddress.extend({ approval: CheckoutApproval, caller: RequestCaller }), CheckoutApproval, { repeatable: true }),
};
