import t from 'tap';
import { applyPromotions, CompiledConfigurations, compileConfiguration, PromotionConfigurationError, type CheckoutLine, type PromotionCart, type PromotionResult } from '../src/domain/promotions/index.js';
import type { Action, Condition, ConfigurationBody, Rounding } from '../subjects/promotions.js';
import { cart, configuration, coupon, discounts, line, rule } from './support/promotions.js';

/**
 * The promotion engine by example: a table per condition and per action, ranks, groups, coupons and
 * rounding, each against the same small cart (design.md "Coupons and promotions").
 *
 * The cart: 2 coffees at 3.00 (19 %), a milk at 1.20 (7 %) with a 0.25 deposit (19 %), 3 breads at
 * 2.50 (7 %). Discountable total 14.70: 6.00 at 19 %, 8.70 at 7 % (deposits are never discounted).
 */
const lines: CheckoutLine[] = [
  line('c', 'COFFEE', 2, 300, '19'),
  line('m', 'MILK', 1, 120, '7'),
  line('m-deposit', 'PFAND', 1, 25, '19', { type: 'deposit', refersTo: 'm' }),
  line('b', 'BREAD', 3, 250, '7'),
];
const base = cart(lines);

function apply(config: ConfigurationBody, c: PromotionCart = base): PromotionResult {
  return applyPromotions(c, compileConfiguration(config, 'EUR'), { explain: true });
}

