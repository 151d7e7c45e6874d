import fc from 'fast-check';
import t from 'tap';
import { applyPromotions, compileConfiguration, type CartCoupon, type CheckoutLine, type PromotionCart, type PromotionResult } from '../src/domain/promotions/index.js';
import { indexed } from '../src/domain/promotions/compile.js';
import { roundDiscount, splitProportionally } from '../src/domain/promotions/rounding.js';
import { initialState } from '../src/domain/promotions/state.js';
import { taxIncluded } from '../src/domain/tax.js';
import type { Action, Condition, ConfigurationBody, Group, Rounding, Rule } from '../subjects/promotions.js';
import { At, line } from './support/promotions.js';

/**
 * Random carts under random configurations: whatever the rules, a discount never raises the total
 * nor takes a line, a rate or the cart below zero; the answer adds up (Σ line totals = price, tax +
 * net = gross per rate); selectBest never grants less than any one of its rules would alone; and the
 * engine answers the same for the same input.
 */
const Skus = ['A', 'B', 'C', 'D'];
const Codes = ['SAVE', 'WINTER'];
const CouponIds = ['k1', 'k2'];
const runs = Number(process.env.PROPERTY_RUNS ?? 400);

const lineSpec = fc.record({
  sku: fc.constantFrom(...Skus),
  amount: fc.integer({ min: 1, max: 5 }),
  unit: fc.integer({ min: 0, max: 5000 }),
  rate: fc.constantFrom('19', '7', '0', '5.5'),
  deposit: fc.boolean(),
  notDiscountable: fc.boolean(),
  weighed: fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }),
});

const couponSpec = fc.record({
  id: fc.constantFrom(...CouponIds),
  code: fc.option(fc.constantFrom(...Codes), { nil: undefined }),
  refersTo: fc.option(fc.integer({ min: 0, max: 7 }), { nil: undefined }),
});

const cartArb = fc
  .record({ lines: fc.array(lineSpec, { minLength: 1, maxLength: 8 }), coupons: fc.array(couponSpec, { maxLength: 3 }), shop: fc.constantFrom('S1', 'S2') })
  .map(({ lines, coupons, shop }): PromotionCart => {
    const items: CheckoutLine[] = [];
    lines.forEach((l, i) => {
      const more: Partial<CheckoutLine> = l.notDiscountable ? { isDiscountable: false } : {};
      // A weighed line: price per kg, the total from the weight (not a multiple of the price).
      if (l.weighed) items.push(line(`l${i}`, l.sku, 1, l.unit, l.rate, { ...more, weight: l.weighed, weightUnit: 'g', referenceUnit: 'kg', totalPrice: Math.round((l.unit * l.weighed) / 1000) }));
      else items.push(line(`l${i}`, l.sku, l.amount, l.unit, l.rate, more));
      if (l.deposit) items.push(line(`l${i}-deposit`, 'PFAND', l.amount, 25, '19', { type: 'deposit', refersTo: `l${i}` }));
    });
    const cartCoupons: CartCoupon[] = coupons.map((k, i) => ({
      id: k.id,
      lineItemId: `coupon-${i}`,
      ...(k.code ? { code: k.code } : {}),
      ...(k.refersTo !== undefined && k.refersTo < lines.length ? { refersTo: `l${k.refersTo}` } : {}),
    }));
    return { lineItems: items, shopExternalId: shop, coupons: cartCoupons, at: At, currency: 'EUR' };
  });

const money = fc.integer({ min: 0, max: 6000 }).map((c) => (c / 100).toFixed(c % 3 === 0 ? 0 : 2).replace(/\.00$/, ''));
const percent = fc.oneof(fc.integer({ min: 0, max: 100 }).map(String), fc.integer({ min: 0, max: 10000 }).map((p) => (p / 100).toString()));

