import type { Check, CheckoutProcess, PricingLine } from '../../subjects/checkout-process.js';
import { processPath } from '../../subjects/checkout-process.js';
import type { CheckoutProcessEvent, OrderEvent, PosEvent } from '../../subjects/events.js';
import { orderPath, receiptPath, type Order, type OrderLineItem, type OrderState } from '../../subjects/orders.js';
import { posPath } from '../../subjects/pos.js';
import { posView } from './pos.js';
import { fulfillmentPath, type Fulfillment, type FulfillmentEvent } from '../../subjects/fulfillments.js';
import { fulfillmentOf } from './fulfillments.js';
import { isFinished, type ChangeEvent, type FulfillmentRecord, type ProcessRecord } from './state.js';

/** The shapes a process record is seen in: the API's process, its order, its events. Pure. */

export function toCheckoutProcess(p: ProcessRecord): CheckoutProcess {
  const self = processPath(p.project, p.id);
  const checks = checksOf(p);
  const hasOrder = isFinished(p.paymentState) && p.paymentState !== 'transferred';
  return {
    id: p.id,
    supervisorApproval: p.supervisorApproval,
    paymentApproval: p.paymentApproval,
    aborted: p.aborted,
    checkoutInfo: p.checkoutInfo,
    pricing: p.pricing,
    paymentMethod: p.paymentMethod,
    paymentState: p.paymentState,
    paymentInformation: { ...p.paymentInformation, qrCodeContent: `service:${p.id}` },
    paymentResult: p.paymentResult,
    modified: p.modified,
    createdAt: p.createdAt.toISOString(),
    finalizedAt: p.finalizedAt?.toISOString() ?? null,
    processedOffline: p.processedOffline,
    clientID: p.checkoutInfo.clientID,
    appUserID: p.checkoutInfo.appUserID,
    currency: p.checkoutInfo.currency,
    routingTarget: !isFinished(p.paymentState) && checks.some((c) => c.state === 'pending') ? 'supervisor' : 'none',
    checks,
    fulfillments: p.fulfillments.map((f) => ({
      id: f.id,
      type: f.type,
      state: f.state,
      refersTo: f.refersTo,
      errors: f.errors,
      links: { self: { href: fulfillmentPath(p.project, f.id) } },
    })),
    ...(hasOrder ? { orderID: p.id } : {}),
    links: {
      self: { href: self },
      approval: { href: `${self}/approval` },
      payment: { href: posPath(p.project, p.id) },
      ...(p.paymentState === 'successful' ? { receipt: { href: receiptPath(p.project, p.id) } } : {}),
    },
  };
}

/**
 * The checks of a process, from what it holds: a min_age check for age-restricted items (the
 * highest age their saleRestriction names), else a supervisor_approval check when a supervisor
 * must look at it (controlled items). supervisorApproval, given by a supervisor or a PoS that took
 * the process over, performs them; `performedBy` names who, or `supervisor` when that is not known
 * (processes checked before performers were recorded answer as they always did).
 */
export function checksOf(p: ProcessRecord): Check[] {
  if (!p.approvalRequired) return [];
  const state = p.supervisorApproval === true ? 'successful' : p.supervisorApproval === false ? 'failed' : 'pending';
  const done = state === 'pending' ? {} : { performedBy: p.checksPerformedBy ?? 'supervisor' };
  const restrictions = p.checkoutInfo.lineItems.map((l) => l.saleRestriction).filter((r) => r !== '');
  if (!restrictions.length) return [{ id: `${p.id}-supervisor_approval`, type: 'supervisor_approval', state, ...done }];
  const ages = restrictions.map((r) => Number(/\d+/.exec(r)?.[0] ?? Number.NaN)).filter(Number.isFinite);
  const requiredAge = ages.length ? Math.max(...ages) : undefined;
  return [{ id: `${p.id}-min_age`, type: 'min_age', ...(requiredAge === undefined ? {} : { requiredAge }), state, ...done }];
}

/** The promotion and coupon fields a line carries (the spec's OrderLineItem has them). */
function discountFields(l: PricingLine): Partial<OrderLineItem> {
  const { discountID, discountRuleID, couponID, discountType, discountValue, discountPercentage, priceModifiers, redeemed } = l;
  return Object.fromEntries(
    Object.entries({ discountID, discountRuleID, couponID, discountType, discountValue, discountPercentage, priceModifiers, redeemed }).filter(([, value]) => value !== undefined),
  );
}