/** 0.10 off every selected unit. */
const tenCentsEach: Action = { type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.10', isMultiusable: 'true' } };
const sku = (s: string): Condition => ({ type: 'hasSKU', args: { equals: s } });

t.test('conditions: each selects the lines a rule acts on, or does not hold', async (t) => {
  const all: Array<[string | null, number]> = [['c', -20], ['m', -10], ['b', -30]];
  const rows: Array<{ name: string; condition?: Condition; cart?: PromotionCart; expect: Array<[string | null, number]> }> = [
    { name: 'no condition: every discountable line', expect: all },
    { name: 'hasSKU equals', condition: sku('COFFEE'), expect: [['c', -20]] },
    { name: 'hasSKU oneOf', condition: { type: 'hasSKU', args: { oneOf: 'MILK, BREAD' } }, expect: [['m', -10], ['b', -30]] },
    { name: 'hasSKU of no line does not hold', condition: sku('TEA'), expect: [] },
    { name: 'hasSKU never selects a deposit', condition: sku('PFAND'), expect: [] },
    { name: 'amountGreaterOrEqual reached by the selection', condition: { type: 'and', children: [sku('COFFEE'), { type: 'amountGreaterOrEqual', args: { value: '2' } }] }, expect: [['c', -20]] },
    { name: 'amountGreaterOrEqual not reached', condition: { type: 'and', children: [sku('COFFEE'), { type: 'amountGreaterOrEqual', args: { value: '3' } }] }, expect: [] },
    { name: 'amountGreaterOrEqual counts every selected line', condition: { type: 'amountGreaterOrEqual', args: { value: '6' } }, expect: all },
    { name: 'or: the union of the holding children', condition: { type: 'or', children: [sku('COFFEE'), sku('TEA'), sku('MILK')] }, expect: [['c', -20], ['m', -10]] },
    { name: 'or with no child holding', condition: { type: 'or', children: [sku('TEA'), sku('SUGAR')] }, expect: [] },
    { name: 'and: every child must hold', condition: { type: 'and', children: [sku('COFFEE'), sku('MILK')] }, expect: [] },
    { name: 'totalGreaterThanOrEqual at the total', condition: { type: 'totalGreaterThanOrEqual', args: { value: '14.70' } }, expect: all },
    { name: 'totalGreaterThanOrEqual above the total (deposits do not count)', condition: { type: 'totalGreaterThanOrEqual', args: { value: '14.71' } }, expect: [] },
    { name: 'hasExternalShopID in the list', condition: { type: 'hasExternalShopID', args: { oneOf: 'S0,S1' } }, expect: all },
    { name: 'hasExternalShopID not in the list', condition: { type: 'hasExternalShopID', args: { oneOf: 'S2' } }, expect: [] },
    { name: 'isCurrentlyActive from is inclusive', condition: { type: 'isCurrentlyActive', args: { from: '2026-11-22T13:00:00+01:00' } }, expect: all },
    { name: 'isCurrentlyActive to is exclusive', condition: { type: 'isCurrentlyActive', args: { from: '2026-11-01T00:00:00Z', to: '2026-11-22T12:00:00Z' } }, expect: [] },
    { name: 'isCurrentlyActive before it starts', condition: { type: 'isCurrentlyActive', args: { from: '2026-11-22T12:00:00.001Z' } }, expect: [] },
    { name: 'hasCouponCode with the code in the cart', condition: { type: 'hasCouponCode', args: { equals: 'SAVE' } }, cart: cart(lines, { coupons: [coupon('k1', { code: 'SAVE' })] }), expect: all },
    { name: 'hasCouponCode matches a scanned code', condition: { type: 'hasCouponCode', args: { equals: '999123' } }, cart: cart(lines, { coupons: [coupon('k1', { scannedCode: '999123' })] }), expect: all },
    { name: 'hasCouponCode without the coupon', condition: { type: 'hasCouponCode', args: { equals: 'SAVE' } }, cart: cart(lines, { coupons: [coupon('k1', { code: 'OTHER' })] }), expect: [] },
    { name: 'isReferredToByCoupon: the line the coupon refers to', condition: { type: 'isReferredToByCoupon', args: { equals: 'k1' } }, cart: cart(lines, { coupons: [coupon('k1', { refersTo: 'b' })] }), expect: [['b', -30]] },
    { name: 'isReferredToByCoupon: a coupon referring to nothing keeps the selection', condition: { type: 'isReferredToByCoupon', args: { equals: 'k1' } }, cart: cart(lines, { coupons: [coupon('k1')] }), expect: all },
    { name: 'isReferredToByCoupon without the coupon', condition: { type: 'isReferredToByCoupon', args: { equals: 'k1' } }, cart: cart(lines, { coupons: [coupon('k2', { refersTo: 'b' })] }), expect: [] },
    { name: 'isReferredToByCoupon narrows an earlier selection', condition: { type: 'and', children: [sku('COFFEE'), { type: 'isReferredToByCoupon', args: { equals: 'k1' } }] }, cart: cart(lines, { coupons: [coupon('k1', { refersTo: 'b' })] }), expect: [] },
    { name: 'isExclusiveForLineItem with nothing discounted before', condition: { type: 'isExclusiveForLineItem' }, expect: all },
  ];
  for (const row of rows) {
    const result = apply(configuration([rule('r1', row.condition, [tenCentsEach])]), row.cart);
    t.same(discounts(result), row.expect, row.name);
    t.equal(result.explanation[0]?.conditionHeld, row.expect.length > 0, `${row.name}: explained`);
  }
});

t.test('isExclusiveForLineItem leaves out lines an earlier rule discounted', async (t) => {
  const result = apply(
    configuration([
      rule('coffee', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '1', isMultiusable: 'true' } }]),
      rule('coffee-or-milk', { type: 'and', children: [{ type: 'hasSKU', args: { oneOf: 'COFFEE,MILK' } }, { type: 'isExclusiveForLineItem' }] }, [tenCentsEach]),
      rule('bread-price', sku('BREAD'), [{ type: 'modifyPrice', args: { absolute: 'true', value: '2' } }]),
      rule('the-rest', { type: 'isExclusiveForLineItem' }, [tenCentsEach]),
    ]),
  );
  t.same(discounts(result), [['c', -200], ['m', -10]], 'the second rule finds only the milk');
  t.same(
    result.explanation.map((e) => [e.ruleID, e.granted, e.skippedReason]),
    [
      ['coffee', 200, undefined],
      ['coffee-or-milk', 10, undefined],
      ['bread-price', 150, undefined],
      ['the-rest', 0, 'condition_failed'],
    ],
    'a price change counts as a discount too: nothing is left for the last rule',
  );
});

