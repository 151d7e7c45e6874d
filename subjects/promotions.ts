import { z } from 'zod';
import { ProjectId } from './common.js';
import { endpoint } from './contract.js';

/**
 * Promotion configurations (the spec's "Promotion configuration"): ranks, groups of rules, each rule
 * a condition and actions, and the rounding of discounts. The shapes here are structural; what the
 * types and arguments mean, and whether a configuration could be applied, is checked by the engine
 * (src/domain/promotions/compile.ts), which names the exact path of every problem.
 */

/** Argument values are strings (money and percentages as decimal text, lists comma-separated). */
const Args = z
  .record(z.string().min(1).max(100), z.string().max(200_000))
  .describe('Arguments by name; every value is a string (decimal text, "true"/"false", comma-separated lists, RFC 3339 times)');

export interface Condition {
  type: string;
  args?: Record<string, string> | undefined;
  children?: Condition[] | undefined;
}

export const Condition: z.ZodType<Condition> = z
  .object({
    type: z.string().min(1).max(100).describe('and, or, isCurrentlyActive, hasSKU, amountGreaterOrEqual, totalGreaterThanOrEqual, hasExternalShopID, hasCouponCode, isReferredToByCoupon, isExclusiveForLineItem, grantedDiscountGreaterThanOrEqual'),
    args: Args.optional(),
    get children() {
      return z.array(Condition).max(1000).optional().describe('The conditions an and / or combines');
    },
  })
  .meta({ id: 'PromotionCondition' });

export const Action = z
  .object({
    type: z.string().min(1).max(100).describe('addLineItemDiscount, addCartDiscount, redeemCouponCode, modifyPrice, redeemReferringCoupon, addForceControl'),
    args: Args.optional(),
  })
  .meta({ id: 'PromotionAction' });
export type Action = z.infer<typeof Action>;

const Id = z.string().min(1).max(200);

export const Rule = z
  .object({
    id: Id.describe('Unique within the configuration'),
    rankID: Id.describe('One of the ranks'),
    condition: Condition.optional().describe('Absent: the rule always holds'),
    actions: z.array(Action).max(100),
  })
  .meta({ id: 'PromotionRule' });
export type Rule = z.infer<typeof Rule>;

export const Group = z
  .object({
    id: Id,
    condition: Condition.optional().describe('A group whose condition does not hold is skipped whole'),
    rules: z.array(Rule).max(5000),
  })
  .meta({ id: 'PromotionGroup' });
export type Group = z.infer<typeof Group>;

export const EvaluationModes = ['applyAll', 'selectBest'] as const;
export const Rank = z
  .object({
    id: Id,
    evaluationMode: z.enum(EvaluationModes).describe('applyAll: every rule whose condition holds; selectBest: only the one granting most'),
  })
  .meta({ id: 'PromotionRank' });
export type Rank = z.infer<typeof Rank>;

export const RoundingModes = ['up', 'down', 'halfUp', 'halfEven'] as const;
export const Rounding = z
  .object({
    mode: z.enum(RoundingModes).describe('How discount amounts are rounded; up favours the customer (a larger discount)'),
    precision: z.int().min(0).max(6).describe('Round to multiples of 10^precision subunits (0: the subunit)'),
  })
  .meta({ id: 'PromotionRounding' });
export type Rounding = z.infer<typeof Rounding>;

export const DefaultRounding: Rounding = { mode: 'halfUp', precision: 0 };

export const ConfigurationId = z.int().min(0).max(2_147_483_647);

/** A configuration as clients send it; `projectID` and `active` are the platform's and are ignored. */
export const ConfigurationInput = z
  .object({
    id: ConfigurationId.optional().describe('The client\'s id, or the next free one of the project'),
    projectID: z.string().optional().describe('Ignored: the path names the project'),
    active: z.boolean().optional().describe('Ignored: a configuration becomes active through activate'),
    rounding: Rounding.default(DefaultRounding).describe('Default: halfUp to the subunit'),
    ranks: z.array(Rank).max(100),
    groups: z.array(Group).max(1000),
  })
  .meta({ id: 'PromotionConfigurationBody' });
