import { checkoutPrice } from '../tax.js';
import type { RuleRun } from './actions.js';
import type { CompiledConfiguration, CompiledRank, CompiledRule } from './compile.js';
import type { Selection } from './conditions.js';
import { addGranted, beginTrial, initialState, rollBack, type EngineState } from './state.js';
import type { CartCoupon, CheckoutLine, PromotionCart, PromotionLineItem, PromotionResult, RuleExplanation } from './types.js';

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
export interface ApplyOptions {
  /** Explain every rule (whether its condition held, what it granted, why it did not apply): the evaluate operation's answer. Off: `explanation` is empty. */
  explain?: boolean;
  /** The configuration's id: promotion lines then name their discount (`discountID`, `<configuration id>/<rule id>`). */
  configurationID?: string | number;
}

export function applyPromotions(cart: PromotionCart, config: CompiledConfiguration, options: ApplyOptions = {}): PromotionResult {
  if (cart.currency !== config.currency) {
    throw new Error(`the configuration was compiled for ${config.currency}, the cart is in ${cart.currency}`);
  }
  const s = initialState(cart, config);
  const all = s.facts.discountable;
  const groupHolds = config.groups.map((g) => g.condition === null || g.condition(s, all) !== null);
  const explanation: RuleExplanation[] = [];
  const entryOf = (rule: CompiledRule): RuleExplanation => {
    const entry: RuleExplanation = { ruleID: rule.id, rankID: rule.rankID, groupID: rule.groupID, conditionHeld: false, granted: 0 };
    explanation.push(entry);
    return entry;
  };
  const explain = options.explain ? entryOf : () => undefined;

  for (const rank of config.ranks) {
    if (rank.mode === 'applyAll') {
      // Explained, every rule has its entry; else only the candidates are looked at, in order.
      const rules = options.explain ? rank.rules : candidatesOf(rank, s, groupHolds).sort((a, b) => a - b).map((position) => rank.rules[position]!);
      for (const rule of rules) {
        const entry = explain(rule);
        const selection = select(rule, s, groupHolds, entry);
        if (!selection) continue;
        const granted = applyRule(s, rule, selection, options);
        if (entry) noteOutcome(entry, granted);
      }
    } else if (options.explain) {
      explainBest(rank, s, groupHolds, entryOf, options);
    } else {
      applyBest(rank, s, groupHolds, options);
    }
  }
  return result(s, cart, explanation);
}

/**
 * selectBest, explained: every candidate whose condition holds is tried on the cart as the rank
 * found it and taken back, so that its explanation says what it would grant; then the one that
 * grants the most (the first on a tie) applies for good.
 */
function explainBest(rank: CompiledRank, s: EngineState, groupHolds: readonly boolean[], explain: (rule: CompiledRule) => RuleExplanation, options: ApplyOptions): void {
  let best: { rule: CompiledRule; selection: Selection; granted: number; entry: RuleExplanation } | undefined;
  const tried: Array<{ entry: RuleExplanation; granted: number }> = [];
  for (const rule of rank.rules) {
    const entry = explain(rule);
    const selection = select(rule, s, groupHolds, entry);
    if (!selection) continue;
    const granted = tryRule(s, rule, selection, options);
    if (granted === CouponMissing) {
      entry.skippedReason = 'coupon_missing';
      continue;
    }
    tried.push({ entry, granted });
    if (!best || granted > best.granted) best = { rule, selection, granted, entry };
  }
  if (!best) return;
  applyRule(s, best.rule, best.selection, options);
  for (const t of tried) {
    if (t.entry === best.entry) {
      t.entry.granted = t.granted;
    } else {
      t.entry.skippedReason = 'not_best';
      t.entry.wouldGrant = t.granted;
    }
  }
}

/**
 * selectBest: the same rule as explainBest applies (the most granted, the first on a tie), found
 * with fewer trials. Each candidate's bound on every line its condition might select is known
 * first; candidates are then looked at from the highest bound down (the earliest of equal ones
 * first), and one that cannot grant more than the best so far (nor as much, being earlier) is
 * neither evaluated nor tried. The best is usually among the first looked at, and the rest are
 * passed over.
 */
