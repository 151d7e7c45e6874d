import type { CartCoupon, CheckoutLine, PriceModifier, PromotionCart, PromotionLineItem } from './types.js';

/**
 * The cart while rules apply to it. Lines keep their current unit price and total (modifyPrice
 * changes them) and what is left of them after the discounts that refer to them (`remaining`, never
 * below zero). Per tax rate, `rates` holds what is left of the discountable lines' gross sum after
 * every discount, cart discounts included; a discount never takes more than its line and its rate
 * have left, so no line, no rate and no cart goes below zero.
 *
 * selectBest tries each candidate on a copy (`cloneState`): copies are shallow where parts never
 * change in place (promotion lines, price modifiers).
 */
export interface WorkLine {
  readonly index: number;
  readonly source: CheckoutLine;
  readonly discountable: boolean;
  price: number;
  total: number;
  remaining: number;
  /** An earlier rule discounted the line (a line discount or a price modification). */
  discounted: boolean;
  modifiers: PriceModifier[] | undefined;
}

export interface PendingPromotion {
  /** Index of the discounted line; -1 for a cart discount. */
  target: number;
  line: PromotionLineItem;
}

export interface CartFacts {
  readonly shopExternalId: string;
  readonly coupons: readonly CartCoupon[];
  readonly at: number;
  /** Indexes of the discountable lines, in cart order: what a rule acts on unless its condition narrows it. */
  readonly discountable: readonly number[];
}

export interface EngineState {
  readonly facts: CartFacts;
  lines: WorkLine[];
  promotions: PendingPromotion[];
  /** Per tax rate: what the discountable lines of that rate have left. */
  rates: Map<string, number>;
  /** Σ rates: the discountable total after the discounts so far ("the total" of conditions). */
  total: number;
  /** Per rule id: what it granted. */
  granted: Map<string, number>;
  /** Indexes (into facts.coupons) of the coupons redeemed so far, in order. */
  redeemed: number[];
  forceControl: boolean;
}

export function isDiscountable(line: CheckoutLine): boolean {
  return (line.type ?? 'default') === 'default' && line.isDiscountable !== false && line.totalPrice > 0 && line.amount > 0;
}

export function initialState(cart: PromotionCart): EngineState {
  const rates = new Map<string, number>();
  const discountable: number[] = [];
  let total = 0;
  const lines = cart.lineItems.map((source, index): WorkLine => {
    const ok = isDiscountable(source);
    if (ok) {
      discountable.push(index);
      rates.set(source.taxRate, (rates.get(source.taxRate) ?? 0) + source.totalPrice);
      total += source.totalPrice;
    }
    return { index, source, discountable: ok, price: source.price, total: source.totalPrice, remaining: source.totalPrice, discounted: false, modifiers: undefined };
  });
  return {
    facts: { shopExternalId: cart.shopExternalId, coupons: cart.coupons, at: cart.at.getTime(), discountable },
    lines,
    promotions: [],
    rates,
    total,
    granted: new Map(),
    redeemed: [],
    forceControl: false,
  };
}

export function cloneState(s: EngineState): EngineState {
  return {
    facts: s.facts,
    lines: s.lines.map((l) => ({ ...l })),
    promotions: s.promotions.slice(),
    rates: new Map(s.rates),
    total: s.total,
    granted: new Map(s.granted),
    redeemed: s.redeemed.slice(),
    forceControl: s.forceControl,
  };
}

/** Takes `amount` off a line's rate (and the total); the caller has capped it. */
export function takeFromRate(s: EngineState, rate: string, amount: number): void {
  s.rates.set(rate, (s.rates.get(rate) ?? 0) - amount);
  s.total -= amount;
}

/** What a discount of a line may take at most: what the line and its tax rate have left. */
export function lineCapacity(s: EngineState, line: WorkLine): number {
  return Math.max(0, Math.min(line.remaining, s.rates.get(line.source.taxRate) ?? 0));
}
