import type { Action, Rounding } from '../../../subjects/promotions.js';
import { ArgReader, type Issues } from './args.js';
import { percentNumber, percentOf, scaleHalfUp, splitProportionally, type Fraction } from './rounding.js';
import type { Selection } from './conditions.js';
import { lineCapacity, takeFromRate, type EngineState, type WorkLine } from './state.js';
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
  /** What the rule took off so far, in subunits. */
  granted: number;
}

export type Effect = (s: EngineState, run: RuleRun) => void;

/** Finds the coupon (index into the cart's coupons) a redeem action takes; -1 when there is none left. */
export type Redeem = (s: EngineState, selection: Selection, taken: readonly number[]) => number;

export type CompiledAction = { kind: 'effect'; effect: Effect } | { kind: 'redeem'; redeem: Redeem };

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
      const required = args.count('requiredAmount', false, 1) ?? 1;
      const amount = args.count('amount', false, 1) ?? required;
      const multi = args.bool('isMultiusable', false) ?? false;
      if (amount > required) args.problem(`addLineItemDiscount discounts at most the requiredAmount (${required}) units per application, not ${amount}`);
      if (value === undefined) return undefined;
      return { kind: 'effect', effect: lineDiscount({ name, value, required, amount, multi, rounding: ctx.rounding }) };
    }
    case 'addCartDiscount': {
      const absolute = args.bool('absolute', false);
      const value = absolute ? args.money('value', true) : args.percent('value', true);
      if (value === undefined) return undefined;
      return { kind: 'effect', effect: cartDiscount(name, value, ctx.rounding) };
    }
    case 'modifyPrice': {
      const absolute = args.bool('absolute', false);
      const value = absolute ? args.money('value', true) : args.percent('value', true);
      const multi = args.bool('isMultiusable', false) ?? false;
      if (value === undefined) return undefined;
      return { kind: 'effect', effect: modifyPrice(name, value, multi, ctx.rounding) };
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
function lineDiscount(d: LineDiscount): Effect {
  return (s, run) => {
    const groups: UnitGroup[] = [];
    let units = 0;
    for (const i of run.selection) {
      const line = s.lines[i]!;
      const count = line.source.amount;
      if (line.remaining <= 0 || count <= 0) continue;
      units += count;
      const base = Math.floor(line.remaining / count);
      const extra = line.remaining - base * count;
      if (count > extra) groups.push({ line, value: base, count: count - extra });
      if (extra > 0) groups.push({ line, value: base + 1, count: extra });
    }
    const applications = d.multi ? Math.floor(units / d.required) : units >= d.required ? 1 : 0;
    let left = applications * d.amount;
    if (left <= 0) return;
    groups.sort((a, b) => a.value - b.value || a.line.index - b.line.index);
    // Per line: how many units, and what they are worth together (or, absolute, the discount).
    const taken = new Map<WorkLine, { units: number; worth: number; absolute: number }>();
    for (const g of groups) {
      if (left <= 0) break;
      const n = Math.min(g.count, left);
      left -= n;
      const t = taken.get(g.line) ?? { units: 0, worth: 0, absolute: 0 };
      t.units += n;
      t.worth += n * g.value;
      if (typeof d.value === 'number') t.absolute += n * Math.min(d.value, g.value);
      taken.set(g.line, t);
    }
    const lines = [...taken.entries()].sort((a, b) => a[0].index - b[0].index);
    for (const [line, t] of lines) {
      const wanted = typeof d.value === 'number' ? t.absolute : percentOf(t.worth, d.value, d.rounding);
      const discount = Math.min(wanted, lineCapacity(s, line));
      if (discount <= 0) continue;
      line.remaining -= discount;
      line.discounted = true;
      takeFromRate(s, line.source.taxRate, discount);
      run.granted += discount;
      s.promotions.push({ target: line.index, line: promotionLine(run, line.source.id, line.source.taxRate, discount, t.units, d.name, d.value) });
    }
  };
}

/** addCartDiscount: off the discountable total, split over the tax rates in proportion to what each has left. */
function cartDiscount(name: string, value: Value, rounding: Rounding): Effect {
  return (s, run) => {
    if (s.total <= 0) return;
    const wanted = typeof value === 'number' ? value : percentOf(s.total, value, rounding);
    const discount = Math.min(wanted, s.total);
    if (discount <= 0) return;
    const rates = [...s.rates.keys()].sort();
    const shares = splitProportionally(discount, rates.map((r) => Math.max(0, s.rates.get(r) ?? 0)));
    rates.forEach((rate, i) => {
      const share = shares[i]!;
      if (share <= 0) return;
      takeFromRate(s, rate, share);
      s.promotions.push({ target: -1, line: promotionLine(run, null, rate, share, 1, name, value) });
    });
    run.granted += discount;
  };
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
      const total = line.total % before === 0 ? price * (line.total / before) : scaleHalfUp(line.total, price, before);
      const reduction = Math.min(line.total - total, lineCapacity(s, line));
      if (reduction <= 0) continue;
      line.price = price;
      line.total -= reduction;
      line.remaining -= reduction;
      line.discounted = true;
      takeFromRate(s, line.source.taxRate, reduction);
      run.granted += reduction;
      const modifier = { name, method: 'promotion' as const, action: 'modify' as const, price, ruleID: run.ruleID };
      line.modifiers = [...(line.modifiers ?? []), typeof value === 'number' ? modifier : { ...modifier, percentage: percentNumber(value) }];
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
    weightUnit: '',
    referenceUnit: '',
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
  return line;
}
