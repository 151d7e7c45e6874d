import { z } from 'zod';
import { Href, ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { Sku, Unit } from './products.js';
import { PromotionLineFields } from './promotions.js';
import { Shop, ShopId } from './shops.js';

const Amount = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

/** The type of a deposit return voucher item (a Pfandbon the customer scanned). */
export const DepositReturnVoucherType = 'depositReturnVoucher';

/**
 * A cart item as the public app SDKs send it, in one of three shapes (one object schema, so that a
 * refusal names the field):
 * - a product: `{id, sku?, scannedCode?, amount, price?, weight?, weightUnit?, units?}`; `price`,
 *   `weight` and `units` are what the app decoded from the code (or a price it read elsewhere);
 * - a coupon: `{id, couponID, refersTo?, scannedCode?, amount}`;
 * - a deposit return voucher: `{id, type: "depositReturnVoucher", itemID, scannedCode, amount}` (the
 *   SDKs spell the item id `itemID`, `ItemID` or `itemId`).
 * The parsed item carries its `kind`.
 */
export const CartItem = z
  .object({
    id: z.string().min(1).max(200).nullable().optional().describe('Id of the item; line items keep it (generated when absent)'),
    type: z.string().max(64).optional().describe('`depositReturnVoucher` for a voucher; absent for products and coupons'),
    sku: Sku.optional(),
    amount: z.int().min(1).max(100_000).default(1).describe('Number of products or packages'),
    weight: z.int().min(0).max(100_000_000).nullable().optional().describe('Weight of a weighable product, in weightUnit'),
    weightUnit: Unit.nullable().optional().describe("The unit the app decoded: a weight unit, `piece` (with units) or `price` (with price); the product's encodingUnit when absent"),
    units: z.int().min(0).max(100_000).nullable().optional().describe('Units in a package (bundle or piece product)'),
    price: Amount.nullable().optional().describe('A price the app read from the code (price-encoded products) or a label; the line gets priceOrigin client'),
    scannedCode: z.string().min(1).max(500).optional(),
    couponID: z.string().min(1).max(200).optional().describe('A coupon item: the coupon'),
    refersTo: z.string().min(1).max(200).optional().describe('A coupon item: the item it applies to'),
    itemID: z.string().min(1).max(200).optional().describe('A deposit return voucher: its id (also spelled ItemID, itemId)'),
    ItemID: z.string().min(1).max(200).optional(),
    itemId: z.string().min(1).max(200).optional(),
  })
  .superRefine((item, ctx) => {
    if (item.type === DepositReturnVoucherType) {
      if (item.scannedCode === undefined) ctx.addIssue({ code: 'custom', path: ['scannedCode'], message: 'a deposit return voucher carries its scannedCode' });
    } else if (item.couponID === undefined && item.sku === undefined && item.scannedCode === undefined) {
      ctx.addIssue({ code: 'custom', path: ['sku'], message: 'an item names a sku, a scannedCode or a couponID' });
    }
  })
  .transform((item) => {
    if (item.type === DepositReturnVoucherType) {
      return { kind: 'voucher' as const, id: item.id ?? undefined, itemID: item.itemID ?? item.ItemID ?? item.itemId ?? '', scannedCode: item.scannedCode ?? '', amount: item.amount };
    }
    if (item.couponID !== undefined) {
      return { kind: 'coupon' as const, id: item.id ?? undefined, couponID: item.couponID, refersTo: item.refersTo, scannedCode: item.scannedCode, amount: item.amount };
    }
    const product: CartItem = {
      id: item.id,
      sku: item.sku,
      amount: item.amount,
      weight: item.weight,
      weightUnit: item.weightUnit,
      units: item.units,
      price: item.price,
      scannedCode: item.scannedCode,
    };
    return { kind: 'product' as const, ...product };
  });
export type CartEntry = z.output<typeof CartItem>;

/** A product item of a cart, as pricing takes it. */
export interface CartItem {
  id?: string | null;
  sku?: string;
  amount: number;
  weight?: number | null;
  weightUnit?: string | null;
  units?: number | null;
  price?: number | null;
  scannedCode?: string;
}

export const Customer = z
  .object({ loyaltyCard: z.string().max(200).optional() })
  .catchall(z.unknown())
  .describe('Further customer information, such as a loyaltyCard number');

/** Information a checkout needs from the customer (the SDKs send `{id: "taxation", value: "inHouse" | "takeaway"}`). */
export const RequiredInformation = z
  .object({ id: z.string().min(1).max(64), value: z.string().max(200).optional() })
  .meta({ id: 'RequiredInformation' });

export const Cart = z
  .object({
    clientID: z.string().max(200).optional(),
    appUserID: z.string().max(200).optional(),
    session: z.string().max(200).optional(),
    shopID: ShopId,
    deviceType: z
      .string()
      .min(1)
      .max(32)
      .default('app')
      .describe("This platform's addition: the kind of device the cart comes from (app, pos, sco-ng); products with allowedOnDeviceTypes are sold only on those"),
    items: z
      .array(CartItem)
      .max(500)
      .refine((items) => {
        const ids = items.flatMap((i) => (i.id ? [i.id] : []));
        return new Set(ids).size === ids.length;
      }, 'item ids must not repeat'),
    customer: Customer.optional(),
    requiredInformation: z.array(RequiredInformation).max(20).default([]).describe('Answered back in the checkout info'),
    eventType: z.string().max(64).optional().describe('Sent by the Android SDK ("cart"); not used'),
  })
  .meta({ id: 'Cart' });
export type Cart = z.output<typeof Cart>;

/**
 * Line item types: products (`default`), their deposits, discounts of promotion rules
 * (`promotion`: negative totalPrice, refersTo the discounted line, none for a cart discount), and
 * the coupons of the cart (`coupon`: totalPrice 0, `redeemed` when a rule redeemed it).
 */
export const LineItemTypes = ['default', 'deposit', 'promotion', 'coupon'] as const;

export const LineItem = z
  .object({
    id: z.string(),
    type: z.enum(LineItemTypes),
    refersTo: z.string().nullable(),
    sku: z.string(),
    amount: z.int(),
    weight: z.int(),
    weightUnit: z.string().optional().describe('Absent unless the item was weighed (the iOS SDK refuses an empty unit)'),
    referenceUnit: z.string().optional().describe('Absent unless the product is priced per measure'),
    units: z.int(),
    price: z.int().describe('Price of one unit, piece or reference unit'),
    priceOrigin: z.enum(['master', 'client']),
    totalPrice: z.int(),
    name: z.string(),
    taxRate: z.string(),
    scannedCode: z.string(),
    saleRestriction: z.string(),
    fulfillmentType: z.string().optional().describe('Set when a fulfillment service (a vending machine, a locker) hands the product out'),
    ...PromotionLineFields,
    redeemed: z.boolean().optional().describe('A coupon line: whether a promotion rule redeemed the coupon'),
  })
  .meta({ id: 'LineItem' });
export type LineItem = z.infer<typeof LineItem>;

const PerRate = z.record(z.string(), z.int());

export const Price = z
  .object({
    tax: PerRate.describe('Per tax rate: the tax'),
    taxNet: PerRate.describe('Per tax rate: the net part'),
    taxPre: PerRate.describe('Per tax rate: the gross sum of its line items'),
    netPrice: z.int(),
    price: z.int(),
  })
  .meta({ id: 'Price' });

/** The shop as a checkout info carries it (the spec's ShopInformation). */
export const ShopInformation = Shop.pick({ externalId: true, name: true, email: true, phone: true, street: true, zip: true, city: true, state: true, country: true });
export type ShopInformation = z.infer<typeof ShopInformation>;

/** A payment method as the SDKs decode it: its id, and the origins (stored payment data) it accepts. */
export const PaymentMethodDescription = z
  .object({ id: z.string(), acceptedOriginTypes: z.array(z.string()).optional() })
  .meta({ id: 'PaymentMethodDescription' });
export type PaymentMethodDescription = z.infer<typeof PaymentMethodDescription>;

/** A problem with a coupon or voucher of the cart that does not block the purchase. */
export const ViolationTypes = ['coupon_invalid', 'coupon_currently_not_valid', 'coupon_already_voided', 'deposit_return_voucher_duplicate', 'invalid_line_item'] as const;
export const Violation = z
  .object({ type: z.enum(ViolationTypes), message: z.string(), refersTo: z.string().optional().describe('The cart item it is about') })
  .meta({ id: 'Violation' });
export type Violation = z.infer<typeof Violation>;

export const CheckoutInfo = z
  .object({
    session: z.string(),
    clientID: z.string(),
    appUserID: z.string(),
    shopID: z.string(),
    project: z.string(),
    shop: ShopInformation,
    customer: Customer,
    createdAt: z.iso.datetime(),
    availableMethods: z.array(z.string()),
    paymentMethods: z.array(PaymentMethodDescription).describe('The availableMethods as the app SDKs decode them'),
    lineItems: z.array(LineItem),
    price: Price,
    currency: z.string(),
    requiredInformation: z.array(RequiredInformation).describe("The cart's, as answered"),
    violations: z.array(Violation).describe('Coupons and vouchers of the cart that could not be used; they do not block the purchase'),
    forceControl: z.literal(true).optional().describe('A promotion rule (addForceControl) asks a supervisor to look at the checkout'),
  })
  .meta({ id: 'CheckoutInfo' });
export type CheckoutInfo = z.infer<typeof CheckoutInfo>;

export const SignedCheckoutInfo = z
  .object({
    checkoutInfo: CheckoutInfo,
    signature: z.string().describe('JWS (HS256, detached payload) over the RFC 8785 canonical JSON of checkoutInfo'),
    links: z.object({ checkoutProcess: Href }),
  })
  .meta({ id: 'SignedCheckoutInfo' });
export type SignedCheckoutInfo = z.infer<typeof SignedCheckoutInfo>;

/** The refusal of one cart item, in the `details` of an invalid_cart_item error. */
export const LineItemErrorTypes = [
  'product_not_found',
  'sale_stop',
  'not_for_sale',
  'deposit_alone',
  'max_sale_quantity',
  'device_not_allowed',
  'no_price',
  'weight_required',
  'no_tax_rate',
  'invalid_code',
  'fulfillment_unavailable',
] as const;
export type LineItemErrorType = (typeof LineItemErrorTypes)[number];

export const LineItemError = z.object({
  sku: z.string(),
  type: z.enum(LineItemErrorTypes),
  message: z.string(),
  id: z.string().optional().describe('The cart item it is about'),
});
export type LineItemError = z.infer<typeof LineItemError>;

export function checkoutProcessPath(project: string): string {
  return `/${project}/checkout/process`;
}

/** What one promotion rule did for a cart (the evaluate operation explains a configuration with it). */
export const RuleOutcome = z
  .object({
    ruleID: z.string(),
    rankID: z.string(),
    groupID: z.string(),
    conditionHeld: z.boolean().describe('Whether its condition held (false when its group was skipped)'),
    granted: z.int().describe('What it took off, in the currency subunit'),
    skippedReason: z.string().optional().describe('group_condition_failed, condition_failed, coupon_missing, not_best'),
    wouldGrant: z.int().optional().describe('selectBest: what a rule that was not the best would have granted'),
  })
  .meta({ id: 'RuleOutcome' });

export const Evaluation = z
  .object({
    checkoutInfo: CheckoutInfo.describe('The checkout info the configuration would produce (not signed: it cannot start a process)'),
    rules: z.array(RuleOutcome),
  })
  .meta({ id: 'PromotionEvaluation' });

export const checkout = {
  /** The cart as the client sent it, with its project: validation issues name the body's own paths. */
  info: endpoint('svc.checkout.info', Cart.extend({ project: ProjectId }), SignedCheckoutInfo, { repeatable: true }),
  /** The cart priced with a promotion configuration of the project, active or not, rule by rule. */
  evaluate: endpoint('svc.checkout.evaluate', Cart.extend({ project: ProjectId, configID: z.int().min(0) }), Evaluation, { repeatable: true }),
};