t.test('hasSKU after isExclusiveForLineItem picks its SKUs among the lines left', async (t) => {
  const milkFirst = rule('milk', sku('MILK'), [tenCentsEach]);
  const after = (id: string, skus: string) => rule(id, { type: 'and', children: [{ type: 'isExclusiveForLineItem' }, { type: 'hasSKU', args: { oneOf: skus } }] }, [tenCentsEach]);
  const rows: Array<[string, Array<[string | null, number]>]> = [
    ['COFFEE,MILK,BREAD', [['c', -20], ['m', -10], ['b', -30]]],
    ['COFFEE', [['c', -20], ['m', -10]]],
    ['BREAD,MILK', [['m', -10], ['b', -30]]],
    ['MILK', [['m', -10]]],
  ];
  for (const [skus, expected] of rows) {
    const result = apply(configuration([milkFirst, after('after', skus)]));
    t.same(discounts(result), expected, `hasSKU ${skus} once the milk is discounted`);
    t.equal(result.explanation[1]?.conditionHeld, skus !== 'MILK', `hasSKU ${skus}: explained`);
  }
});

t.test('grantedDiscountGreaterThanOrEqual sums what the named rules granted so far', async (t) => {
  const rules = (value: string) =>
    configuration([
      rule('coffee', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '1', isMultiusable: 'true' } }]),
      rule('milk', sku('MILK'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.20' } }]),
      rule('bonus', { type: 'grantedDiscountGreaterThanOrEqual', args: { ruleIDs: 'coffee,milk', value } }, [{ type: 'addForceControl' }]),
    ]);
  t.equal(apply(rules('2.20')).forceControl, true, 'holds at exactly what they granted (2.00 + 0.20)');
  t.equal(apply(rules('2.21')).forceControl, false, 'does not hold above it');
});

t.test('addLineItemDiscount: units, applications, cheapest first, absolute and percent', async (t) => {
  const many = cart([line('x', 'X', 1, 100), line('y', 'Y', 2, 300), line('z', 'Z', 5, 200, '7')]);
  const rows: Array<{ name: string; condition?: Condition; args: Record<string, string>; cart?: PromotionCart; expect: Array<[string | null, number]> }> = [
    { name: 'once by default: one unit', condition: sku('COFFEE'), args: { absolute: 'true', value: '1' }, expect: [['c', -100]] },
    { name: 'multi-usable: every unit', condition: sku('COFFEE'), args: { absolute: 'true', value: '1', isMultiusable: 'true' }, expect: [['c', -200]] },
    { name: '1 € off the second coffee', condition: sku('COFFEE'), args: { absolute: 'true', value: '1', requiredAmount: '2', amount: '1' }, expect: [['c', -100]] },
    { name: 'amount alone: requiredAmount follows it (2 of the 3 breads, once)', condition: sku('BREAD'), args: { absolute: 'true', value: '0.10', amount: '2' }, expect: [['b', -20]] },
    { name: 'requiredAmount not reached', condition: sku('MILK'), args: { absolute: 'true', value: '1', requiredAmount: '2', amount: '1' }, expect: [] },
    { name: 'multi-usable: as often as the units allow (5 Z, 2 per application)', condition: sku('Z'), args: { absolute: 'true', value: '0.50', requiredAmount: '2', amount: '1', isMultiusable: 'true' }, cart: many, expect: [['z', -100]] },
    { name: '3 for 2: the cheapest unit of the selection is free', condition: { type: 'hasSKU', args: { oneOf: 'X,Y' } }, args: { value: '100', requiredAmount: '3', amount: '1' }, cart: many, expect: [['x', -100]] },
    { name: 'cheapest first across lines (8 units, 2 applications of 2 → the 4 cheapest)', args: { value: '50', requiredAmount: '4', amount: '2', isMultiusable: 'true' }, cart: many, expect: [['x', -50], ['z', -300]] },
    { name: 'percent of the units\' worth', condition: sku('BREAD'), args: { value: '10', isMultiusable: 'true' }, expect: [['b', -75]] },
    { name: 'absolute never more than a unit is worth', condition: sku('MILK'), args: { absolute: 'true', value: '5' }, expect: [['m', -120]] },
    { name: '100 % of everything', args: { value: '100', isMultiusable: 'true' }, expect: [['c', -600], ['m', -120], ['b', -750]] },
  ];
  for (const row of rows) {
    const result = apply(configuration([rule('r1', row.condition, [{ type: 'addLineItemDiscount', args: row.args }])]), row.cart);
    t.same(discounts(result), row.expect, row.name);
  }
});