const leaf: fc.Arbitrary<Condition> = fc.oneof(
  fc.constantFrom(...Skus).map((s): Condition => ({ type: 'hasSKU', args: { equals: s } })),
  fc.subarray(Skus, { minLength: 1 }).map((s): Condition => ({ type: 'hasSKU', args: { oneOf: s.join(',') } })),
  fc.integer({ min: 0, max: 6 }).map((v): Condition => ({ type: 'amountGreaterOrEqual', args: { value: String(v) } })),
  money.map((v): Condition => ({ type: 'totalGreaterThanOrEqual', args: { value: v } })),
  fc.constantFrom('S1', 'S2', 'S1,S2').map((v): Condition => ({ type: 'hasExternalShopID', args: { oneOf: v } })),
  fc.constantFrom(...Codes).map((v): Condition => ({ type: 'hasCouponCode', args: { equals: v } })),
  fc.constantFrom(...CouponIds).map((v): Condition => ({ type: 'isReferredToByCoupon', args: { equals: v } })),
  fc.constant<Condition>({ type: 'isExclusiveForLineItem' }),
  fc.constantFrom<Condition>({ type: 'isCurrentlyActive', args: { from: '2026-01-01T00:00:00Z' } }, { type: 'isCurrentlyActive', args: { to: '2026-01-01T00:00:00Z' } }),
  money.map((v): Condition => ({ type: 'grantedDiscountGreaterThanOrEqual', args: { ruleIDs: 'r0', value: v } })),
);

const { condition } = fc.letrec<{ condition: Condition }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ type: fc.constantFrom('and', 'or'), children: fc.array(tie('condition'), { minLength: 1, maxLength: 3 }) }),
  ),
}));

const bool = fc.constantFrom('true', 'false');
const action: fc.Arbitrary<Action> = fc.oneof(
  fc
    .record({ absolute: bool, money, percent, required: fc.integer({ min: 1, max: 3 }), fewer: fc.integer({ min: 0, max: 2 }), multi: bool })
    .map((a): Action => ({
      type: 'addLineItemDiscount',
      args: { absolute: a.absolute, value: a.absolute === 'true' ? a.money : a.percent, requiredAmount: String(a.required), amount: String(Math.max(1, a.required - a.fewer)), isMultiusable: a.multi },
    })),
  fc.record({ absolute: bool, money, percent }).map((a): Action => ({ type: 'addCartDiscount', args: { absolute: a.absolute, value: a.absolute === 'true' ? a.money : a.percent } })),
  fc.record({ absolute: bool, money, percent, multi: bool }).map((a): Action => ({ type: 'modifyPrice', args: { absolute: a.absolute, value: a.absolute === 'true' ? a.money : a.percent, isMultiusable: a.multi } })),
  fc.constantFrom(...Codes).map((code): Action => ({ type: 'redeemCouponCode', args: { code } })),
  fc.constantFrom(...CouponIds).map((id): Action => ({ type: 'redeemReferringCoupon', args: { id } })),
  fc.constant<Action>({ type: 'addForceControl' }),
);

const ruleSpec = fc.record({ rank: fc.integer({ min: 0, max: 2 }), condition: fc.option(condition, { nil: undefined }), actions: fc.array(action, { minLength: 1, maxLength: 3 }) });
const groupSpec = fc.record({ condition: fc.option(leaf, { nil: undefined, freq: 3 }), rules: fc.array(ruleSpec, { minLength: 1, maxLength: 5 }) });

const configArb = fc
  .record({
    rounding: fc.record({ mode: fc.constantFrom('up', 'down', 'halfUp', 'halfEven'), precision: fc.integer({ min: 0, max: 2 }) }),
    modes: fc.array(fc.constantFrom('applyAll', 'selectBest'), { minLength: 3, maxLength: 3 }),
    groups: fc.array(groupSpec, { minLength: 1, maxLength: 3 }),
  })
  .map(({ rounding, modes, groups }): ConfigurationBody => {
    let n = 0;
    return {
      rounding,
      ranks: modes.map((evaluationMode, i) => ({ id: `rank${i}`, evaluationMode })),
      groups: groups.map(
        (g, gi): Group => ({
          id: `g${gi}`,
          ...(g.condition ? { condition: g.condition } : {}),
          rules: g.rules.map((r): Rule => ({ id: `r${n++}`, rankID: `rank${r.rank}`, ...(r.condition ? { condition: r.condition } : {}), actions: r.actions })),
        }),
      ),
    };
  });

const apply = (config: ConfigurationBody, cart: PromotionCart): PromotionResult => applyPromotions(cart, compileConfiguration(config, 'EUR'), { explain: true });
const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