/** The order of a process that just finished; `sequenceNumber` is the shop's next number. */
export function toOrder(p: ProcessRecord, state: OrderState, sequenceNumber: number, at: Date): Order {
  const info = p.checkoutInfo;
  const finalizedAt = (p.finalizedAt ?? at).toISOString();
  const device = p.pos.processedBy ? { type: 'pos', externalID: p.pos.processedBy } : { type: 'app', externalID: info.clientID };
  // A PoS's word on the card (also its removal, '') replaces the cart's.
  const loyaltyCard = p.pos.loyaltyCard ?? info.customer.loyaltyCard;
  const paidAmount = state === 'final' ? p.pricing.price.price : 0;
  return {
    id: p.id,
    project: p.project,
    session: info.session,
    state,
    sequenceNumber,
    startedAt: p.createdAt.toISOString(),
    finalizedAt,
    date: finalizedAt,
    createdAt: at.toISOString(),
    appUserID: info.appUserID,
    clientID: info.clientID,
    checkoutDeviceID: device.externalID,
    checkoutDevice: { ...device, name: '' },
    shopID: info.shopID,
    shop: {
      name: info.shop.name,
      externalID: info.shop.externalId,
      street: info.shop.street,
      zip: info.shop.zip,
      city: info.shop.city,
      state: info.shop.state,
      country: info.shop.country,
      phone: info.shop.phone,
      email: info.shop.email,
    },
    customer: loyaltyCard ? { loyaltyCard } : {},
    paymentMethod: p.paymentMethod,
    paymentInformation: p.paymentInformation,
    paymentResult: p.paymentResult,
    paymentState: p.paymentState,
    paidAmount,
    lineItems: p.pricing.lineItems.map(
      (l, index): OrderLineItem => ({
        id: l.id ?? String(index + 1),
        sku: l.sku ?? '',
        name: l.name ?? '',
        type: l.type ?? 'default',
        refersTo: l.refersTo ?? null,
        amount: l.amount ?? 0,
        taxRate: l.taxRate ?? '',
        price: l.price ?? 0,
        totalPrice: l.totalPrice ?? 0,
        priceOrigin: l.priceOrigin ?? 'master',
        scannedCode: l.scannedCode ?? '',
        saleRestriction: l.saleRestriction ?? '',
        weight: l.weight ?? 0,
        weightUnit: l.weightUnit ?? '',
        referenceUnit: l.referenceUnit ?? '',
        units: l.units ?? 0,
        ...discountFields(l),
      }),
    ),
    currency: info.currency,
    price: p.pricing.price,
    links: { self: { href: orderPath(p.project, p.id) }, ...(state === 'final' ? { receipt: { href: receiptPath(p.project, p.id) } } : {}) },
    payments: [
      { method: p.paymentMethod, state: p.paymentState, information: p.paymentInformation, result: p.paymentResult, currency: info.currency, paidAmount },
    ],
  };
}

/** The spec's Fulfillment object of one of a process's fulfillments. */
export function fulfillmentView(p: ProcessRecord, f: FulfillmentRecord): Fulfillment {
  return {
    id: f.id,
    type: f.type,
    state: f.state,
    shopID: p.shopID,
    processID: p.id,
    ...(f.serviceID ? { serviceID: f.serviceID } : {}),
    refersTo: f.refersTo,
    lineItems: f.lineItems,
    errors: f.errors,
    links: { self: { href: fulfillmentPath(p.project, f.id) }, process: { href: processPath(p.project, p.id) } },
  };
}

export function processEventPayload(p: ProcessRecord, event: ChangeEvent, at: Date): CheckoutProcessEvent | PosEvent | FulfillmentEvent {
  const envelope = { project: p.project, id: p.id, version: p.version, at: at.toISOString() };
  if (event.domain === 'pos') return { ...envelope, event: event.event, pos: posView(p) };
  if (event.domain === 'fulfillment') {
    const f = fulfillmentOf(p, event.id)!;
    return { ...envelope, id: f.id, processID: p.id, event: event.event, fulfillment: fulfillmentView(p, f) };
  }
  const { checkoutInfo: _info, pricing, ...process } = toCheckoutProcess(p);
  return { ...envelope, event: event.event, process: { ...process, shopID: p.shopID, price: pricing.price } };
}

export function orderEventPayload(p: ProcessRecord, order: Order): OrderEvent {
  const { id, state, shopID, sequenceNumber, finalizedAt, paidAmount, currency, links } = order;
  return {
    project: p.project,
    id: p.id,
    version: p.version,
    at: order.createdAt,
    event: state,
    order: { id, state, shopID, sequenceNumber, finalizedAt, paidAmount, currency, links },
  };
}
