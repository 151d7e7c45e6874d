import { z } from 'zod';
import { ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { PaymentState, ProcessId, RequestCaller } from './checkout-process.js';
import { TaxRate } from './settings.js';

/**
 * The PoS handover: a point of sale reads `service:<id>` from the customer's QR code and works on
 * the same checkout process through this view of it. Its `state` is the process's paymentState
 * (one fact seen two ways).
 */

const Money = z.int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

/** A tax rate as decimal text; PoS systems (and the docs' samples) also send it as a number: 19 is "19". */
const PosTaxRate = z.preprocess((v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : v), TaxRate);
const Total = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

export const PosLineItem = z
  .object({
    sku: z.string().max(200).default(''),
    scannedCode: z.string().max(64).default(''),
    amount: z.int().min(0).max(100_000),
    weight: z.int().min(0).max(100_000_000).default(0),
    units: z.int().min(0).max(100_000).default(0),
    price: Money.describe('Base price of one product or unit'),
    totalPrice: Money.describe('Negative for a discount line'),
    taxRate: z.union([PosTaxRate, z.literal('')]).default(''),
  })
  .meta({ id: 'PoSLineItem' });
export type PosLineItem = z.infer<typeof PosLineItem>;

export const TaxShare = z
  .object({
    rate: PosTaxRate,
    net: Money,
    share: Money.describe('The tax of the rate'),
    total: Money,
  })
  .meta({ id: 'TaxShare' });
export type TaxShare = z.infer<typeof TaxShare>;

/** The states a PoS sets; `transferred` belongs to payment systems. */
export const PosState = z.enum(['pending', 'processing', 'successful', 'failed']);
export type PosState = z.infer<typeof PosState>;

export const PosCheckoutProcess = z
  .object({
    lineItems: z.array(PosLineItem),
    taxShares: z.array(TaxShare).nullable(),
    netPrice: z.int(),
    totalPrice: z.int(),
    state: PaymentState.describe('pending, processing, successful or failed (transferred when a payment system took the process over)'),
    loyaltyCard: z.string(),
    processedBy: z.string().describe('The PoS that processes the checkout'),
    failedReason: z.string(),
  })
  .meta({ id: 'PoSCheckoutProcess' });
export type PosCheckoutProcess = z.infer<typeof PosCheckoutProcess>;

/** The PoS view after a PUT or a merge patch: what a PoS may leave there. */
export const PosCheckoutProcessInput = z.object({
  lineItems: z.array(PosLineItem).max(1000),
  taxShares: z.array(TaxShare).max(50).nullable().default(null),
  netPrice: Total,
  totalPrice: Total,
  state: PosState,
  loyaltyCard: z.string().max(100).default(''),
  processedBy: z.string().max(200).default(''),
  failedReason: z.string().max(2000).default(''),
});
export type PosCheckoutProcessInput = z.infer<typeof PosCheckoutProcessInput>;

export function posPath(project: string, id: string): string {
  return `/${project}/pos/checkout/id/${id}`;
}

const PosAddress = z.object({ project: ProjectId, id: ProcessId });

export const pos = {
  get: endpoint('svc.pos.get', PosAddress, PosCheckoutProcess, { repeatable: true }),
  /**
   * An RFC 7386 merge patch of the PoS view (PATCH; a PUT's body is applied the same way: the fields
   * it carries replace the stored ones). The worker applies it to the current view under the
   * process's lock; the move it makes must be allowed, with only the fields that move may change.
   * The caller's `sub` is the performer of the checks a takeover passes when the PoS names no processedBy.
   */
  update: endpoint('svc.pos.update', PosAddress.extend({ patch: z.record(z.string(), z.unknown()), caller: RequestCaller }), PosCheckoutProcess, { repeatable: true }),
};
