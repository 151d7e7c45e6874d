/**
 * The promotion engine (pure, no I/O): compile a configuration once, apply it to any number of carts.
 *
 *   const compiled = compileConfiguration(configuration, currency);   // throws PromotionConfigurationError
 *   const result = applyPromotions(cart, compiled);                   // { explain: true }: what each rule did
 */
export { applyPromotions, type ApplyOptions } from './engine.js';
export { compileConfiguration, validateConfiguration, PromotionConfigurationError } from './compile.js';
export type { CompiledConfiguration } from './compile.js';
export type { ConfigIssue } from './args.js';
export { CompiledConfigurations } from './cache.js';
export { ConditionTypes } from './conditions.js';
export { ActionTypes } from './actions.js';
export type { CartCoupon, CheckoutLine, PriceModifier, PromotionCart, PromotionLineItem, PromotionResult, RuleExplanation, SkipReason } from './types.js';
