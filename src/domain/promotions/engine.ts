import { checkoutPrice } from '../tax.js';
import type { RuleRun } from './actions.js';
import type { CompiledConfiguration, CompiledRule } from './compile.js';
import type { Selection } from './conditions.js';
import { addGranted, beginTrial, initialState, rollBack, type EngineState } from './state.js';
import type { CartCoupon, CheckoutLine, PromotionCart, PromotionLineItem, PromotionResult, RuleExplanation, SkipReason } from './types.js';

/**
 * The promotion engine: applies a compiled configuration to a priced cart. Pure and deterministic:
 * no I/O, no clock (the cart carries its time), the input is never changed.
 *
 * Semantics (design.md "Coupons and promotions"), and the decisions it leaves open:
 * - Evaluation order: ranks in the order of `ranks`; within a rank, groups in their order; within a
 *   group, rules in their order. Each rule sees the cart as the rules before it left it.
 * - Groups: a group's condition is evaluated once, before any rule applies, on the undiscounted
 *   cart; a group whose condition does not hold is skipped whole. It only gates: it selects no lines
 *   for its rules.
 * - applyAll: every rule whose condition holds applies, in order. selectBest: every rule of the rank
 *   whose condition holds is tried on the cart as the rank found it; only the one that grants the
 *   largest discount applies (the first on a tie, also a tie at 0 — so its coupon, force control
 *   and price changes take effect).
 * - Discountable lines: line items of type `default` with a positive total (not deposits), that
 *   the cart's `discountable` predicate allows (the products' isDiscountable; by default a line's own
 *   `isDiscountable` unless false). Conditions start from all of them; item conditions narrow (`hasSKU`,
 *   `isExclusiveForLineItem`: not discounted by an earlier rule's line discount or price change;
 *   `isReferredToByCoupon`: the lines its coupon refers to) or count (`amountGreaterOrEqual`: Σ
 *   `amount` of the selection) the selection, and the rule's line actions act on what is selected.
 *   An item condition that leaves no line does not hold.
 * - "The total" (`totalGreaterThanOrEqual`, the base of cart discounts) is what the discountable
 *   lines cost after the discounts so far; deposits are not part of it.
 * - `isReferredToByCoupon` holds when a coupon with that id is in the cart; when the coupon refers to
 *   a line, the rule acts on that line only. `hasCouponCode` matches a coupon's code or scanned code.
 * - Coupons: a rule with redeem actions applies only when each finds a coupon of the cart that no
 *   earlier rule redeemed (else it is skipped with `coupon_missing`); a coupon is redeemed once.
 *   The rule's promotion lines name the first coupon it redeemed.
 * - addLineItemDiscount: units of the selected lines are counted (`amount` per line, each unit worth
 *   an equal share of what its line has left); `requiredAmount` units make one application, each
 *   discounting `amount` units (at most requiredAmount; either defaults to the other, both to 1),
 *   the cheapest units of the selection first; multi-usable: as many applications as the units allow,
 *   else one. `value` per unit (absolute, at most the unit's worth) or percent of the units' worth.
 * - modifyPrice: multi-usable changes every selected line, else the first selected line it can
 *   lower. Prices only go down (an absolute price above the current one changes nothing).
 * - addCartDiscount: absolute `value`, or percent of the total; split over the tax rates in
 *   proportion to what each rate's discountable lines have left (largest remainder, ties to the
 *   lower rate text), one promotion line per rate (`cart-promotion-<rule>-<rate>`).
 * - Rounding: every discount computed from a percentage is rounded once, with the configuration's
 *   mode, to multiples of 10^precision subunits: a line discount per discounted line, a cart
 *   discount before it is split, the cut of a modified unit price. Absolute amounts are taken as
 *   written (they are whole subunits already).
 * - No line and no cart below zero: a discount never takes more than its line and its tax rate
 *   have left (a line with its promotion lines never sums below zero, nor does any rate's taxPre).
 * - Defaults: `absolute` false (a percentage), `isMultiusable` false, `name` the rule id.
 * - Promotion lines: id `<line id>-promotion-<rule id>` (a suffix `-2`, ... if that id is taken),
 *   amount × price = totalPrice (amount = the discounted units when the discount divides evenly,
 *   else 1), the discounted line's tax rate, `discountValue` = the discount in subunits.
 */
