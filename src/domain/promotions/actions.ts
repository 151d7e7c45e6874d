import type { Action, Rounding } from '../../../subjects/promotions.js';
import { ArgReader, type Issues } from './args.js';
import { divideRounded } from '../money.js';
import { percentNumber, percentOf, splitProportionally, type Fraction } from './rounding.js';
import type { Selection } from './conditions.js';
import { lineCapacity, takeFromRate, touchLine, type EngineState, type WorkLine } from './state.js';
import type { PromotionLineItem } from './types.js';

/**
 * Actions compile into effects on the engine state. Redeem actions only pick the coupon they redeem
 * (`Redeem`), so a rule whose coupon is missing is skipped before it changes anything; the other
 * actions are `Effect`s, run in the rule's order. Every discount is capped by what its line and its
 * tax rate have left (state.ts).
 */
export interface RuleRun {
  readonly ruleID: string;
  readonly selection: Selection;
  /** The first coupon this rule redeemed: its promotion lines name it. */
  readonly couponID: string | undefined;
  /** The configuration's id, when the caller named it: promotion lines carry `discountID` `<configuration id>/<rule id>`. */
  readonly configurationID: string | number | undefined;
  /** What the rule took off so far, in subunits. */
  granted: number;
}

export type Effect = (s: EngineState, run: RuleRun) => void;

/**
 * At most what an effect can grant on a state for a selection, without applying it: selectBest
 * skips the trial of a rule that cannot grant more than the best so far (a cheap loop instead of a
 * trial and its roll-back). It may be more than the effect grants, never less.
 */
export type Bound = (s: EngineState, selection: Selection) => number;

/** Finds the coupon (index into the cart's coupons) a redeem action takes; -1 when there is none left. */
export type Redeem = (s: EngineState, selection: Selection, taken: readonly number[]) => number;

export type CompiledAction = { kind: 'effect'; effect: Effect; bound: Bound } | { kind: 'redeem'; redeem: Redeem };

export interface ActionContext {
  issues: Issues;
  currency: string;
  rounding: Rounding;
}

export const ActionTypes = ['addLineItemDiscount', 'addCartDiscount', 'redeemCouponCode', 'modifyPrice', 'redeemReferringCoupon', 'addForceControl'] as const;

export function compileAction(a: Action, path: string, ruleID: string, ctx: ActionContext): CompiledAction | undefined {
  const args = new ArgReader(a.args, path, a.type, ctx.issues, ctx.currency);
  const name = a.args?.name ?? ruleID;
  switch (a.type) {
    case 'addLineItemDiscount': {
      const absolute = args.bool('absolute', false);
      const value = absolute ? args.money('value', true) : args.percent('value', true);
      // Either defaults to the other (an application of 1 unit when neither is given).
      const requiredArg = args.count('requiredAmount', false, 1);
      const amountArg = args.count('amount', false, 1);
      const required = requiredArg ?? amountArg ?? 1;
      const amount = amountArg ?? required;
      const multi = args.bool('isMultiusable', false) ?? false;
      if (amount > required) args.problem(`addLineItemDiscount discounts at most the requiredAmount (${required}) units per application, not ${amount}`);
      if (value === undefined) return undefined;
      return { kind: 'effect', ...lineDiscount({ name, value, required, amount, multi, rounding: ctx.rounding }) };
    }
    case 'addCartDiscount': {
      const absolute = args.bool('absolute', false);
      const value = absolute ? args.money('value', true) : args.percent('value', true);
      if (value === undefined) return undefined;
      return { kind: 'effect', ...cartDiscount(name, value, ctx.rounding) };
    }
    case 'modifyPrice': {
      const absolute = args.bool('absolute', false);
      const value = absolute ? args.money('value', true) : args.percent('value', true);
      const multi = args.bool('isMultiusable', false) ?? false;
      if (value === undefined) return undefined;
      return { kind: 'effect', effect: modifyPrice(name, value, multi, ctx.rounding), bound: whatSelectionHasLeft };
    }
    case 'redeemCouponCode': {
      const code = args.text('code', true);
      return { kind: 'redeem', redeem: (s, _sel, taken) => firstCoupon(s, taken, (k) => k.code === code || k.scannedCode === code) };
    }
    case 'redeemReferringCoupon': {
      const id = args.text('id', true);
      return {
        kind: 'redeem',
        redeem: (s, sel, taken) => {
          // Of several coupons with the id, one that refers to a line the rule acts on comes first.
          const selected = new Set(sel.map((i) => s.lines[i]!.source.id));
          const referring = firstCoupon(s, taken, (k) => k.id === id && !!k.refersTo && selected.has(k.refersTo));
          return referring >= 0 ? referring : firstCoupon(s, taken, (k) => k.id === id);
        },
      };
    }
    case 'addForceControl':
      return {
        kind: 'effect',
        effect: (s) => {
          s.forceControl = true;
        },
        bound: () => 0,
      };
    default:
      ctx.issues.add(`${path}.type`, `unknown action type ${JSON.stringify(a.type)} (known: ${ActionTypes.join(', ')})`);
      return undefined;
  }
}