t.test('a discount never raises the total and never takes a line, a rate or the cart below zero', async (t) => {
  const seen = { discounted: 0, lineDiscount: 0, cartDiscount: 0, modified: 0, redeemed: 0, notBest: 0 };
  fc.assert(
    fc.property(cartArb, configArb, (cart, config) => {
      const result = apply(config, cart);
      if (result.totalDiscount > 0) seen.discounted++;
      if (result.lineItems.some((l) => l.type === 'promotion' && l.refersTo !== null)) seen.lineDiscount++;
      if (result.lineItems.some((l) => l.type === 'promotion' && l.refersTo === null)) seen.cartDiscount++;
      if (result.lineItems.some((l) => l.priceModifiers)) seen.modified++;
      if (result.redeemedCouponIds.length) seen.redeemed++;
      if (result.explanation.some((e) => e.skippedReason === 'not_best')) seen.notBest++;
      const before = sum(cart.lineItems.map((l) => l.totalPrice));
      if (result.price.price > before) throw new Error(`the total rose from ${before} to ${result.price.price}`);
      if (result.price.price < 0) throw new Error(`the total is ${result.price.price}`);
      for (const [rate, gross] of Object.entries(result.price.taxPre)) if (gross < 0) throw new Error(`rate ${rate} is at ${gross}`);
      const byId = new Map(cart.lineItems.map((l) => [l.id, l]));
      for (const l of result.lineItems) {
        if (l.type === 'promotion') {
          if (l.totalPrice >= 0) throw new Error(`promotion line ${l.id} is not negative`);
          if (l.amount * l.price !== l.totalPrice) throw new Error(`promotion line ${l.id}: ${l.amount} × ${l.price} ≠ ${l.totalPrice}`);
          continue;
        }
        const original = byId.get(l.id)!;
        if (l.totalPrice > original.totalPrice || l.price > original.price) throw new Error(`line ${l.id} became dearer`);
        const withPromotions = l.totalPrice + sum(result.lineItems.filter((p) => p.refersTo === l.id && p.type === 'promotion').map((p) => p.totalPrice));
        if (withPromotions < 0) throw new Error(`line ${l.id} with its discounts is at ${withPromotions}`);
        if (original.type !== 'default' || original.isDiscountable === false || original.totalPrice <= 0) {
          if (l.totalPrice !== original.totalPrice || withPromotions !== original.totalPrice) throw new Error(`line ${l.id} was not discountable`);
        }
      }
      if (result.totalDiscount !== before - result.price.price) throw new Error('totalDiscount is not the difference');
      if (sum(result.explanation.map((e) => e.granted)) !== result.totalDiscount) throw new Error('the rules\' grants do not add up to the discount');
    }),
    { numRuns: runs },
  );
  // The generators must reach every kind of discount, or the property proves little.
  for (const [what, n] of Object.entries(seen)) t.ok(n > runs / 40, `${what}: ${n} of ${runs} runs`);
});

t.test('the answer adds up: Σ line totals = price, tax + net = gross per rate, net + Σ tax = price', async (t) => {
  fc.assert(
    fc.property(cartArb, configArb, (cart, config) => {
      const { price, lineItems } = apply(config, cart);
      if (sum(lineItems.map((l) => l.totalPrice)) !== price.price) throw new Error('Σ line totals ≠ price');
      for (const rate of Object.keys(price.taxPre)) {
        const gross = sum(lineItems.filter((l) => l.taxRate === rate).map((l) => l.totalPrice));
        if (price.taxPre[rate] !== gross) throw new Error(`taxPre[${rate}] is not its lines' sum`);
        if (price.tax[rate]! + price.taxNet[rate]! !== gross) throw new Error(`tax + net ≠ gross at ${rate}`);
        if (price.tax[rate] !== taxIncluded(gross, rate)) throw new Error(`tax at ${rate} is not computed from its gross sum`);
      }
      if (price.netPrice + sum(Object.values(price.tax)) !== price.price) throw new Error('net + Σ tax ≠ price');
    }),
    { numRuns: runs },
  );
  t.pass();
});

t.test('promotion lines follow the line they discount; cart discounts come last', async (t) => {
  fc.assert(
    fc.property(cartArb, configArb, (cart, config) => {
      const { lineItems } = apply(config, cart);
      const ids = lineItems.map((l) => l.id);
      if (new Set(ids).size !== ids.length) throw new Error('line item ids repeat');
      let current: string | undefined;
      let cartPart = false;
      for (const l of lineItems) {
        if (l.type !== 'promotion') {
          if (cartPart) throw new Error('a line after the cart discounts');
          current = l.id;
        } else if (l.refersTo === null) {
          cartPart = true;
        } else if (l.refersTo !== current || cartPart) {
          throw new Error(`${l.id} does not follow ${l.refersTo}`);
        }
      }
      if (lineItems.filter((l) => l.type !== 'promotion').map((l) => l.id).join() !== cart.lineItems.map((l) => l.id).join()) throw new Error('the cart lines changed order');
    }),
    { numRuns: runs },
  );
  t.pass();
});