export function applyPromotions(cart: PromotionCart, config: CompiledConfiguration): PromotionResult {
  if (cart.currency !== config.currency) {
    throw new Error(`the configuration was compiled for ${config.currency}, the cart is in ${cart.currency}`);
  }
  const s = initialState(cart);
  const all = s.facts.discountable;
  const groupHolds = config.groups.map((g) => g.condition === null || g.condition(s, all) !== null);
  const explanation: RuleExplanation[] = [];

  for (const rank of config.ranks) {
    if (rank.mode === 'applyAll') {
      for (const rule of rank.rules) {
        const { entry, selection } = consider(rule, s, groupHolds, explanation);
        if (!selection) continue;
        const outcome = applyRule(s, rule, selection);
        if (outcome.skipped) entry.skippedReason = outcome.skipped;
        else entry.granted = outcome.granted;
      }
    } else {
      // Each candidate is tried and taken back; then the best applies for good.
      let best: { rule: CompiledRule; selection: Selection; entry: RuleExplanation; granted: number } | undefined;
      const tried: Array<{ entry: RuleExplanation; granted: number }> = [];
      for (const rule of rank.rules) {
        const { entry, selection } = consider(rule, s, groupHolds, explanation);
        if (!selection) continue;
        beginTrial(s);
        const outcome = applyRule(s, rule, selection);
        rollBack(s);
        if (outcome.skipped) {
          entry.skippedReason = outcome.skipped;
          continue;
        }
        tried.push({ entry, granted: outcome.granted });
        if (!best || outcome.granted > best.granted) best = { rule, selection, entry, granted: outcome.granted };
      }
      if (best) {
        applyRule(s, best.rule, best.selection);
        for (const t of tried) {
          if (t.entry === best.entry) {
            t.entry.granted = t.granted;
          } else {
            t.entry.skippedReason = 'not_best';
            t.entry.wouldGrant = t.granted;
          }
        }
      }
    }
  }
  return result(s, cart, explanation);
}

/** A rule's explanation (added to the list), and the lines it acts on when its group and its condition hold. */
function consider(rule: CompiledRule, s: EngineState, groupHolds: readonly boolean[], explanation: RuleExplanation[]): { entry: RuleExplanation; selection: Selection | null } {
  const entry: RuleExplanation = { ruleID: rule.id, rankID: rule.rankID, groupID: rule.groupID, conditionHeld: false, granted: 0 };
  explanation.push(entry);
  if (!groupHolds[rule.groupIndex]) {
    entry.skippedReason = 'group_condition_failed';
    return { entry, selection: null };
  }
  const selection = rule.condition === null ? s.facts.discountable : rule.condition(s, s.facts.discountable);
  if (!selection) entry.skippedReason = 'condition_failed';
  else entry.conditionHeld = true;
  return { entry, selection };
}

/** Applies a rule whose condition held: its coupons first (all or nothing), then its effects in order. */
function applyRule(s: EngineState, rule: CompiledRule, selection: Selection): { granted: number; skipped?: SkipReason } {
  const taken: number[] = [];
  for (const redeem of rule.redeems) {
    const coupon = redeem(s, selection, taken);
    if (coupon < 0) return { granted: 0, skipped: 'coupon_missing' };
    taken.push(coupon);
  }
  s.redeemed.push(...taken);
  const first = taken[0];
  const run: RuleRun = { ruleID: rule.id, selection, couponID: first === undefined ? undefined : s.facts.coupons[first]!.id, granted: 0 };
  for (const effect of rule.effects) effect(s, run);
  addGranted(s, rule.id, run.granted);
  return { granted: run.granted };
}

function withoutFlag(line: CheckoutLine): PromotionLineItem {
  const { isDiscountable: _flag, ...rest } = line;
  return rest;
}

function result(s: EngineState, cart: PromotionCart, explanation: RuleExplanation[]): PromotionResult {
  const byTarget = new Map<number, PromotionLineItem[]>();
  for (const p of s.promotions) {
    const list = byTarget.get(p.target);
    if (list) list.push(p.line);
    else byTarget.set(p.target, [p.line]);
  }
  const ids = new Set(cart.lineItems.map((l) => l.id));
  const unique = (line: PromotionLineItem): PromotionLineItem => {
    if (!ids.has(line.id)) {
      ids.add(line.id);
      return line;
    }
    let n = 2;
    while (ids.has(`${line.id}-${n}`)) n++;
    ids.add(`${line.id}-${n}`);
    return { ...line, id: `${line.id}-${n}` };
  };

  const lineItems: PromotionLineItem[] = [];
  for (const w of s.lines) {
    // A line goes out as it came (a new object only when it changed or carries the input's flag).
    const source = 'isDiscountable' in w.source ? withoutFlag(w.source) : (w.source as PromotionLineItem);
    lineItems.push(w.modifiers ? { ...source, price: w.price, totalPrice: w.total, priceModifiers: [...(source.priceModifiers ?? []), ...w.modifiers] } : source);
    for (const p of byTarget.get(w.index) ?? []) lineItems.push(unique(p));
  }
  for (const p of byTarget.get(-1) ?? []) lineItems.push(unique(p));

  const redeemedCoupons: CartCoupon[] = s.redeemed.map((i) => cart.coupons[i]!);
  const price = checkoutPrice(lineItems);
  const before = cart.lineItems.reduce((sum, l) => sum + l.totalPrice, 0);
  return {
    lineItems,
    price,
    redeemedCouponIds: [...new Set(redeemedCoupons.map((k) => k.id))],
    redeemedCoupons,
    forceControl: s.forceControl,
    explanation,
    totalDiscount: before - price.price,
  };
}
