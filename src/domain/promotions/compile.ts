import type { ConfigurationBody, Rule } from '../../../subjects/promotions.js';
import { compileAction, type Effect, type Redeem } from './actions.js';
import { Issues, type ConfigIssue } from './args.js';
import { compileCondition, type CompiledCondition } from './conditions.js';

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
  /** null: the rule always holds. */
  readonly condition: CompiledCondition | null;
  readonly redeems: readonly Redeem[];
  readonly effects: readonly Effect[];
}

export interface CompiledRank {
  readonly id: string;
  readonly mode: 'applyAll' | 'selectBest';
  readonly rules: readonly CompiledRule[];
}

export interface CompiledConfiguration {
  readonly currency: string;
  readonly ranks: readonly CompiledRank[];
  readonly groups: ReadonlyArray<{ readonly id: string; readonly condition: CompiledCondition | null }>;
  readonly ruleCount: number;
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
  const conditionContext = { issues, currency, ruleIds };
  const actionContext = { issues, currency, rounding: config.rounding };
  const buckets: CompiledRule[][] = config.ranks.map(() => []);
  const groups = config.groups.map((group, g) => {
    const condition = group.condition ? compileCondition(group.condition, `groups[${g}].condition`, conditionContext) : null;
    group.rules.forEach((rule, r) => {
      const compiled = compileRule(rule, `groups[${g}].rules[${r}]`, group.id, g, conditionContext, actionContext);
      const rank = rankIndex.get(rule.rankID);
      if (compiled && rank !== undefined) buckets[rank]!.push(compiled);
    });
    return { id: group.id, condition: condition ?? null };
  });

  const ranks = config.ranks.map((rank, i): CompiledRank => ({ id: rank.id, mode: rank.evaluationMode, rules: buckets[i]! }));
  return { compiled: { currency, ranks, groups, ruleCount: ruleIds.size }, issues: issues.list };
}

function compileRule(
  rule: Rule,
  path: string,
  groupID: string,
  groupIndex: number,
  conditionContext: Parameters<typeof compileCondition>[2],
  actionContext: Parameters<typeof compileAction>[3],
): CompiledRule | undefined {
  const condition = rule.condition ? compileCondition(rule.condition, `${path}.condition`, conditionContext) : null;
  const redeems: Redeem[] = [];
  const effects: Effect[] = [];
  rule.actions.forEach((action, a) => {
    const compiled = compileAction(action, `${path}.actions[${a}]`, rule.id, actionContext);
    if (compiled?.kind === 'redeem') redeems.push(compiled.redeem);
    else if (compiled?.kind === 'effect') effects.push(compiled.effect);
  });
  if (condition === undefined) return undefined;
  return { id: rule.id, rankID: rule.rankID, groupID, groupIndex, condition, redeems, effects };
}
