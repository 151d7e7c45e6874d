import type { LineItem, Violation } from '../../../subjects/checkout.js';
import type { StoredCoupon } from '../../../subjects/coupons.js';
import { pickTranslation } from './translations.js';

/**
 * The coupons of a cart, as pure rules: which coupon each coupon item names (by its couponID, or a
 * scanned code that is a coupon's code), whether it may be used now, and the line item it becomes.
 * A coupon that cannot be used is a violation, never a refusal of the cart.
 *
 * Redemption is unique per the coupon's redeemType, by a key: `code:<scanned code>`
 * (once-per-scanned-code), `user:<appUserID>` (once-per-app-user-id); `multiple` has none (every
 * process may redeem it). A coupon already redeemed under its key is `coupon_already_voided`.
 */
export interface CouponCartItem {
  id: string;
  couponID?: string;
  refersTo?: string;
  scannedCode?: string;
  amount: number;
}

export interface KnownCoupon {
  id: string;
  doc: StoredCoupon;
  /** The cart's scanned codes that are this coupon's codes. */
  scannedCodes: readonly string[];
  /** The redemption keys under which it is redeemed already. */
  redeemedKeys: readonly string[];
}

export interface CouponContext {
  at: Date;
  appUserID: string;
  loyaltyCard: boolean;
  /** `app` for the app, `sco` for self-checkout terminals and PoS (the coupon's channels). */
  channel: 'app' | 'sco';
  /** The project's locale: the default language of the coupon's name. */
  locale: string;
}

/** A coupon item that may be used, and its coupon. */
export interface AcceptedCoupon {
  item: CouponCartItem;
  couponID: string;
  name: string;
  /** The coupon's own code (or the scanned one): what `hasCouponCode` conditions compare. */
  code: string | undefined;
}

/** The redemption key of a coupon used by a cart item, by its redeemType; undefined: no uniqueness. */
export function redemptionKey(coupon: Pick<StoredCoupon, 'redeemType'>, item: Pick<CouponCartItem, 'scannedCode'>, appUserID: string): string | undefined {
  if (coupon.redeemType === 'once-per-scanned-code') return `code:${item.scannedCode ?? ''}`;
  if (coupon.redeemType === 'once-per-app-user-id') return appUserID ? `user:${appUserID}` : undefined;
  return undefined;
}

/** Every key a cart's coupon items could be redeemed under, to look up in one statement. */
export function candidateKeys(items: ReadonlyArray<Pick<CouponCartItem, 'scannedCode'>>, appUserID: string): string[] {
  const keys = new Set(items.map((i) => `code:${i.scannedCode ?? ''}`));
  if (appUserID) keys.add(`user:${appUserID}`);
  return [...keys];
}

export function checkCoupons(items: readonly CouponCartItem[], known: readonly KnownCoupon[], context: CouponContext): { accepted: AcceptedCoupon[]; violations: Violation[] } {
  const accepted: AcceptedCoupon[] = [];
  const violations: Violation[] = [];
  const used = new Set<string>();
  for (const item of items) {
    const coupon = item.couponID !== undefined ? known.find((c) => c.id === item.couponID) : known.find((c) => item.scannedCode !== undefined && c.scannedCodes.includes(item.scannedCode));
    const refused = (type: Violation['type'], message: string) => violations.push({ type, message, refersTo: item.id });
    if (!coupon) {
      refused('coupon_invalid', `coupon ${item.couponID ?? item.scannedCode ?? ''} is not known`);
      continue;
    }
    const { doc } = coupon;
    const at = context.at.toISOString();
    const key = redemptionKey(doc, item, context.appUserID);
    if (!doc.channels.includes(context.channel)) refused('coupon_invalid', `coupon ${coupon.id} is not for this channel (${doc.channels.join(', ')})`);
    else if (doc.requiresLoyaltyCard && !context.loyaltyCard) refused('coupon_invalid', `coupon ${coupon.id} needs a loyalty card`);
    else if (doc.redeemType === 'once-per-app-user-id' && !context.appUserID) refused('coupon_invalid', `coupon ${coupon.id} is for app users only`);
    else if ((doc.validFrom && at < doc.validFrom) || (doc.validUntil && at > doc.validUntil)) {
      refused('coupon_currently_not_valid', `coupon ${coupon.id} is valid ${doc.validFrom ? `from ${doc.validFrom}` : ''}${doc.validFrom && doc.validUntil ? ' ' : ''}${doc.validUntil ? `until ${doc.validUntil}` : ''}`);
    } else if (key !== undefined && (coupon.redeemedKeys.includes(key) || used.has(`${coupon.id}\u0000${key}`))) {
      refused('coupon_already_voided', `coupon ${coupon.id} has been redeemed already`);
    } else {
      if (key !== undefined) used.add(`${coupon.id}\u0000${key}`);
      accepted.push({
        item,
        couponID: coupon.id,
        name: pickTranslation(doc.translations.name, [], context.locale),
        code: doc.code ?? item.scannedCode ?? doc.codes[0]?.code,
      });
    }
  }
  return { accepted, violations };
}

/** The line item of an accepted coupon: no price of its own; `redeemed` when a promotion rule redeemed it. */
export function couponLine(coupon: AcceptedCoupon, redeemed: boolean): LineItem {
  return {
    id: coupon.item.id,
    type: 'coupon',
    refersTo: coupon.item.refersTo ?? null,
    sku: '',
    amount: coupon.item.amount,
    weight: 0,
    units: 0,
    price: 0,
    priceOrigin: 'master',
    totalPrice: 0,
    name: coupon.name,
    taxRate: '',
    scannedCode: coupon.item.scannedCode ?? '',
    saleRestriction: '',
    couponID: coupon.couponID,
    redeemed,
  };
}