t.test('a promotion line refers to its line, follows it, and carries the rule and the discount', async (t) => {
  const result = apply(configuration([rule('coffee-deal', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.50', isMultiusable: 'true', name: 'Coffee week' } }])]));
  t.same(result.lineItems.map((l) => l.id), ['c', 'c-promotion-coffee-deal', 'm', 'm-deposit', 'b']);
  t.match(result.lineItems[1], {
    type: 'promotion',
    refersTo: 'c',
    sku: '',
    amount: 2,
    price: -50,
    totalPrice: -100,
    name: 'Coffee week',
    taxRate: '19',
    discountRuleID: 'coffee-deal',
    discountType: 'absolute',
    discountValue: 100,
  });
  t.same(result.price, { tax: { '19': 84, '7': 57 }, taxNet: { '19': 441, '7': 813 }, taxPre: { '19': 525, '7': 870 }, netPrice: 1254, price: 1395 });
  t.equal(result.totalDiscount, 100);
});

t.test('addCartDiscount: split over the tax rates by their gross sums, largest remainder', async (t) => {
  const rows: Array<{ name: string; args: Record<string, string>; expect: Array<[string | null, number]> }> = [
    { name: '1.00 → 40.8 % at 19, 59.2 % at 7: 41 and 59', args: { absolute: 'true', value: '1' }, expect: [[null, -41], [null, -59]] },
    { name: '10 % = 1.47 → 60 and 87', args: { value: '10' }, expect: [[null, -60], [null, -87]] },
    { name: 'more than the total: the whole discountable total, deposits stay', args: { absolute: 'true', value: '100' }, expect: [[null, -600], [null, -870]] },
  ];
  for (const row of rows) {
    const result = apply(configuration([rule('cart', undefined, [{ type: 'addCartDiscount', args: row.args }])]));
    t.same(discounts(result), row.expect, row.name);
    t.same(result.lineItems.slice(-2).map((l) => [l.id, l.taxRate]), [['cart-promotion-cart-19', '19'], ['cart-promotion-cart-7', '7']], `${row.name}: one line per rate, at the end`);
  }
  const all = apply(configuration([rule('cart', undefined, [{ type: 'addCartDiscount', args: { absolute: 'true', value: '100' } }])]));
  t.equal(all.price.price, 25, 'only the deposit is left to pay');
});

t.test('modifyPrice: a new unit price, a priceModifiers entry, the total follows', async (t) => {
  const rows: Array<{ name: string; condition?: Condition; args: Record<string, string>; expect: Array<[string, number, number]> }> = [
    { name: 'absolute: the new unit price of the first selected line', condition: { type: 'hasSKU', args: { oneOf: 'COFFEE,BREAD' } }, args: { absolute: 'true', value: '2' }, expect: [['c', 200, 400], ['b', 250, 750]] },
    { name: 'multi-usable: every selected line', condition: { type: 'hasSKU', args: { oneOf: 'COFFEE,BREAD' } }, args: { absolute: 'true', value: '2', isMultiusable: 'true' }, expect: [['c', 200, 400], ['b', 200, 600]] },
    { name: 'percent: the part taken off', condition: sku('BREAD'), args: { value: '10' }, expect: [['c', 300, 600], ['b', 225, 675]] },
    { name: 'a price above the current one changes nothing', condition: sku('BREAD'), args: { absolute: 'true', value: '5' }, expect: [['c', 300, 600], ['b', 250, 750]] },
  ];
  for (const row of rows) {
    const result = apply(configuration([rule('r1', row.condition, [{ type: 'modifyPrice', args: { ...row.args, name: 'Price cut' } }])]));
    const got = ['c', 'b'].map((id) => {
      const l = result.lineItems.find((x) => x.id === id)!;
      return [id, l.price, l.totalPrice];
    });
    t.same(got, row.expect, row.name);
    t.equal(result.lineItems.filter((l) => l.type === 'promotion').length, 0, `${row.name}: no promotion line`);
  }
  const cut = apply(configuration([rule('r1', sku('BREAD'), [{ type: 'modifyPrice', args: { value: '10', name: 'Price cut' } }])]));
  t.same(cut.lineItems.find((l) => l.id === 'b')?.priceModifiers, [{ name: 'Price cut', method: 'promotion', action: 'modify', price: 225, percentage: 10, ruleID: 'r1' }]);
  t.equal(cut.explanation[0]?.granted, 75);

  const weighed = cart([line('w', 'CHEESE', 1, 1999, '7', { weight: 250, weightUnit: 'g', referenceUnit: 'kg', totalPrice: 500 })]);
  const w = apply(configuration([rule('r1', undefined, [{ type: 'modifyPrice', args: { absolute: 'true', value: '15.99' } }])]), weighed);
  t.match(w.lineItems[0], { price: 1599, totalPrice: 400 }, 'a weighed line: the total scales with the price per kg (5.00 × 15.99 / 19.99 = 3.9995)');
});

t.test('coupons are redeemed through the actions, each once', async (t) => {
  const save = { type: 'redeemCouponCode', args: { code: 'SAVE' } };
  const cartOff = { type: 'addCartDiscount', args: { absolute: 'true', value: '1' } };
  const withCoupon = cart(lines, { coupons: [coupon('k1', { code: 'SAVE' })] });
  const redeemed = apply(configuration([rule('r1', { type: 'hasCouponCode', args: { equals: 'SAVE' } }, [cartOff, save])]), withCoupon);
  t.same(redeemed.redeemedCouponIds, ['k1']);
  t.same(redeemed.lineItems.filter((l) => l.type === 'promotion').map((l) => l.couponID), ['k1', 'k1'], 'the promotion lines name the coupon, whatever the order of the actions');

  const missing = apply(configuration([rule('r1', undefined, [cartOff, save])]));
  t.same(discounts(missing), [], 'without its coupon the rule does not apply');
  t.same(missing.explanation[0], { ruleID: 'r1', rankID: 'main', groupID: 'g', conditionHeld: true, granted: 0, skippedReason: 'coupon_missing' });

  const twice = apply(configuration([rule('r1', undefined, [cartOff, save]), rule('r2', undefined, [cartOff, save])]), withCoupon);
  t.same(twice.explanation.map((e) => e.skippedReason), [undefined, 'coupon_missing'], 'a coupon is redeemed once');
  const two = apply(configuration([rule('r1', undefined, [cartOff, save]), rule('r2', undefined, [cartOff, save])]), cart(lines, { coupons: [coupon('k1', { code: 'SAVE' }), coupon('k2', { scannedCode: 'SAVE' })] }));
  t.same(two.redeemedCouponIds, ['k1', 'k2'], 'two coupons with the code serve two rules');

  const referring = apply(
    configuration([rule('half', { type: 'isReferredToByCoupon', args: { equals: 'k9' } }, [{ type: 'redeemReferringCoupon', args: { id: 'k9' } }, { type: 'addLineItemDiscount', args: { value: '50' } }])]),
    cart(lines, { coupons: [coupon('k9', { refersTo: 'b' })] }),
  );
  t.same(discounts(referring), [['b', -125]], 'the coupon\'s line, one unit at 50 %');
  t.same(referring.redeemedCoupons, [coupon('k9', { refersTo: 'b' })]);
  t.equal(referring.lineItems.find((l) => l.type === 'promotion')?.couponID, 'k9');
});

t.test('addForceControl asks for a supervisor', async (t) => {
  t.equal(apply(configuration([rule('r1', sku('COFFEE'), [{ type: 'addForceControl' }])])).forceControl, true);
  t.equal(apply(configuration([rule('r1', sku('TEA'), [{ type: 'addForceControl' }])])).forceControl, false);
});

t.test('selectBest unexplained passes over only candidates that cannot win', async (t) => {
  // 2 units worth 1.00 and 1.01: 0.10 off each grants 0.20; 10 % rounded up grants 0.21 (10 % of 2.01),
  // one more than 10 % of the cheaper unit taken twice.
  const uneven = cart([line('u', 'UNEVEN', 2, 100, '19', { totalPrice: 201 })]);
  const rules = [
    rule('ten-cents', undefined, [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.10', isMultiusable: 'true' } }], 'best'),
    rule('ten-percent', undefined, [{ type: 'addLineItemDiscount', args: { value: '10', isMultiusable: 'true' } }], 'best'),
    rule('also-ten-percent', undefined, [{ type: 'addLineItemDiscount', args: { value: '10', isMultiusable: 'true' } }], 'best'),
  ];
  const config = configuration(rules, { rounding: { mode: 'up', precision: 0 }, ranks: [{ id: 'best', evaluationMode: 'selectBest' }] });
  const result = applyPromotions(uneven, compileConfiguration(config, 'EUR'));
  t.same(discounts(result), [['u', -21]], 'the largest discount');
  t.equal(result.lineItems[1]?.discountRuleID, 'ten-percent', 'of two equal ones, the first');
});

t.test('ranks: applyAll stacks, selectBest applies only the best, ranks in their order', async (t) => {
  const stacked = apply(
    configuration([
      rule('pct', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { value: '10', isMultiusable: 'true' } }]),
      rule('abs', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.50', isMultiusable: 'true' } }]),
    ]),
  );
  t.same(discounts(stacked), [['c', -60], ['c', -100]], 'applyAll: both, each on what the earlier left');
  t.same(stacked.lineItems.slice(0, 3).map((l) => l.id), ['c', 'c-promotion-pct', 'c-promotion-abs']);

  const best = configuration(
    [
      rule('ten-percent', undefined, [{ type: 'addCartDiscount', args: { value: '10' } }], 'best'),
      rule('two-euros', undefined, [{ type: 'addCartDiscount', args: { absolute: 'true', value: '2' } }], 'best'),
      rule('five-euros', sku('TEA'), [{ type: 'addCartDiscount', args: { absolute: 'true', value: '5' } }], 'best'),
      rule('one-euro', undefined, [{ type: 'addCartDiscount', args: { absolute: 'true', value: '1' } }], 'best'),
    ],
    { ranks: [{ id: 'best', evaluationMode: 'selectBest' }] },
  );
  const chosen = apply(best);
  t.equal(chosen.totalDiscount, 200, 'selectBest: the largest discount');
  t.same(
    chosen.explanation.map((e) => [e.ruleID, e.conditionHeld, e.granted, e.skippedReason, e.wouldGrant]),
    [
      ['ten-percent', true, 0, 'not_best', 147],
      ['two-euros', true, 200, undefined, undefined],
      ['five-euros', false, 0, 'condition_failed', undefined],
      ['one-euro', true, 0, 'not_best', 100],
    ],
  );
  const tie = apply(
    configuration(
      [
        rule('a', undefined, [{ type: 'addCartDiscount', args: { absolute: 'true', value: '1.47' } }], 'best'),
        rule('b', undefined, [{ type: 'addCartDiscount', args: { value: '10' } }], 'best'),
      ],
      { ranks: [{ id: 'best', evaluationMode: 'selectBest' }] },
    ),
  );
  t.same(tie.explanation.map((e) => e.granted), [147, 0], 'a tie: the first');

  const ordered = (ranks: string[]) =>
    apply(
      configuration(
        [
          rule('receipt', { type: 'totalGreaterThanOrEqual', args: { value: '14' } }, [{ type: 'addCartDiscount', args: { value: '10' } }], 'receipt_promotion'),
          rule('article', sku('COFFEE'), [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '5', isMultiusable: 'true' } }], 'article_promotion'),
        ],
        { ranks: ranks.map((id) => ({ id, evaluationMode: 'applyAll' as const })) },
      ),
    );
  t.same(ordered(['article_promotion', 'receipt_promotion']).explanation.map((e) => [e.ruleID, e.granted]), [['article', 600], ['receipt', 0]], 'the article rank first: the total falls below 14');
  t.same(ordered(['receipt_promotion', 'article_promotion']).explanation.map((e) => [e.ruleID, e.granted]), [['receipt', 147], ['article', 540]], 'the receipt rank first (the 19 % rate has 5.40 left after its share of the cart discount)');
});

t.test('groups: a group whose condition fails is skipped whole; rules rank across groups', async (t) => {
  const result = apply({
    rounding: { mode: 'halfUp', precision: 0 },
    ranks: [{ id: 'first', evaluationMode: 'applyAll' }, { id: 'second', evaluationMode: 'applyAll' }],
    groups: [
      { id: 'other-shop', condition: { type: 'hasExternalShopID', args: { oneOf: 'S2' } }, rules: [rule('o1', undefined, [tenCentsEach], 'first')] },
      { id: 'g1', rules: [rule('late', sku('MILK'), [tenCentsEach], 'second'), rule('early', sku('COFFEE'), [tenCentsEach], 'first')] },
      { id: 'g2', condition: { type: 'hasSKU', args: { equals: 'BREAD' } }, rules: [rule('g2r', sku('MILK'), [tenCentsEach], 'first')] },
    ],
  });
  t.same(
    result.explanation.map((e) => [e.ruleID, e.groupID, e.skippedReason ?? e.granted]),
    [
      ['o1', 'other-shop', 'group_condition_failed'],
      ['early', 'g1', 20],
      ['g2r', 'g2', 10],
      ['late', 'g1', 10],
    ],
    'rank first, then group order; a group condition only gates (g2r acts on the milk, not on the bread)',
  );
});

t.test('rounding: each discount computed from a percentage, with the mode, to 10^precision subunits', async (t) => {
  // 10 % of 3 × 2.55 = 76.5 subunits; of 3 × 2.45 = 73.5.
  const rows: Array<[Rounding, number, number]> = [
    [{ mode: 'up', precision: 0 }, 77, 74],
    [{ mode: 'down', precision: 0 }, 76, 73],
    [{ mode: 'halfUp', precision: 0 }, 77, 74],
    [{ mode: 'halfEven', precision: 0 }, 76, 74],
    [{ mode: 'up', precision: 1 }, 80, 80],
    [{ mode: 'down', precision: 1 }, 70, 70],
    [{ mode: 'halfUp', precision: 1 }, 80, 70],
    [{ mode: 'halfEven', precision: 1 }, 80, 70],
    [{ mode: 'up', precision: 2 }, 100, 100],
  ];
  for (const [rounding, at255, at245] of rows) {
    for (const [unit, expected] of [[255, at255], [245, at245]] as const) {
      const result = apply(configuration([rule('r', undefined, [{ type: 'addLineItemDiscount', args: { value: '10', isMultiusable: 'true' } }])], { rounding }), cart([line('x', 'X', 3, unit)]));
      t.same(discounts(result), [['x', -expected]], `${rounding.mode} ${rounding.precision}: 10 % of ${unit * 3}`);
    }
  }
  const absolute = apply(configuration([rule('r', undefined, [{ type: 'addLineItemDiscount', args: { absolute: 'true', value: '0.33' } }])], { rounding: { mode: 'up', precision: 1 } }), cart([line('x', 'X', 1, 255)]));
  t.same(discounts(absolute), [['x', -33]], 'absolute amounts are taken as written');
  const capped = apply(configuration([rule('r', undefined, [{ type: 'addLineItemDiscount', args: { value: '99' } }])], { rounding: { mode: 'up', precision: 2 } }), cart([line('x', 'X', 1, 255)]));
  t.same(discounts(capped), [['x', -255]], 'rounding up never takes more than the line has');
});

t.test('the engine changes nothing of its input and answers the same every time', async (t) => {
  const before = structuredClone(base);
  const compiled = compileConfiguration(configuration([rule('r1', undefined, [{ type: 'modifyPrice', args: { value: '10', isMultiusable: 'true' } }, tenCentsEach])]), 'EUR');
  const first = applyPromotions(base, compiled);
  const second = applyPromotions(base, compiled);
  t.same(second, first);
  t.same(base, before, 'the cart is as it was');
});

t.test('a cart in another currency than the compiled configuration is a programming error', async (t) => {
  t.throws(() => applyPromotions(cart(lines, { currency: 'CHF' }), compileConfiguration(configuration([]), 'EUR')), /compiled for EUR/);
});

t.test('compiled configurations are kept per key and currency, and bounded', async (t) => {
  const cache = new CompiledConfigurations(2);
  let loads = 0;
  const load = () => {
    loads++;
    return configuration([rule('r1', undefined, [tenCentsEach])]);
  };
  const first = cache.get('p/1/1', 'EUR', load);
  t.equal(cache.get('p/1/1', 'EUR', load), first, 'the same key: compiled once');
  t.not(cache.get('p/1/2', 'EUR', load), first, 'a new version compiles again');
  t.equal(cache.get('p/1/1', 'CHF', load).currency, 'CHF', 'another currency is another entry');
  t.equal(loads, 3);
  cache.get('p/1/1', 'EUR', load);
  t.equal(loads, 4, 'past the bound the oldest entry went');
  t.throws(() => cache.get('p/2/1', 'EUR', () => configuration([rule('r1', undefined, [{ type: 'teleport' }])])), PromotionConfigurationError, 'a configuration that cannot be applied throws');
});
