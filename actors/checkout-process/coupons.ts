import { redemptionKey } from '../../src/domain/coupons/cart.js';
import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import type { PricingLine } from '../../subjects/checkout-process.js';
import type { CouponEvent } from '../../subjects/coupons.js';
import { eventSubject } from '../../subjects/events.js';
import { findRedeemTypes, recordRedemptions } from '../coupons/sql.js';
import type { OutboxEvent } from '../outbox/sql.js';
import type { ProcessRecord } from './state.js';

/**
 * Coupon redemption is a database fact, recorded in the transaction of the change that makes a
 * process successful: one row per coupon its pricing redeemed, unique per the coupon's redeemType
 * (coupon_redemptions). When another process recorded the same once-only redemption first, this
 * one still succeeds, its coupon line shows not redeemed, and the coupon's `redeemed` event says so.
 */
export function couponsToRedeem(before: ProcessRecord, after: ProcessRecord): PricingLine[] {
  if (after.paymentState !== 'successful' || before.paymentState === 'successful') return [];
  return after.pricing.lineItems.filter((l) => l.type === 'coupon' && l.redeemed === true && l.couponID);
}

export async function redeemCoupons(db: Sql | TransactionSql, p: ProcessRecord, lines: readonly PricingLine[], at: Date): Promise<{ process: ProcessRecord; events: OutboxEvent[] }> {
  const types = await findRedeemTypes(db, p.project, lines.map((l) => l.couponID!));
  const redemptions = lines.map((l) => ({
    couponID: l.couponID!,
    // A coupon deleted since the checkout info was signed redeems like one of redeemType multiple.
    key: redemptionKey({ redeemType: types.get(l.couponID!) ?? 'multiple' }, { scannedCode: l.scannedCode }, p.checkoutInfo.appUserID) ?? `process:${p.id}`,
  }));
  const recorded = new Set(await recordRedemptions(db, p.project, p.id, redemptions));
  const lost = new Set(redemptions.filter((r) => !recorded.has(r.couponID)).map((r) => r.couponID));
  const process: ProcessRecord = lost.size
    ? { ...p, pricing: { ...p.pricing, lineItems: p.pricing.lineItems.map((l) => (l.type === 'coupon' && l.couponID && lost.has(l.couponID) ? { ...l, redeemed: false } : l)) } }
    : p;
  const events = redemptions.map(({ couponID, key }) => ({
    subject: eventSubject(p.project, 'coupon', couponID, 'redeemed'),
    payload: { project: p.project, id: couponID, at: at.toISOString(), event: 'redeemed', processID: p.id, redeemed: recorded.has(couponID), redemptionKey: key } satisfies CouponEvent,
  }));
  return { process, events };
}
