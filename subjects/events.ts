import { z } from 'zod';
import { subjectToken } from './common.js';
import { CheckoutProcess, Pricing } from './checkout-process.js';
import { ClosingEvent, ClosingEvents } from './closings.js';
import { CouponEvent, CouponEvents } from './coupons.js';
import { FiscalReference } from './fiscal.js';
import { FulfillmentEvent, FulfillmentEvents } from './fulfillments.js';
import { OrderStates, Order } from './orders.js';
import { PosCheckoutProcess } from './pos.js';
import { PromotionEvent, PromotionEvents } from './promotions.js';

/**
 * Events for PoS integrators and other listeners: every state change of a checkout process, of its
 * PoS view, of its order and of its fulfillments (and of coupons, promotion configurations and
 * closings, in their own modules), published from the outbox to the JetStream stream EVENTS as
 * `events.<project>.<domain>.<id>.<event>` with Nats-Msg-Id = the outbox row id.
 *
 * Consume them with a JetStream consumer on EVENTS (filter such as `events.<project>.pos.>`): the
 * stream stores each event once. A plain NATS subscription sees them too, but may see one twice when
 * a relay stopped between publishing and recording it. `version` counts the changes of the process:
 * per process, events are published in version order.
 */
export const EventStream = { name: 'EVENTS', subjects: ['events.>'] } as const;

export const EventDomains = ['checkout', 'pos', 'order', 'fulfillment', 'promotion', 'coupon', 'closing'] as const;
export type EventDomain = (typeof EventDomains)[number];

export const CheckoutProcessEvents = ['created', 'approved', 'pricingUpdated', 'processing', 'transferred', 'successful', 'failed', 'aborted'] as const;
export type CheckoutProcessEventName = (typeof CheckoutProcessEvents)[number];

/** The PoS view's state after the change. */
export const PosEvents = ['pending', 'processing', 'transferred', 'successful', 'failed'] as const;
export type PosEventName = (typeof PosEvents)[number];

/**
 * An order's events: the state it was made in, then `fiscalized` once its TSE transaction is
 * recorded (signed, or failed: its finish log's error says `TSE-Ausfall`), carrying the fiscalReference.
 */
export const OrderEvents = [...OrderStates, 'fiscalized'] as const;

export function eventSubject(project: string, domain: EventDomain, id: string, event: string): string {
  return `events.${project}.${domain}.${subjectToken(id)}.${event}`;
}

const Envelope = z.object({
  project: z.string(),
  id: z.string().describe('The checkout process id (also the order id)'),
  version: z.int().describe('The version of the process after the change'),
  at: z.iso.datetime(),
});

export const CheckoutProcessEvent = Envelope.extend({
  event: z.enum(CheckoutProcessEvents),
  process: CheckoutProcess.omit({ checkoutInfo: true, pricing: true }).extend({ shopID: z.string(), price: Pricing.shape.price }),
}).meta({ id: 'CheckoutProcessEvent' });
export type CheckoutProcessEvent = z.infer<typeof CheckoutProcessEvent>;

export const PosEvent = Envelope.extend({ event: z.enum(PosEvents), pos: PosCheckoutProcess }).meta({ id: 'PoSEvent' });
export type PosEvent = z.infer<typeof PosEvent>;

export const OrderEvent = Envelope.extend({
  event: z.enum(OrderEvents),
  order: Order.pick({ id: true, state: true, shopID: true, sequenceNumber: true, finalizedAt: true, paidAmount: true, currency: true, links: true }),
  fiscalReference: FiscalReference.optional().describe('fiscalized: the order\'s fiscalReference'),
}).meta({ id: 'OrderEvent' });
export type OrderEvent = z.infer<typeof OrderEvent>;

/** The events of each domain: what an event type `<domain>.<event>` may name (webhooks, subjects/integrations.ts). */
export const EventTypes = {
  checkout: CheckoutProcessEvents,
  pos: PosEvents,
  order: OrderEvents,
  fulfillment: FulfillmentEvents,
  promotion: PromotionEvents,
  coupon: CouponEvents,
  closing: ClosingEvents,
} as const satisfies Record<EventDomain, readonly string[]>;

/** The payload schema of each domain's events. */
export const EventPayloads = { checkout: CheckoutProcessEvent, pos: PosEvent, order: OrderEvent, fulfillment: FulfillmentEvent, promotion: PromotionEvent, coupon: CouponEvent, closing: ClosingEvent } as const;