/** Every rule in one selectBest rank. */
const single = configArb.map((config): ConfigurationBody => ({
  ...config,
  ranks: [{ id: 'best', evaluationMode: 'selectBest' }],
  groups: config.groups.map((g) => ({ ...g, rules: g.rules.map((r) => ({ ...r, rankID: 'best' })) })),
}));

t.test('selectBest never grants less than any single rule of its rank would alone', async (t) => {
  fc.assert(
    fc.property(cartArb, single, (cart, config) => {
      const best = apply(config, cart).totalDiscount;
      for (const group of config.groups) {
        for (const rule of group.rules) {
          // Rules and groups may name r0 (grantedDiscountGreaterThanOrEqual): it stays, but never holds.
          const onlyRule: ConfigurationBody = {
            ...config,
            groups: config.groups.map((g) => ({
              ...g,
              rules: g.rules.filter((r) => r === rule || r.id === 'r0').map((r) => (r === rule ? r : { ...r, condition: { type: 'hasSKU', args: { equals: 'NONE' } } })),
            })),
          };
          const granted = apply(onlyRule, cart).totalDiscount;
          if (granted > best) throw new Error(`rule ${rule.id} alone grants ${granted}, selectBest granted ${best}`);
        }
      }
    }),
    { numRuns: Math.ceil(runs / 2) },
  );
  t.pass();
});

t.test('the same cart and configuration give the same answer, explained or not, and the input is not changed', async (t) => {
  fc.assert(
    fc.property(cartArb, configArb, (cart, config) => {
      const copy = structuredClone(cart);
      const compiled = compileConfiguration(config, 'EUR');
      const first = applyPromotions(cart, compiled, { explain: true });
      const second = applyPromotions(cart, compiled, { explain: true });
      const recompiled = applyPromotions(cart, compileConfiguration(structuredClone(config), 'EUR'), { explain: true });
      if (JSON.stringify(first) !== JSON.stringify(second) || JSON.stringify(first) !== JSON.stringify(recompiled)) throw new Error('two answers');
      // The checkout info's path asks for no explanation: everything else is the same.
      const unexplained = applyPromotions(cart, compiled);
      if (unexplained.explanation.length || JSON.stringify({ ...first, explanation: [] }) !== JSON.stringify(unexplained)) throw new Error('explaining changed the answer');
      if (JSON.stringify(cart) !== JSON.stringify(copy)) throw new Error('the cart changed');
    }),
    { numRuns: runs },
  );
  t.pass();
});

t.test('selectBest skips only candidates that cannot win: the same answer as when every one is tried', async (t) => {
  let skipped = 0;
  fc.assert(
    fc.property(cartArb, single, (cart, config) => {
      const compiled = compileConfiguration(config, 'EUR');
      // Explained, every candidate is tried (its explanation says what it would grant).
      const everyOne = applyPromotions(cart, compiled, { explain: true });
      const answer = applyPromotions(cart, compiled);
      if (JSON.stringify({ ...everyOne, explanation: [] }) !== JSON.stringify(answer)) throw new Error('skipping a candidate changed the answer');
      const best = Math.max(0, ...everyOne.explanation.map((e) => e.granted));
      skipped += everyOne.explanation.filter((e) => e.skippedReason === 'not_best' && (e.wouldGrant ?? 0) < best).length;
    }),
    { numRuns: runs },
  );
  // The property is only worth something when candidates that lose are many.
  t.ok(skipped > runs / 4, `${skipped} losing candidates`);
});

