import type { ConfigurationBody, Rule } from '../../subjects/promotions.js';
import type { CartCoupon, CheckoutLine, PromotionCart, PromotionResult } from '../../src/domain/promotions/index.js';

/** Builders for engine tests: line items as the checkout makes them, carts, configurations. */

export function line(id: string, sku: string, amount: number, unitPrice: number, taxRate = '19', more: Partial<CheckoutLine> = {}): CheckoutLine {
  return {
    id,
    type: 'default',
    refersTo: null,
    sku,
    amount,
    weight: 0,
    units: 0,
    price: unitPrice,
    priceOrigin: 'master',
    totalPrice: unitPrice * amount,
    name: sku,
    taxRate,
    scannedCode: '',
    saleRestriction: '',
    ...more,
  };
}

export const At = new Date('2026-11-22T12:00:00Z');

export function cart(lineItems: CheckoutLine[], more: Partial<PromotionCart> = {}): PromotionCart {
  return { lineItems, shopExternalId: 'S1', coupons: [], at: At, currency: 'EUR', ...more };
}

export function coupon(id: string, more: Partial<CartCoupon> = {}): CartCoupon {
  return { id, lineItemId: `item-${id}`, ...more };
}

export function rule(id: string, condition: Rule['condition'], actions: Rule['actions'], rankID = 'main'): Rule {
  return condition ? { id, rankID, condition, actions } : { id, rankID, actions };
}

export function configuration(rules: Rule[], more: Partial<ConfigurationBody> = {}): ConfigurationBody {
  return {
    rounding: { mode: 'halfUp', precision: 0 },
    ranks: [{ id: 'main', evaluationMode: 'applyAll' }],
    groups: [{ id: 'g', rules }],
    ...more,
  };
}

/** The promotion lines of a result as `[refersTo, totalPrice]`. */
export function discounts(result: PromotionResult): Array<[string | null, number]> {
  return result.lineItems.filter((l) => l.type === 'promotion').map((l) => [l.refersTo, l.totalPrice]);
}