function applyBest(rank: CompiledRank, s: EngineState, groupHolds: readonly boolean[], options: ApplyOptions): void {
  const candidates = candidatesOf(rank, s, groupHolds).map((order) => {
    const rule = rank.rules[order]!;
    const lines = candidateLines(rule, s)!;
    return { order, rule, lines, bound: rule.bound(s, lines) };
  });
  candidates.sort((a, b) => b.bound - a.bound || a.order - b.order);
  let best: { order: number; rule: CompiledRule; selection: Selection; granted: number } | undefined;
  const couldWin = (bound: number, order: number) => !best || bound > best.granted || (bound === best.granted && order < best.order);
  for (const { order, rule, lines, bound } of candidates) {
    if (best && bound < best.granted) break; // no candidate left could grant as much
    if (!couldWin(bound, order)) continue;
    const selection = selectionOf(rule, s);
    if (!selection || (selection !== lines && !couldWin(rule.bound(s, selection), order))) continue;
    const granted = tryRule(s, rule, selection, options);
    if (granted !== CouponMissing && couldWin(granted, order)) best = { order, rule, selection, granted };
  }
  if (best) applyRule(s, best.rule, best.selection, options);
}

/**
 * Positions (in rank.rules, in no particular order) of the rules that might hold for the cart: of
 * a group that holds, and needing no SKU or one of the cart's (the rank's index, compile.ts). The
 * rest cannot hold and are not looked at: a large configuration has a rule per article, of which a
 * cart has a few.
 */
function candidatesOf(rank: CompiledRank, s: EngineState, groupHolds: readonly boolean[]): number[] {
  const positions: number[] = [];
  const add = (list: readonly number[]) => {
    for (const position of list) if (groupHolds[rank.rules[position]!.groupIndex]) positions.push(position);
  };
  add(rank.needNoSku);
  for (const list of s.facts.matchedLists) {
    const rules = rank.bySkuList.get(list);
    if (rules) add(rules);
  }
  return positions;
}

/** What a rule would grant on the state as it is (or CouponMissing): applied, then taken back. */
function tryRule(s: EngineState, rule: CompiledRule, selection: Selection, options: ApplyOptions): number {
  beginTrial(s);
  const granted = applyRule(s, rule, selection, options);
  rollBack(s);
  return granted;
}

/** The lines with a SKU the rule needs (every discountable line when it needs none): what its condition selects is among them. Null: none. */
function candidateLines(rule: CompiledRule, s: EngineState): Selection | null {
  return rule.neededSkuLines === null ? s.facts.discountable : (s.facts.skuMatches[rule.neededSkuLines] ?? null);
}

/** The lines a rule's condition selects on the cart as it is now (every discountable line for a rule without one), or null when it does not hold. */
function selectionOf(rule: CompiledRule, s: EngineState): Selection | null {
  return rule.condition === null ? s.facts.discountable : rule.condition(s, s.facts.discountable);
}

/** The lines a rule acts on when its group and its condition hold, else null (with the reason in its explanation). */
function select(rule: CompiledRule, s: EngineState, groupHolds: readonly boolean[], entry: RuleExplanation | undefined): Selection | null {
  if (!groupHolds[rule.groupIndex]) {
    if (entry) entry.skippedReason = 'group_condition_failed';
    return null;
  }
  // A rule that needs SKUs the cart does not have cannot hold: known without evaluating it.
  const selection = candidateLines(rule, s) === null ? null : selectionOf(rule, s);
  if (entry) {
    if (selection) entry.conditionHeld = true;
    else entry.skippedReason = 'condition_failed';
  }
  return selection;
}

/** What applyRule answers for a rule whose coupon is missing (it changed nothing). */
const CouponMissing = -1;

function noteOutcome(entry: RuleExplanation, granted: number): void {
  if (granted === CouponMissing) entry.skippedReason = 'coupon_missing';
  else entry.granted = granted;
}

/**
 * Applies a rule whose condition held: its coupons first (all or nothing), then its effects in
 * order. Answers what it granted, or CouponMissing.
 */
function applyRule(s: EngineState, rule: CompiledRule, selection: Selection, options: ApplyOptions): number {
  let couponID: string | undefined;
  if (rule.redeems.length) {
    const taken: number[] = [];
    for (const redeem of rule.redeems) {
      const coupon = redeem(s, selection, taken);
      if (coupon < 0) return CouponMissing;
      taken.push(coupon);
    }
    s.redeemed.push(...taken);
    couponID = s.facts.coupons[taken[0]!]!.id;
  }
  const run: RuleRun = { ruleID: rule.id, selection, couponID, configurationID: options.configurationID, granted: 0 };
  for (const effect of rule.effects) effect(s, run);
  addGranted(s, rule.id, run.granted);
  return run.granted;
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
  // A promotion line's id is `<line>-promotion-<rule>…`: it can only be taken by a cart line with
  // such an id (rare) or by an earlier promotion line of the same rule and line.
  const ids = new Set<string>();
  for (const l of cart.lineItems) if (l.id.includes('-promotion-')) ids.add(l.id);
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
    redeemedCouponIds: redeemedCoupons.length ? [...new Set(redeemedCoupons.map((k) => k.id))] : [],
    redeemedCoupons,
    forceControl: s.forceControl,
    explanation,
    totalDiscount: before - price.price,
  };
}
