import { z } from 'zod';
import { Href, Pagination, ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { PaymentState, Pricing } from './checkout-process.js';
import { FiscalReference } from './fiscal.js';
import { PromotionLineFields } from './promotions.js';
import { ShopId } from './shops.js';

/**
 * Orders: what a finished checkout process becomes. `final` for a successful payment; the non-final
 * states say how a process ended without one. Orders are written by the checkout process actor in
 * the transaction that finishes the process, and read here.
 */

export const OrderStates = ['final', 'userAborted', 'paymentFailed'] as const;
export const OrderState = z.enum(OrderStates);
export type OrderState = z.infer<typeof OrderState>;

export const OrderLineItem = z
  .object({
    id: z.string(),
    sku: z.string(),
    name: z.string(),
    type: z.string().describe('default, deposit, promotion or coupon'),
    refersTo: z.string().nullable(),
    amount: z.int(),
    taxRate: z.string(),
    price: z.int(),
    totalPrice: z.int(),
    priceOrigin: z.string(),
    scannedCode: z.string(),
    saleRestriction: z.string(),
    weight: z.int(),
    weightUnit: z.string(),
    referenceUnit: z.string(),
    units: z.int(),
    ...PromotionLineFields,
    redeemed: z.boolean().optional().describe('A coupon line: whether a promotion rule redeemed the coupon'),
  })
  .meta({ id: 'OrderLineItem' });
export type OrderLineItem = z.infer<typeof OrderLineItem>;

export const OrderShop = z.object({
  name: z.string(),
  externalID: z.string(),
  street: z.string(),
  zip: z.string(),
  city: z.string(),
  state: z.string(),
  country: z.string(),
  phone: z.string(),
  email: z.string(),
});

const JsonObject = z.record(z.string(), z.unknown());

export const Order = z
  .object({
    id: z.string().describe('The id of the checkout process it comes from'),
    project: z.string(),
    session: z.string(),
    state: OrderState,
    sequenceNumber: z.int().describe("Number of the order in its shop's sequence (1, 2, 3, ... without gaps); closings cover ranges of it"),
    startedAt: z.iso.datetime().describe('When the checkout process was created'),
    finalizedAt: z.iso.datetime().describe('When the process finished (paid, failed or aborted)'),
    date: z.iso.datetime().describe('The business time of the order: its finalizedAt'),
    createdAt: z.iso.datetime(),
    appUserID: z.string(),
    clientID: z.string(),
    checkoutDeviceID: z.string().describe('The PoS that processed it, else the customer\'s device (clientID)'),
    checkoutDevice: z.object({ type: z.string().describe('pos or app'), externalID: z.string(), name: z.string() }),
    shopID: z.string().describe('The shop id: a string, as everywhere in this API'),
    shop: OrderShop,
    customer: z.object({ loyaltyCard: z.string().optional() }),
    paymentMethod: z.string(),
    paymentInformation: JsonObject.nullable(),
    paymentResult: JsonObject.nullable(),
    paymentState: PaymentState,
    paidAmount: z.int(),
    lineItems: z.array(OrderLineItem),
    currency: z.string(),
    price: Pricing.shape.price,
    links: z.object({ self: Href, receipt: Href.optional().describe('Final orders: the receipt (PDF)') }),
    payments: z.array(
      z.object({
        method: z.string(),
        state: PaymentState,
        information: JsonObject.nullable(),
        result: JsonObject.nullable(),
        currency: z.string(),
        paidAmount: z.int(),
      }),
    ),
    fiscalReference: FiscalReference.optional().describe(
      'The TSE transaction of the sale (KassenSichV): its start and finish logs. Added once the TSE signed the finish, or once it could not (error TSE-Ausfall); absent for provider none',
    ),
  })
  .meta({ id: 'Order' });
export type Order = z.infer<typeof Order>;


export const OrderList = z
  .object({
    resources: z.array(Order),
    pagination: Pagination,
    links: z.object({ self: Href, nextPage: Href.optional() }),
  })
  .meta({ id: 'OrderList' });

export function orderPath(project: string, id: string): string {
  return `/${project}/orders/${id}`;
}

/** The receipt of a final order (a PDF). */
export function receiptPath(project: string, id: string): string {
  return `${orderPath(project, id)}/receipt`;
}

export const OrderFilter = z.object({
  from: z.iso.datetime().optional().describe('Orders finalized at or after this time'),
  to: z.iso.datetime().optional().describe('Orders finalized before this time'),
  shopID: ShopId.optional(),
  shopExternalID: z.string().max(200).optional(),
  includeAllStates: z.boolean(),
});
export type OrderFilter = z.infer<typeof OrderFilter>;

export const orders = {
  /** The Order as its stored JSON text: written from a checked Order, passed through untouched. */
  get: endpoint('svc.orders.get', z.object({ project: ProjectId, id: z.string().min(1).max(200) }), z.object({ order: z.string() }), { repeatable: true }),
  /**
   * Part of a page of the list, as order JSON texts (a page of 30000 orders does not fit in one
   * message). The first part (no `after`) counts the matching orders and refuses a list above the
   * ceiling; the edge asks for the next part from `next` until the page is complete.
   */
  listPart: endpoint(
    'svc.orders.listPart',
    OrderFilter.extend({
      project: ProjectId,
      offset: z.int().min(0),
      after: z.string().optional(),
      limit: z.int().min(1).max(1000),
    }),
    z.object({ orders: z.array(z.string()), next: z.string().nullable(), totalItems: z.int().nullable() }),
    { repeatable: true },
  ),
};