function firstCoupon(s: EngineState, taken: readonly number[], match: (k: EngineState['facts']['coupons'][number]) => boolean): number {
  const coupons = s.facts.coupons;
  for (let i = 0; i < coupons.length; i++) {
    if (match(coupons[i]!) && !s.redeemed.includes(i) && !taken.includes(i)) return i;
  }
  return -1;
}

type Value = number | Fraction;

/** One group of a line's units that cost the same (a line's units differ by at most one subunit). */
interface UnitGroup {
  line: WorkLine;
  value: number;
  count: number;
}

/** A line's units as what it has left makes them worth: `extra` of its `count` units one subunit more than `base`. */
function unitsOf(line: WorkLine): { count: number; base: number; extra: number } {
  const count = line.source.amount;
  const base = Math.floor(line.remaining / count);
  return { count, base, extra: line.remaining - base * count };
}

interface LineDiscount {
  name: string;
  value: Value;
  required: number;
  amount: number;
  multi: boolean;
  rounding: Rounding;
}

/**
 * addLineItemDiscount: the selected lines' units (a line's `amount`, each worth its share of what
 * the line has left) are counted; every `required` units allow one application (once unless
 * multi-usable), and each application discounts `amount` units, the cheapest first.
 */
function lineDiscount(d: LineDiscount): { effect: Effect; bound: Bound } {
  const absolute = typeof d.value === 'number' ? d.value : undefined;
  const percent = typeof d.value === 'number' ? undefined : d.value;
  /** How many units the selection's `units` allow to discount. */
  const discountedUnits = (units: number) => Math.min(units, (d.multi ? Math.floor(units / d.required) : units >= d.required ? 1 : 0) * d.amount);
  // Rounded up, a unit's discount is at least its share of any rounded discount of several units.
  const roundingUp: Rounding = { mode: 'up', precision: d.rounding.precision };

  // At most what the lines have left, each line at most `absolute` per unit or its percentage of what
  // it has left; and at most the discounted units, each at most as worth as the selection's dearest.
  const bound: Bound = (s, selection) => {
    let most = 0;
    let units = 0;
    let dearest = 0;
    for (const i of selection) {
      const line = s.lines[i]!;
      if (line.remaining <= 0) continue;
      units += line.source.amount;
      dearest = Math.max(dearest, Math.ceil(line.remaining / line.source.amount));
      most += Math.min(line.remaining, absolute !== undefined ? absolute * line.source.amount : percentOf(line.remaining, percent!, d.rounding));
    }
    return Math.min(most, discountedUnits(units) * (absolute ?? percentOf(dearest, percent!, roundingUp)));
  };

  /** The discount of `n` units of a line worth `base` each, and of `plus` more worth base + 1. */
  const discountOf = (n: number, plus: number, base: number): number =>
    absolute !== undefined ? n * Math.min(absolute, base) + plus * Math.min(absolute, base + 1) : percentOf(n * base + plus * (base + 1), percent!, d.rounding);

  const grant = (s: EngineState, run: RuleRun, line: WorkLine, units: number, wanted: number) => {
    const discount = Math.min(wanted, lineCapacity(s, line));
    if (discount <= 0) return;
    touchLine(s, line);
    line.remaining -= discount;
    line.discounted = true;
    takeFromRate(s, line.source.taxRate, discount);
    run.granted += discount;
    // A trial only asks what a rule grants: what it would show is made when it applies for good.
    if (!s.trial) s.promotions.push({ target: line.index, line: promotionLine(run, line.source.id, line.source.taxRate, discount, units, d.name, d.value) });
  };

  const effect: Effect = (s, run) => {
    let units = 0;
    for (const i of run.selection) {
      const line = s.lines[i]!;
      if (line.remaining > 0) units += line.source.amount;
    }
    let left = discountedUnits(units);
    if (left <= 0) return;

    if (left >= units) {
      // Every unit of the selection (the common "x off each" case): no ordering needed.
      for (const i of run.selection) {
        const line = s.lines[i]!;
        if (line.remaining <= 0) continue;
        const { count, base, extra } = unitsOf(line);
        grant(s, run, line, count, discountOf(count - extra, extra, base));
      }
      return;
    }

    // The cheapest units first: a line's units are worth `base` or `base + 1`.
    const groups: UnitGroup[] = [];
    for (const i of run.selection) {
      const line = s.lines[i]!;
      if (line.remaining <= 0) continue;
      const { count, base, extra } = unitsOf(line);
      if (count > extra) groups.push({ line, value: base, count: count - extra });
      if (extra > 0) groups.push({ line, value: base + 1, count: extra });
    }
    groups.sort((a, b) => a.value - b.value || a.line.index - b.line.index);
    // Per line, in cart order: units taken at base and at base + 1.
    const taken: Array<{ line: WorkLine; base: number; n: number; plus: number }> = [];
    for (const g of groups) {
      if (left <= 0) break;
      const n = Math.min(g.count, left);
      left -= n;
      let t = taken.find((x) => x.line === g.line);
      if (!t) {
        t = { line: g.line, base: unitsOf(g.line).base, n: 0, plus: 0 };
        taken.push(t);
      }
      if (g.value === t.base) t.n += n;
      else t.plus += n;
    }
    taken.sort((a, b) => a.line.index - b.line.index);
    for (const t of taken) grant(s, run, t.line, t.n + t.plus, discountOf(t.n, t.plus, t.base));
  };
  return { effect, bound };
}

