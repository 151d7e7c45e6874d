import type { ConfigurationBody, Rule } from '../../../subjects/promotions.js';
import { compileAction, type Bound, type Effect, type Redeem } from './actions.js';
import { Issues, type ConfigIssue } from './args.js';
import { compileCondition, requiredSkus, SkuLists, type CompiledCondition } from './conditions.js';
import type { SkuListIndex } from './state.js';

/**
 * A configuration compiled once into closures, ready for any number of carts: rules sorted into
 * evaluation order (ranks in the order of `ranks`, within a rank groups in their order, within a
 * group rules in their order), every argument parsed (money with the currency's subunits). Compiling
 * is also the validation: every problem is collected with its exact path.
 */
export interface CompiledRule {
  readonly id: string;
  readonly rankID: string;
  readonly groupID: string;
  readonly groupIndex: number;
  /**
   * Where the cart's skuMatches (state.ts) hold the lines with one of the SKUs the rule's condition
   * needs (conditions.ts requiredSkus); null when it needs none. Whatever the condition selects is
   * among those lines: a cart without them is known not to hold the rule without evaluating it (most
   * rules of a large configuration, a rule per article of which a cart has a few), and what the
   * rule could grant on them bounds what it grants (selectBest skips a candidate that cannot win).
   */
  readonly neededSkuLines: number | null;
  /** null: the rule always holds. */
  readonly condition: CompiledCondition | null;
  readonly redeems: readonly Redeem[];
  readonly effects: readonly Effect[];
  /** At most what the rule's effects can grant on a state (the sum of theirs): selectBest skips a trial that cannot win. */
  readonly bound: Bound;
}

export interface CompiledRank {
  readonly id: string;
  readonly mode: 'applyAll' | 'selectBest';
  readonly rules: readonly CompiledRule[];
  /**
   * The rules indexed by the SKUs they need, so that a cart visits only the rules it might hold
   * (engine.ts candidatesOf), not every rule of the rank: positions in `rules` of those that need
   * no SKU, and per SKU list (a rule's neededSkuLines) of those that need one of its SKUs.
   */
  readonly needNoSku: readonly number[];
  readonly bySkuList: ReadonlyMap<number, readonly number[]>;
}

/** With the SKU lists of its hasSKU conditions and of its rules' needed SKUs (SkuListIndex, state.ts). */
export interface CompiledConfiguration extends SkuListIndex {
  readonly currency: string;
  readonly ranks: readonly CompiledRank[];
  readonly groups: ReadonlyArray<{ readonly id: string; readonly condition: CompiledCondition | null }>;
}

export class PromotionConfigurationError extends Error {
  override name = 'PromotionConfigurationError';

  constructor(readonly issues: readonly ConfigIssue[]) {
    super(issues.length === 1 ? issues[0]!.message : `${issues[0]?.message ?? 'invalid configuration'} (and ${issues.length - 1} more problems)`);
  }
}

/** Every problem of a configuration (empty when it can be applied), each naming its exact path. */
export function validateConfiguration(config: ConfigurationBody, currency: string): ConfigIssue[] {
  return compile(config, currency).issues;
}

/** Compiles a configuration for carts in `currency`; throws PromotionConfigurationError listing every problem. */
export function compileConfiguration(config: ConfigurationBody, currency: string): CompiledConfiguration {
  const { compiled, issues } = compile(config, currency);
  if (issues.length) throw new PromotionConfigurationError(issues);
  return compiled;
}

