import type { Condition } from '../../../subjects/promotions.js';
import { ArgReader, Issues } from './args.js';
import type { EngineState } from './state.js';

/**
 * Conditions compile into closures. A condition takes the lines selected so far (indexes of
 * discountable lines, in cart order) and answers the lines the rule acts on, or null when it does
 * not hold. Item conditions narrow the selection (hasSKU, isExclusiveForLineItem, and
 * isReferredToByCoupon for a coupon that refers to a line) or count it (amountGreaterOrEqual); cart
 * conditions pass it on unchanged. `and` passes the selection through its children in order; `or`
 * answers the union of what its holding children answer.
 */
export type Selection = readonly number[];
export type CompiledCondition = (s: EngineState, selection: Selection) => Selection | null;

export interface ConditionContext {
  issues: Issues;
  currency: string;
  /**
   * SKU lists whose lines a cart's `skuMatches` (state.ts) holds, found once per cart: those of
   * every hasSKU condition compiled so far (its index here is its index there), and the SKUs rules
   * need (compile.ts neededSkuLines).
   */
  skuLists: SkuLists;
  /** Every rule id of the configuration (grantedDiscountGreaterThanOrEqual must name them). */
  ruleIds: ReadonlySet<string>;
}

/** SKU lists, each kept once: the same SKUs (in any order) get the same index, so their lines are found once per cart and are the same list. */
export class SkuLists {
  readonly lists: Array<ReadonlySet<string>> = [];
  private readonly byKey = new Map<string, number>();

  indexOf(skus: ReadonlySet<string>): number {
    const key = JSON.stringify([...skus].sort());
    let index = this.byKey.get(key);
    if (index === undefined) {
      index = this.lists.push(skus) - 1;
      this.byKey.set(key, index);
    }
    return index;
  }
}

export const ConditionTypes = [
  'and',
  'or',
  'isCurrentlyActive',
  'hasSKU',
  'amountGreaterOrEqual',
  'totalGreaterThanOrEqual',
  'hasExternalShopID',
  'hasCouponCode',
  'isReferredToByCoupon',
  'isExclusiveForLineItem',
  'grantedDiscountGreaterThanOrEqual',
] as const;

const MaxDepth = 20;

export function compileCondition(c: Condition, path: string, ctx: ConditionContext, depth = 0): CompiledCondition | undefined {
  const { issues } = ctx;
  const args = new ArgReader(c.args, path, c.type, issues, ctx.currency);
  if (c.children?.length && c.type !== 'and' && c.type !== 'or') issues.add(`${path}.children`, `only and / or take children, not ${c.type}`);
  switch (c.type) {
    case 'and':
    case 'or': {
      if (!c.children?.length) {
        issues.add(path, `${c.type} needs children`);
        return undefined;
      }
      if (depth >= MaxDepth) {
        issues.add(path, `conditions nest deeper than ${MaxDepth} levels`);
        return undefined;
      }
      const children = c.children.map((child, i) => compileCondition(child, `${path}.children[${i}]`, ctx, depth + 1));
      if (children.some((child) => child === undefined)) return undefined;
      return c.type === 'and' ? all(children as CompiledCondition[]) : any(children as CompiledCondition[]);
    }
    case 'isCurrentlyActive': {
      const from = args.time('from');
      const to = args.time('to');
      if (!args.has('from') && !args.has('to')) args.problem('isCurrentlyActive needs from or to');
      if (from !== undefined && to !== undefined && from >= to) args.problem('isCurrentlyActive needs from before to');
      const start = from ?? -Infinity;
      const end = to ?? Infinity;
      return (s, sel) => (s.facts.at >= start && s.facts.at < end ? sel : null);
    }
    case 'hasSKU': {
      if (!args.has('equals') && !args.has('oneOf')) args.problem('hasSKU needs equals or oneOf');
      const index = ctx.skuLists.indexOf(skusOf(args));
      return (s, sel) => {
        const lines = s.facts.skuMatches[index];
        if (lines === undefined) return null;
        const kept = sel === s.facts.discountable ? lines : inBoth(sel, lines);
        if (!kept.length) return null;
        return kept.length === sel.length ? sel : kept;
      };
    }
    case 'amountGreaterOrEqual': {
      const value = args.count('value', true, 0) ?? 0;
      return (s, sel) => {
        let units = 0;
        for (const i of sel) units += s.lines[i]!.source.amount;
        return units >= value ? sel : null;
      };
    }
    case 'totalGreaterThanOrEqual': {
      const value = args.money('value', true) ?? 0;
      return (s, sel) => (s.total >= value ? sel : null);
    }
    case 'hasExternalShopID': {
      const shops = new Set(args.list('oneOf', true));
      return (s, sel) => (shops.has(s.facts.shopExternalId) ? sel : null);
    }
    case 'hasCouponCode': {
      const code = args.text('equals', true);
      return (s, sel) => (s.facts.coupons.some((k) => k.code === code || k.scannedCode === code) ? sel : null);
    }
    case 'isReferredToByCoupon': {
      const id = args.text('equals', true);
      return (s, sel) => {
        const coupons = s.facts.coupons.filter((k) => k.id === id);
        if (!coupons.length) return null;
        // A coupon that refers to no line leaves the selection as it is.
        if (coupons.some((k) => !k.refersTo)) return sel;
        const referred = new Set(coupons.map((k) => k.refersTo));
        const narrowed = sel.filter((i) => referred.has(s.lines[i]!.source.id));
        return narrowed.length ? narrowed : null;
      };
    }
    case 'isExclusiveForLineItem':
      return narrow((s, i) => !s.lines[i]!.discounted);
    case 'grantedDiscountGreaterThanOrEqual': {
      const rules = args.list('ruleIDs', true) ?? [];
      const value = args.money('value', true) ?? 0;
      for (const id of rules) if (!ctx.ruleIds.has(id)) issues.add(`${path}.args.ruleIDs`, `no rule ${JSON.stringify(id)} in this configuration`);
      return (s, sel) => {
        let granted = 0;
        for (const id of rules) granted += s.granted.get(id) ?? 0;
        return granted >= value ? sel : null;
      };
    }
    default:
      issues.add(`${path}.type`, `unknown condition type ${JSON.stringify(c.type)} (known: ${ConditionTypes.join(', ')})`);
      return undefined;
  }
}

