import type { LineItem } from '../../../subjects/checkout.js';
import type { PriceModifier } from '../../../subjects/promotions.js';
import type { Price } from '../tax.js';

export type { PriceModifier } from '../../../subjects/promotions.js';

/**
 * A priced line item as the checkout makes it. `isDiscountable: false` keeps a line out of every
 * discount (the product's flag, when the checkout passes it on); absent means discountable.
 */
export type CheckoutLine = LineItem & { isDiscountable?: boolean };

/** A coupon of the cart, already recognised by the checkout. */
export interface CartCoupon {
  /** The coupon's id (a Coupon's `id`, the cart item's `couponID`). */
  id: string;
  code?: string | undefined;
  scannedCode?: string | undefined;
  /** The line item the coupon refers to, if any. */
  refersTo?: string | null | undefined;
  /** The cart item that carried the coupon. */
  lineItemId: string;
}

export interface PromotionCart {
  lineItems: readonly CheckoutLine[];
  /**
   * Whether a line may be discounted, besides being a `default` line with a positive total: the
   * product's isDiscountable, which the checkout knows. Absent: the line's own `isDiscountable`
   * (absent there too: discountable).
   */
  discountable?: (line: CheckoutLine) => boolean;
  shopExternalId: string;
  coupons: readonly CartCoupon[];
  at: Date;
  currency: string;
}

/**
 * A line item of the answer: an input line (possibly with a modified price and `priceModifiers`), or
 * a `promotion` line that refers to the discounted line (null for a cart discount).
 */
export type PromotionLineItem = LineItem & {
  discountRuleID?: string;
  couponID?: string;
  discountType?: 'absolute' | 'percentage';
  discountValue?: number;
  discountPercentage?: number;
  priceModifiers?: PriceModifier[];
  isDiscountable?: boolean;
};

export const SkipReasons = ['group_condition_failed', 'condition_failed', 'coupon_missing', 'not_best'] as const;
export type SkipReason = (typeof SkipReasons)[number];

/** What one rule did for a cart. */
export interface RuleExplanation {
  ruleID: string;
  rankID: string;
  groupID: string;
  /** Whether the rule's condition held (false when its group was skipped). */
  conditionHeld: boolean;
  /** What the rule took off, in subunits (0 when it was not applied). */
  granted: number;
  /** Why a rule was not applied. */
  skippedReason?: SkipReason;
  /** selectBest: what a rule that was not the best would have granted. */
  wouldGrant?: number;
}

export interface PromotionResult {
  /** The line items with promotion lines inserted after the lines they discount; cart discounts last. */
  lineItems: PromotionLineItem[];
  /** Recomputed over every line item: Σ line totals = price, and the tax rules hold per rate. */
  price: Price;
  /** Ids of the coupons redeemed by rules, each once, in redemption order. */
  redeemedCouponIds: string[];
  /** The coupons of the cart redeemed by rules (one entry per redeemed cart coupon). */
  redeemedCoupons: CartCoupon[];
  /** An addForceControl action fired: the process needs a supervisor. */
  forceControl: boolean;
  /** With `explain`: one entry per rule, in evaluation order (ranks, then groups, then rules); else empty. */
  explanation: RuleExplanation[];
  /** Σ of every discount, in subunits (the price before minus the price after). */
  totalDiscount: number;
}
