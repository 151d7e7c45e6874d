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
 * Pricing as stored: the checkout info's own at first; after an update exactly as given, which the
 * spec allows to be incomplete (line items or their fields missing, netPrice and tax optional).
 */
export const Pricing = z
  .object({
    lineItems: z.array(LineItem.partial()).max(1000),
    price: Price.partial().extend({ price: z.int().min(0).max(Number.MAX_SAFE_INTEGER) }),
  })
  .meta({ id: 'CheckoutPricing' });
export type Pricing = z.infer<typeof Pricing>;

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
    paymentInformation: JsonObject.nullable(),
    paymentResult: JsonObject.nullable(),
    modified: z.boolean().describe('Set when the pricing was updated'),
    createdAt: z.iso.datetime(),
    finalizedAt: z.iso.datetime().nullable().describe('When the payment succeeded; null before'),
    processedOffline: z.boolean(),
    clientID: z.string(),
    appUserID: z.string(),
    links: z.object({
      self: Href,
      approval: Href.describe('POST a supervisor approval here'),
      payment: Href.describe('The PoS handover of this process (QR code `service:<id>`); payment systems PATCH `self`'),
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

export const AbortRequest = z.strictObject({ aborted: z.literal(true) }).meta({ id: 'AbortRequest' });

export const SetPaymentStateRequest = z
  .strictObject({
    paymentState: PaymentState.describe('pending, processing, successful or failed; `transferred` (this platform\'s use): handed to a payment system that reports no outcome'),
    paymentResult: JsonObject.optional().describe('What the payment system reports, such as a transaction id (stored with the move)'),
  })
  .meta({ id: 'SetPaymentStateRequest' });

export const UpdatePricingRequest = z.strictObject({ pricing: Pricing }).meta({ id: 'UpdatePricingRequest' });

/** The three shapes of a PATCH on a checkout process; each needs its own permission. */
export const CheckoutProcessChange = z.union([AbortRequest, SetPaymentStateRequest, UpdatePricingRequest]);
export type CheckoutProcessChange = z.infer<typeof CheckoutProcessChange>;

export const CheckoutApproval = z.strictObject({ type: z.literal('supervisor') }).meta({ id: 'CheckoutApproval' });

export const CheckoutProcessList = z.object({ processes: z.array(CheckoutProcess) }).meta({ id: 'CheckoutProcessList' });

export function processPath(project: string, id: string): string {
  return `${checkoutProcessPath(project)}/${id}`;
}

const ProcessAddress = z.object({ project: ProjectId, id: ProcessId });

export const checkoutProcess = {
  /** Creates a process; with an id (PUT) idempotently: the same request again answers the same process. */
  create: endpoint(
    'svc.checkoutProcess.create',
    z.object({ project: ProjectId, id: ProcessId.optional(), request: CreateCheckoutProcessRequest }),
    z.object({ process: CheckoutProcess, created: z.boolean() }),
  ),
  get: endpoint('svc.checkoutProcess.get', ProcessAddress, CheckoutProcess),
  listByShop: endpoint(
    'svc.checkoutProcess.listByShop',
    z.object({ project: ProjectId, shop: ShopId, limit: z.int().min(1).max(1000) }),
    CheckoutProcessList,
  ),
  change: endpoint('svc.checkoutProcess.change', ProcessAddress.extend({ change: CheckoutProcessChange }), CheckoutProcess),
  approve: endpoint('svc.checkoutProcess.approve', ProcessAddress.extend({ approval: CheckoutApproval }), CheckoutApproval),
};
