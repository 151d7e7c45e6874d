import type { FiscalReference } from '../../../subjects/fiscal.js';
import { readFiscalReference } from '../fiscal/reference.js';

/**
 * What a receipt reads from a stored order document. Lenient on purpose: a PoS may have finished
 * the order with an incomplete pricing (the spec allows it), and coupons and promotions add line
 * item fields (couponID, discountRuleID, priceModifiers, ...) over time. A missing field prints as
 * nothing rather than failing the receipt; the figures printed are the order's own.
 */
type Json = Record<string, unknown>;

const record = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '');
const int = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) ? v : 0);
const decimal = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function perRate(v: unknown): Record<string, number> | undefined {
  const entries = Object.entries(record(v)).filter((e): e is [string, number] => Number.isSafeInteger(e[1]));
  return entries.length ? Object.fromEntries(entries) : undefined;
}

export interface PriceModifier {
  name: string;
  price?: number;
  percentage?: number;
}

export interface ReceiptLineItem {
  id: string;
  name: string;
  /** default, deposit, promotion, coupon, ...; default when absent. */
  type: string;
  refersTo: string;
  amount: number;
  price: number;
  totalPrice: number;
  taxRate: string;
  weight: number;
  weightUnit: string;
  referenceUnit: string;
  units: number;
  couponID: string;
  /** A coupon line: whether a promotion redeemed it; undefined when the order does not say. */
  redeemed?: boolean;
  discountPercentage?: number;
  priceModifiers: PriceModifier[];
}

export interface ReceiptOrder {
  id: string;
  sequenceNumber: number;
  finalizedAt: string;
  checkoutDeviceID: string;
  checkoutDevice: { type: string };
  shop: { name: string; street: string; zip: string; city: string; phone: string };
  customer: { loyaltyCard: string };
  paymentMethod: string;
  paymentResult: Json;
  paidAmount: number;
  /** '' when the order names no ISO 4217 code. */
  currency: string;
  lineItems: ReceiptLineItem[];
  price: { price: number; tax?: Record<string, number>; taxNet?: Record<string, number>; taxPre?: Record<string, number> };
  /** What the TSE signed; absent when the project fiscalizes with provider `none`. */
  fiscalReference?: FiscalReference;
}

function readReceiptLineItem(value: unknown): ReceiptLineItem {
  const l = record(value);
  return {
    id: text(l.id),
    name: text(l.name),
    type: text(l.type) || 'default',
    refersTo: text(l.refersTo),
    amount: int(l.amount),
    price: int(l.price),
    totalPrice: int(l.totalPrice),
    taxRate: text(l.taxRate),
    weight: int(l.weight),
    weightUnit: text(l.weightUnit),
    referenceUnit: text(l.referenceUnit),
    units: int(l.units),
    couponID: text(l.couponID),
    redeemed: typeof l.redeemed === 'boolean' ? l.redeemed : undefined,
    discountPercentage: decimal(l.discountPercentage),
    priceModifiers: list(l.priceModifiers).map((m) => {
      const r = record(m);
      return { name: text(r.name), price: Number.isSafeInteger(r.price) ? (r.price as number) : undefined, percentage: decimal(r.percentage) };
    }),
  };
}

/** The receipt's view of a stored order document (parsed JSON). */
export function readReceiptOrder(doc: unknown): ReceiptOrder {
  const o = record(doc);
  const shop = record(o.shop);
  const price = record(o.price);
  const currency = text(o.currency);
  const fiscalReference = readFiscalReference(o.fiscalReference);
  return {
    id: text(o.id),
    sequenceNumber: int(o.sequenceNumber),
    finalizedAt: text(o.finalizedAt),
    checkoutDeviceID: text(o.checkoutDeviceID),
    checkoutDevice: { type: text(record(o.checkoutDevice).type) },
    shop: { name: text(shop.name), street: text(shop.street), zip: text(shop.zip), city: text(shop.city), phone: text(shop.phone) },
    customer: { loyaltyCard: text(record(o.customer).loyaltyCard) },
    paymentMethod: text(o.paymentMethod),
    paymentResult: record(o.paymentResult),
    paidAmount: int(o.paidAmount),
    currency: /^[A-Z]{3}$/.test(currency) ? currency : '',
    lineItems: list(o.lineItems).map(readReceiptLineItem),
    price: { price: int(price.price), tax: perRate(price.tax), taxNet: perRate(price.taxNet), taxPre: perRate(price.taxPre) },
    ...(fiscalReference ? { fiscalReference } : {}),
  };
}

/** The project settings a receipt prints: company data, currency format, language. */
export interface ReceiptSettings {
  /** The project's currency: amounts print in the order's own, this one when the order names none. */
  currency: string;
  locale: string;
  companyName: string;
  taxNumber: string;
  vatID: string;
  companyAdress: { street: string; zip: string; city: string; country: string };
}