function compile(config: ConfigurationBody, currency: string): { compiled: CompiledConfiguration; issues: ConfigIssue[] } {
  const issues = new Issues();
  const rankIndex = new Map<string, number>();
  config.ranks.forEach((rank, i) => {
    const earlier = rankIndex.get(rank.id);
    if (earlier !== undefined) issues.add(`ranks[${i}].id`, `the rank id ${JSON.stringify(rank.id)} is already used by ranks[${earlier}]`);
    else rankIndex.set(rank.id, i);
  });

  const groupIndex = new Map<string, number>();
  const rulePaths = new Map<string, string>();
  config.groups.forEach((group, g) => {
    const earlier = groupIndex.get(group.id);
    if (earlier !== undefined) issues.add(`groups[${g}].id`, `the group id ${JSON.stringify(group.id)} is already used by groups[${earlier}]`);
    else groupIndex.set(group.id, g);
    group.rules.forEach((rule, r) => {
      const path = `groups[${g}].rules[${r}]`;
      const used = rulePaths.get(rule.id);
      if (used !== undefined) issues.add(`${path}.id`, `the rule id ${JSON.stringify(rule.id)} is already used by ${used}`);
      else rulePaths.set(rule.id, path);
      if (!rankIndex.has(rule.rankID)) issues.add(`${path}.rankID`, `no rank ${JSON.stringify(rule.rankID)} (ranks: ${[...rankIndex.keys()].map((id) => JSON.stringify(id)).join(', ') || 'none'})`);
    });
  });

  const ruleIds = new Set(rulePaths.keys());
  const conditionContext = { issues, currency, ruleIds, skuLists: new SkuLists() };
  const actionContext = { issues, currency, rounding: config.rounding };
  const buckets: CompiledRule[][] = config.ranks.map(() => []);
  const groups = config.groups.map((group, g) => {
    const condition = group.condition ? compileCondition(group.condition, `groups[${g}].condition`, conditionContext) : null;
    group.rules.forEach((rule, r) => {
      const compiled = compileRule(rule, `groups[${g}].rules[${r}]`, { groupID: group.id, groupIndex: g }, conditionContext, actionContext);
      const rank = rankIndex.get(rule.rankID);
      if (compiled && rank !== undefined) buckets[rank]!.push(compiled);
    });
    return { id: group.id, condition: condition ?? null };
  });

  const skuListsBySku = new Map<string, number[]>();
  conditionContext.skuLists.lists.forEach((skus, index) => {
    for (const sku of skus) {
      const lists = skuListsBySku.get(sku);
      if (lists) lists.push(index);
      else skuListsBySku.set(sku, [index]);
    }
  });

  const ranks = config.ranks.map((rank, i): CompiledRank => ({ id: rank.id, mode: rank.evaluationMode, ...indexed(buckets[i]!) }));
  const compiled = { currency, ranks, groups, skuListsBySku, skuListCount: conditionContext.skuLists.lists.length };
  return { compiled, issues: issues.list };
}

/** A rank's rules with their index by needed SKUs (CompiledRank). */
export function indexed(rules: readonly CompiledRule[]): Pick<CompiledRank, 'rules' | 'needNoSku' | 'bySkuList'> {
  const needNoSku: number[] = [];
  const bySkuList = new Map<number, number[]>();
  rules.forEach((rule, position) => {
    const list = rule.neededSkuLines;
    const positions = list === null ? needNoSku : bySkuList.get(list);
    if (positions) positions.push(position);
    else bySkuList.set(list!, [position]);
  });
  return { rules, needNoSku, bySkuList };
}

function compileRule(
  rule: Rule,
  path: string,
  place: { groupID: string; groupIndex: number },
  conditionContext: Parameters<typeof compileCondition>[2],
  actionContext: Parameters<typeof compileAction>[3],
): CompiledRule | undefined {
  const condition = rule.condition ? compileCondition(rule.condition, `${path}.condition`, conditionContext) : null;
  const redeems: Redeem[] = [];
  const effects: Effect[] = [];
  const bounds: Bound[] = [];
  rule.actions.forEach((action, a) => {
    const compiled = compileAction(action, `${path}.actions[${a}]`, rule.id, actionContext);
    if (compiled?.kind === 'redeem') redeems.push(compiled.redeem);
    if (compiled?.kind === 'effect') {
      effects.push(compiled.effect);
      bounds.push(compiled.bound);
    }
  });
  if (condition === undefined) return undefined;
  const skus = rule.condition ? requiredSkus(rule.condition, conditionContext.currency) : null;
  const neededSkuLines = skus ? conditionContext.skuLists.indexOf(skus) : null;
  const bound: Bound = bounds.length === 1 ? bounds[0]! : (s, selection) => bounds.reduce((sum, b) => sum + b(s, selection), 0);
  return { id: rule.id, rankID: rule.rankID, ...place, neededSkuLines, condition, redeems, effects, bound };
}