t.test("a rule's bound is never less than what it grants, on its selection and on every line it might select", async (t) => {
  // Lines whose totals are not a multiple of their amounts (their units differ by a subunit), as after earlier discounts.
  const unevenCarts = fc.tuple(cartArb, fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 12, maxLength: 12 })).map(([cart, cuts]) => ({
    ...cart,
    lineItems: cart.lineItems.map((l, i) => (l.type === 'default' && l.amount > 1 && l.totalPrice > cuts[i]! ? { ...l, totalPrice: l.totalPrice - cuts[i]! } : l)),
  }));
  let granting = 0;
  fc.assert(
    fc.property(unevenCarts, configArb, (cart, config) => {
      for (const group of config.groups) {
        for (const rule of group.rules) {
          // The rule alone applies (the others, which its condition may name, never hold): it sees the cart as it came.
          const alone: ConfigurationBody = {
            ...config,
            ranks: [{ id: 'only', evaluationMode: 'applyAll' }],
            groups: [{ id: 'g', rules: config.groups.flatMap((g) => g.rules).map((r) => (r === rule ? { ...r, rankID: 'only' } : { ...r, rankID: 'only', condition: { type: 'hasSKU', args: { equals: 'NONE' } } })) }],
          };
          const compiled = compileConfiguration(alone, 'EUR');
          const granted = applyPromotions(cart, compiled).totalDiscount;
          const compiledRule = compiled.ranks[0]!.rules.find((r) => r.id === rule.id)!;
          const s = initialState(cart, compiled);
          const selection = compiledRule.condition === null ? s.facts.discountable : compiledRule.condition(s, s.facts.discountable);
          if (!selection) continue;
          const candidates = compiledRule.neededSkuLines === null ? s.facts.discountable : s.facts.skuMatches[compiledRule.neededSkuLines]!;
          if (compiledRule.bound(s, selection) < granted) throw new Error(`rule ${rule.id} grants ${granted}, above its bound ${compiledRule.bound(s, selection)}`);
          if (compiledRule.bound(s, candidates) < compiledRule.bound(s, selection)) throw new Error(`rule ${rule.id}: the bound on the lines it might select is below the bound on its selection`);
          if (granted > 0) granting++;
        }
      }
    }),
    { numRuns: runs },
  );
  t.ok(granting > runs, `${granting} rules that granted something`);
});

t.test('a rule skipped for SKUs its cart lacks is one whose condition does not hold', async (t) => {
  fc.assert(
    fc.property(cartArb, configArb, (cart, config) => {
      const compiled = compileConfiguration(config, 'EUR');
      // The same configuration with every rule evaluated (none needs a SKU, so the index has every rule a candidate).
      const evaluated = { ...compiled, ranks: compiled.ranks.map((rank) => ({ ...rank, ...indexed(rank.rules.map((rule) => ({ ...rule, neededSkuLines: null }))) })) };
      if (JSON.stringify(applyPromotions(cart, compiled, { explain: true })) !== JSON.stringify(applyPromotions(cart, evaluated, { explain: true }))) throw new Error('skipping changed the answer');
    }),
    { numRuns: runs },
  );
  t.pass();
});

t.test('discounts computed in doubles are those computed in BigInt', async (t) => {
  const modes = fc.constantFrom<Rounding['mode']>('up', 'down', 'halfUp', 'halfEven');
  fc.assert(
    fc.property(fc.maxSafeNat(), fc.integer({ min: 1, max: 100_000_000 }), modes, fc.integer({ min: 0, max: 4 }), (numerator, denominator, mode, precision) => {
      const rounding = { mode, precision };
      return roundDiscount(numerator, denominator, rounding) === roundDiscount(BigInt(numerator), denominator, rounding);
    }),
    { numRuns: 3000 },
  );
  // Largest remainder in BigInt, as the shares were split before doubles.
  const reference = (total: number, weights: number[]): number[] => {
    const sum = BigInt(weights.reduce((a, w) => a + w, 0));
    if (sum <= 0n || total <= 0) return weights.map(() => 0);
    const parts = weights.map((w, i) => ({ i, share: Number((BigInt(total) * BigInt(w)) / sum), r: (BigInt(total) * BigInt(w)) % sum }));
    const shares = parts.map((p) => p.share);
    let left = total - shares.reduce((a, x) => a + x, 0);
    for (const { i } of [...parts].sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1))) if (left-- > 0) shares[i]! += 1;
    return shares;
  };
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.maxSafeNat()), fc.array(fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 2 ** 40 })), { maxLength: 5 }), (total, weights) => {
      const shares = splitProportionally(total, weights);
      return JSON.stringify(shares) === JSON.stringify(reference(total, weights));
    }),
    { numRuns: 3000 },
  );
  t.pass();
});