/** A price change takes at most what the selected lines have left. */
const whatSelectionHasLeft: Bound = (s, selection) => {
  let most = 0;
  for (const i of selection) most += Math.max(0, s.lines[i]!.remaining);
  return most;
};

/** addCartDiscount: off the discountable total, split over the tax rates in proportion to what each has left. */
function cartDiscount(name: string, value: Value, rounding: Rounding): { effect: Effect; bound: Bound } {
  /** What the discount takes off the total (never more than the total): also its bound, which is exact. */
  const takenOff = (s: EngineState) => (s.total <= 0 ? 0 : Math.min(s.total, typeof value === 'number' ? value : percentOf(s.total, value, rounding)));
  const effect: Effect = (s, run) => {
    const discount = takenOff(s);
    if (discount <= 0) return;
    const rates = s.facts.rateOrder;
    const shares = splitProportionally(discount, rates.map((r) => Math.max(0, s.rates.get(r) ?? 0)));
    rates.forEach((rate, i) => {
      const share = shares[i]!;
      if (share <= 0) return;
      takeFromRate(s, rate, share);
      if (!s.trial) s.promotions.push({ target: -1, line: promotionLine(run, null, rate, share, 1, name, value) });
    });
    run.granted += discount;
  };
  return { effect, bound: takenOff };
}

/**
 * modifyPrice: a new unit price for the selected lines (every one if multi-usable, else the first
 * that can be lowered): absolute is the new price, a percentage the part taken off. The line total
 * follows: new price × units where the total is a multiple of the price, else scaled (weighed
 * goods) half away from zero. Prices only go down.
 */
function modifyPrice(name: string, value: Value, multi: boolean, rounding: Rounding): Effect {
  return (s, run) => {
    for (const i of run.selection) {
      const line = s.lines[i]!;
      const before = line.price;
      if (before <= 0) continue;
      const price = typeof value === 'number' ? Math.min(value, before) : before - Math.min(before, percentOf(before, value, rounding));
      if (price >= before) continue;
      const total = line.total % before === 0 ? price * (line.total / before) : divideRounded(BigInt(line.total) * BigInt(price), BigInt(before));
      const reduction = Math.min(line.total - total, lineCapacity(s, line));
      if (reduction <= 0) continue;
      touchLine(s, line);
      line.price = price;
      line.total -= reduction;
      line.remaining -= reduction;
      line.discounted = true;
      takeFromRate(s, line.source.taxRate, reduction);
      run.granted += reduction;
      if (!s.trial) {
        const modifier = { name, method: 'promotion' as const, action: 'modify' as const, price, ruleID: run.ruleID };
        line.modifiers = [...(line.modifiers ?? []), typeof value === 'number' ? modifier : { ...modifier, percentage: percentNumber(value) }];
      }
      if (!multi) return;
    }
  };
}

/** A promotion line: amount × price = totalPrice, the discount as a negative total. */
function promotionLine(run: RuleRun, refersTo: string | null, taxRate: string, discount: number, units: number, name: string, value: Value): PromotionLineItem {
  const amount = units > 1 && discount % units === 0 ? units : 1;
  const line: PromotionLineItem = {
    id: `${refersTo ?? 'cart'}-promotion-${run.ruleID}${refersTo === null ? `-${taxRate}` : ''}`,
    type: 'promotion',
    refersTo,
    sku: '',
    amount,
    weight: 0,
    units: 0,
    price: -discount / amount,
    priceOrigin: 'master',
    totalPrice: -discount,
    name,
    taxRate,
    scannedCode: '',
    saleRestriction: '',
    discountRuleID: run.ruleID,
    discountType: typeof value === 'number' ? 'absolute' : 'percentage',
    discountValue: discount,
  };
  if (typeof value !== 'number') line.discountPercentage = percentNumber(value);
  if (run.couponID !== undefined) line.couponID = run.couponID;
  if (run.configurationID !== undefined) line.discountID = `${run.configurationID}/${run.ruleID}`;
  return line;
}