export type ConfigurationInput = z.output<typeof ConfigurationInput>;

/** What the engine compiles: the parts of a configuration that decide discounts. */
export type ConfigurationBody = Pick<ConfigurationInput, 'rounding' | 'ranks' | 'groups'>;

export const Configuration = z
  .object({
    id: ConfigurationId,
    projectID: z.string(),
    active: z.boolean().describe('Only one configuration of a project is active'),
    rounding: Rounding,
    ranks: z.array(Rank),
    groups: z.array(Group),
  })
  .meta({ id: 'PromotionConfiguration' });
export type Configuration = z.infer<typeof Configuration>;

export const ConfigurationList = z.object({ configurations: z.array(Configuration) }).meta({ id: 'PromotionConfigurationList' });

/** Promotion line items (type `promotion`) and modified line items carry these besides a LineItem's fields. */
export const PriceModifier = z
  .object({
    name: z.string(),
    method: z.literal('promotion'),
    action: z.literal('modify'),
    price: z.int().describe('The unit price after the modification'),
    percentage: z.number().optional().describe('The percentage taken off, for a percentage modification'),
    ruleID: z.string(),
  })
  .meta({ id: 'PriceModifier' });
export type PriceModifier = z.infer<typeof PriceModifier>;

export const PromotionLineFields = {
  discountID: z.string().optional().describe('The discount: `<configuration id>/<rule id>` of the rule that granted it'),
  discountRuleID: z.string().optional().describe('The promotion rule that granted this discount'),
  couponID: z.string().optional().describe('The coupon the rule redeemed'),
  discountType: z.enum(['absolute', 'percentage']).optional(),
  discountValue: z.int().optional().describe('The discount of this line, in subunits (positive)'),
  discountPercentage: z.number().optional().describe('The percentage of a percentage discount'),
  priceModifiers: z.array(PriceModifier).optional().describe('Price changes of promotion rules (modifyPrice)'),
};

// ---- events

export const PromotionEvents = ['created', 'updated', 'activated'] as const;
export type PromotionEventName = (typeof PromotionEvents)[number];

export const PromotionEvent = z
  .object({
    project: z.string(),
    id: ConfigurationId.describe('The configuration id'),
    version: z.int().describe('Counts the changes of the configuration\'s content (1 when created)'),
    at: z.iso.datetime(),
    event: z.enum(PromotionEvents),
    previousActiveID: ConfigurationId.nullable().optional().describe('activated: the configuration that was active before (null: none)'),
    configuration: Configuration,
  })
  .meta({ id: 'PromotionEvent' });
export type PromotionEvent = z.infer<typeof PromotionEvent>;

// ---- endpoints

const ConfigRef = z.object({ project: ProjectId, id: ConfigurationId });

export const promotions = {
  /** A page of the list in id order after `after`, as JSON texts (a list of any size travels in parts). */
  list: endpoint(
    'svc.promotions.list',
    z.object({ project: ProjectId, after: ConfigurationId.optional(), maxBytes: z.int().min(1024) }),
    z.object({ configurations: z.array(z.string()), next: ConfigurationId.nullable() }),
    { repeatable: true },
  ),
  get: endpoint('svc.promotions.get', ConfigRef, Configuration, { repeatable: true }),
  active: endpoint('svc.promotions.active', z.object({ project: ProjectId }), Configuration, { repeatable: true }),
  create: endpoint('svc.promotions.create', z.object({ project: ProjectId, configuration: ConfigurationInput }), Configuration),
  update: endpoint('svc.promotions.update', ConfigRef.extend({ configuration: ConfigurationInput }), Configuration),
  activate: endpoint('svc.promotions.activate', ConfigRef, Configuration),
};
