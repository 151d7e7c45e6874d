import { z } from 'zod';
import { Href, ProjectId } from './common.js';
import { endpoint } from './contract.js';
import { Sku, Unit } from './products.js';
import { Shop, ShopId } from './shops.js';

const Amount = z.int().min(0).max(Number.MAX_SAFE_INTEGER);

export const CartItem = z
  .object({
    id: z.string().min(1).max(64).nullable().optional().describe('Id of the item; line items keep it (generated when absent)'),
    sku: Sku.optional(),
    amount: z.int().min(1).max(100_000).describe('Number of products or packages'),
    weight: z.int().min(1).max(100_000_000).nullable().optional().describe('Weight of a weighable product, in weightUnit'),
    weightUnit: Unit.nullable().optional().describe("Unit of the weight; the product's encodingUnit when absent"),
    units: z.int().min(1).max(100_000).nullable().optional().describe('Units in a package (bundle or piece product)'),
    price: Amount.nullable().optional().describe('A price the client read from the code or entered (products with priceEntryRequired)'),
    scannedCode: z.string().min(1).max(64).optional(),
  })
  .refine((item) => item.sku !== undefined || item.scannedCode !== undefined, 'an item names a sku or a scannedCode');
export type CartItem = z.output<typeof CartItem>;

export const Customer = z
  .object({ loyaltyCard: z.string().min(1).max(100).optional() })
  .catchall(z.unknown())
  .describe('Further customer information, such as a loyaltyCard number');

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
      .min(1)
      .max(500)
      .refine((items) => {
        const ids = items.flatMap((i) => (i.id ? [i.id] : []));
        return new Set(ids).size === ids.length;
      }, 'item ids must not repeat'),
    customer: Customer.optional(),
  })
  .meta({ id: 'Cart' });
export type Cart = z.output<typeof Cart>;

export const LineItem = z
  .object({
    id: z.string(),
    type: z.enum(['default', 'deposit', 'promotion']),
    refersTo: z.string().nullable(),
    sku: z.string(),
    amount: z.int(),
    weight: z.int(),
    weightUnit: z.string(),
    referenceUnit: z.string(),
    units: z.int(),
    price: z.int().describe('Price of one unit, piece or reference unit'),
    priceOrigin: z.enum(['master', 'client']),
    totalPrice: z.int(),
    name: z.string(),
    taxRate: z.string(),
    scannedCode: z.string(),
    saleRestriction: z.string(),
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
    lineItems: z.array(LineItem),
    price: Price,
    currency: z.string(),
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

export const checkout = {
  /** The cart as the client sent it, with its project: validation issues name the body's own paths. */
  info: endpoint('svc.checkout.info', Cart.extend({ project: ProjectId }), SignedCheckoutInfo),
};
