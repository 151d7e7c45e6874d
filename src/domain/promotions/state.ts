import type { CartCoupon, CheckoutLine, PriceModifier, PromotionCart, PromotionLineItem } from './types.js';

/**
 * The cart while rules apply to it. Lines keep their current unit price and total (modifyPrice
 * changes them) and what is left of them after the discounts that refer to them (`remaining`, never
 * below zero). Per tax rate, `rates` holds what is left of the discountable lines' gross sum after
 * every discount, cart discounts included; a discount never takes more than its line and its rate
 * have left, so no line, no rate and no cart goes below zero.
 *
 * selectBest tries each candidate on the state itself and takes the trial back (`beginTrial`,
 * `rollBack`): every change goes through the functions here, which note the old value the first time
 * a trial touches it. Cheaper than copying the state per candidate: a trial touches a few lines. A
 * trial only asks what a rule grants, so it adds no promotion lines and no price modifiers
 * (actions.ts makes those only outside a trial): there is nothing of them to take back.
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
  /** The tax rates of the discountable lines, sorted: cart discounts are split over them in this order. */
  readonly rateOrder: readonly string[];
  /** Per SKU list of the configuration (hasSKU conditions, rules' needed SKUs): the discountable lines with one of its SKUs (in cart order), or undefined for none. */
  readonly skuMatches: ReadonlyArray<readonly number[] | undefined>;
  /** The SKU lists with lines in skuMatches, in the order their first line came: the rules that need their SKUs are the cart's candidates. */
  readonly matchedLists: readonly number[];
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
  /** The running trial's notes of old values, or null outside a trial. */
  trial: Trial | null;
  /** The notes of trials, kept for the next one (selectBest runs a trial per candidate). */
  readonly notes: Trial;
}

interface LineBefore {
  line: WorkLine;
  price: number;
  total: number;
  remaining: number;
  discounted: boolean;
}

/**
 * What a trial changed, as it was before: lines and rates (a few of each: lists beat maps, and are
 * kept for the next trial). What rules granted needs no notes: a trial asks what its rule grants and
 * is taken back before any other rule looks at it.
 */
interface Trial {
  lines: LineBefore[];
  rates: Array<{ rate: string; before: number }>;
  total: number;
  redeemed: number;
  forceControl: boolean;
}

export function isDiscountable(line: CheckoutLine, allowed: (line: CheckoutLine) => boolean = (l) => l.isDiscountable !== false): boolean {
  return (line.type ?? 'default') === 'default' && line.totalPrice > 0 && line.amount > 0 && allowed(line);
}

/**
 * The configuration's SKU lists (compile.ts): per SKU, the lists that name it (indexes into a cart's
 * skuMatches), and how many lists there are.
 */
export interface SkuListIndex {
  readonly skuListsBySku: ReadonlyMap<string, readonly number[]>;
  readonly skuListCount: number;
}

export function initialState(cart: PromotionCart, skuLists: SkuListIndex): EngineState {
  const rates = new Map<string, number>();
  const discountable: number[] = [];
  const skuMatches: Array<number[] | undefined> = new Array<number[] | undefined>(skuLists.skuListCount);
  const matchedLists: number[] = [];
  let total = 0;
  const lines = cart.lineItems.map((source, index): WorkLine => {
    const ok = isDiscountable(source, cart.discountable);
    if (ok) {
      discountable.push(index);
      const naming = skuLists.skuListsBySku.get(source.sku);
      if (naming) {
        for (const list of naming) {
          const matched = skuMatches[list];
          if (matched) {
            matched.push(index);
          } else {
            skuMatches[list] = [index];
            matchedLists.push(list);
          }
        }
      }
      rates.set(source.taxRate, (rates.get(source.taxRate) ?? 0) + source.totalPrice);
      total += source.totalPrice;
    }
    return { index, source, discountable: ok, price: source.price, total: source.totalPrice, remaining: source.totalPrice, discounted: false, modifiers: undefined };
  });
  return {
    facts: { shopExternalId: cart.shopExternalId, coupons: cart.coupons, at: cart.at.getTime(), rateOrder: [...rates.keys()].sort(), discountable, skuMatches, matchedLists },
    lines,
    promotions: [],
    rates,
    total,
    granted: new Map(),
    redeemed: [],
    forceControl: false,
    trial: null,
    notes: { lines: [], rates: [], total: 0, redeemed: 0, forceControl: false },
  };
}

export function beginTrial(s: EngineState): void {
  const t = s.notes;
  // Emptied only when a trial left notes: setting a length costs more than looking at it.
  if (t.lines.length) t.lines.length = 0;
  if (t.rates.length) t.rates.length = 0;
  t.total = s.total;
  t.redeemed = s.redeemed.length;
  t.forceControl = s.forceControl;
  s.trial = t;
}

/** Takes back everything since beginTrial. */
export function rollBack(s: EngineState): void {
  const t = s.trial;
  if (!t) return;
  for (const b of t.lines) {
    const line = b.line;
    line.price = b.price;
    line.total = b.total;
    line.remaining = b.remaining;
    line.discounted = b.discounted;
  }
  for (const { rate, before } of t.rates) s.rates.set(rate, before);
  s.total = t.total;
  if (s.redeemed.length !== t.redeemed) s.redeemed.length = t.redeemed;
  s.forceControl = t.forceControl;
  s.trial = null;
}

/** Call before changing a line. */
export function touchLine(s: EngineState, line: WorkLine): void {
  const t = s.trial;
  if (!t || t.lines.some((b) => b.line === line)) return;
  t.lines.push({ line, price: line.price, total: line.total, remaining: line.remaining, discounted: line.discounted });
}

/** Takes `amount` off a line's rate (and the total); the caller has capped it. */
export function takeFromRate(s: EngineState, rate: string, amount: number): void {
  const before = s.rates.get(rate) ?? 0;
  if (s.trial && !s.trial.rates.some((r) => r.rate === rate)) s.trial.rates.push({ rate, before });
  s.rates.set(rate, before - amount);
  s.total -= amount;
}

/** Notes what a rule granted, once it applies for good (a trial's grant is only its answer). */
export function addGranted(s: EngineState, rule: string, amount: number): void {
  if (s.trial) return;
  s.granted.set(rule, (s.granted.get(rule) ?? 0) + amount);
}

/** What a discount of a line may take at most: what the line and its tax rate have left. */
export function lineCapacity(s: EngineState, line: WorkLine): number {
  return Math.max(0, Math.min(line.remaining, s.rates.get(line.source.taxRate) ?? 0));
}