/** The SKUs a hasSKU condition names (`equals` and `oneOf`). */
function skusOf(args: ArgReader): Set<string> {
  const equals = args.text('equals', false);
  return new Set([...(equals === undefined ? [] : [equals]), ...(args.list('oneOf', false) ?? [])]);
}

/**
 * SKUs of which a cart needs one among its discountable lines for the condition to hold, or null
 * when the condition names none it cannot do without. A rule whose cart has none of them is known
 * not to hold without evaluating it: the engine skips most rules of a large configuration so (a
 * rule per article, of which a cart has a few). For a condition that compiled without issues.
 */
export function requiredSkus(c: Condition, currency: string): ReadonlySet<string> | null {
  switch (c.type) {
    case 'hasSKU':
      return skusOf(new ArgReader(c.args, '', c.type, new Issues(), currency));
    case 'and': {
      // Every child must hold: the fewest SKUs any child needs.
      let fewest: ReadonlySet<string> | null = null;
      for (const child of c.children ?? []) {
        const needed = requiredSkus(child, currency);
        if (needed && (!fewest || needed.size < fewest.size)) fewest = needed;
      }
      return fewest;
    }
    case 'or': {
      // One child must hold: the SKUs of all, when each needs some.
      const union = new Set<string>();
      for (const child of c.children ?? []) {
        const needed = requiredSkus(child, currency);
        if (!needed) return null;
        for (const sku of needed) union.add(sku);
      }
      return union;
    }
    default:
      return null;
  }
}

/** The indexes in both lists (each in cart order), in cart order. */
function inBoth(a: Selection, b: Selection): number[] {
  const both: number[] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      both.push(a[i]!);
      i++;
      j++;
    }
  }
  return both;
}

/** An item condition: keeps the selected lines that pass; holds when any does. */
function narrow(keep: (s: EngineState, line: number) => boolean): CompiledCondition {
  return (s, sel) => {
    let kept: number[] | undefined;
    for (let k = 0; k < sel.length; k++) {
      const i = sel[k]!;
      if (keep(s, i)) {
        kept?.push(i);
      } else {
        // The first line left out: from here on the selection is a new list.
        kept ??= sel.slice(0, k);
      }
    }
    if (!kept) return sel.length ? sel : null;
    return kept.length ? kept : null;
  };
}

function all(children: readonly CompiledCondition[]): CompiledCondition {
  return (s, sel) => {
    let current: Selection | null = sel;
    for (const child of children) {
      current = child(s, current);
      if (current === null) return null;
    }
    return current;
  };
}

function any(children: readonly CompiledCondition[]): CompiledCondition {
  return (s, sel) => {
    let union: Set<number> | undefined;
    let only: Selection | undefined;
    for (const child of children) {
      const answer = child(s, sel);
      if (answer === null) continue;
      if (only === undefined) {
        only = answer;
      } else {
        union ??= new Set(only);
        for (const i of answer) union.add(i);
      }
    }
    if (only === undefined) return null;
    return union ? [...union].sort((a, b) => a - b) : only;
  };
}
