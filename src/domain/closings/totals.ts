import { checkoutPrice } from '../tax.js';

/**
 * The totals of a closing, from its orders' own figures. Pure.
 *
 * Only `final` orders count: the orders of aborted and failed processes (listed with
 * includeAllStates) paid nothing. Per tax rate the order's own `taxPre` (gross), `tax` and `taxNet`
 * are summed; an order whose pricing lacks them (a pricing update may leave them out) has them
 * worked out from its line items as a checkout would (tax of a rate from its gross sum). What the
 * rates leave of the order's price (figures that do not add up) counts under the rate "" (no
 * known rate, without tax), so the shares always add up to the total.
 */

/** The parts of an order a closing reads. */
export interface ClosingOrder {
  state: string;
  paidAmount: number;
  paymentMethod: string;
  price: { price: number; tax?: Record<string, number>; taxNet?: Record<string, number>; taxPre?: Record<string, number> };
  lineItems?: ReadonlyArray<{ totalPrice?: number; taxRate?: string }>;
}

export interface RateFigures {
  /** The rate as the order writes it ("19", "7", "5.5"). */
  rate: string;
  gross: number;
  net: number;
  tax: number;
}

export interface TaxShare {
  rate: number;
  net: number;
  tax: number;
  total: number;
}

export interface PaymentShare {
  paymentMethod: string;
  amount: number;
}

export interface ClosingTotals {
  taxShares: TaxShare[];
  /** The rates of taxShares as the orders write them ("19", "5.5"), in the same order. */
  taxRates: string[];
  shareByPaymentMethod: PaymentShare[];
  total: number;
}

/** Per tax rate, the gross, net and tax of an order, from its own figures (highest rate first). */
export function orderRates(order: Pick<ClosingOrder, 'price' | 'lineItems'>): RateFigures[] {
  const { price } = order;
  let taxPre = price.taxPre;
  let tax = price.tax;
  let taxNet = price.taxNet;
  if (!taxPre || !tax) {
    const lines = (order.lineItems ?? []).map((l) => ({ totalPrice: l.totalPrice ?? 0, taxRate: l.taxRate ?? '' }));
    const computed = checkoutPrice(lines);
    taxPre = computed.taxPre;
    tax = computed.tax;
    taxNet = computed.taxNet;
  }
  const rates = Object.keys(taxPre).sort(byRateDescending);
  const figures = rates.map((rate) => {
    const gross = taxPre[rate] ?? 0;
    const rateTax = tax[rate] ?? 0;
    return { rate, gross, tax: rateTax, net: taxNet?.[rate] ?? gross - rateTax };
  });
  // Figures that do not add up to the price (an incomplete pricing update): the rest has no
  // known rate, so the rates always add up to what was paid.
  const rest = price.price - figures.reduce((sum, f) => sum + f.gross, 0);
  if (rest !== 0) {
    const unknown = figures.find((f) => f.rate === '');
    if (unknown) {
      unknown.gross += rest;
      unknown.net += rest;
    } else {
      figures.push({ rate: '', gross: rest, tax: 0, net: rest });
    }
  }
  return figures;
}

export function byRateDescending(a: string, b: string): number {
  return rateNumber(b) - rateNumber(a) || (a < b ? -1 : a > b ? 1 : 0);
}

/** "19" → 19, "5.5" → 5.5; text that is no rate counts as 0. */
export function rateNumber(rate: string): number {
  const value = Number(rate);
  return Number.isFinite(value) ? value : 0;
}

export interface TotalsAccumulator {
  add(order: ClosingOrder): void;
  /** Sums worked out elsewhere (by Postgres, for orders whose figures are complete), as `add` would have. */
  addSums(sums: { rates: RateFigures[]; payments: PaymentShare[] }): void;
  result(): ClosingTotals;
}

/** Sums orders one by one (a closing of 50 000 orders is read in batches, never held whole). */
export function createTotals(): TotalsAccumulator {
  const byRate = new Map<string, { net: number; tax: number; total: number }>();
  const byMethod = new Map<string, number>();
  let total = 0;
  const addRate = (figures: RateFigures) => {
    const sum = byRate.get(figures.rate) ?? { net: 0, tax: 0, total: 0 };
    sum.net += figures.net;
    sum.tax += figures.tax;
    sum.total += figures.gross;
    byRate.set(figures.rate, sum);
  };
  const addPayment = (method: string, amount: number) => {
    byMethod.set(method, (byMethod.get(method) ?? 0) + amount);
    total += amount;
  };
  return {
    add(order) {
      if (order.state !== 'final') return;
      for (const figures of orderRates(order)) addRate(figures);
      addPayment(order.paymentMethod, order.paidAmount);
    },
    addSums(sums) {
      for (const figures of sums.rates) addRate(figures);
      for (const payment of sums.payments) addPayment(payment.paymentMethod, payment.amount);
    },
    result() {
      const rates = [...byRate.keys()].sort(byRateDescending);
      return {
        taxShares: rates.map((rate) => ({ rate: rateNumber(rate), ...byRate.get(rate)! })),
        taxRates: rates,
        shareByPaymentMethod: [...byMethod.keys()].sort().map((paymentMethod) => ({ paymentMethod, amount: byMethod.get(paymentMethod)! })),
        total,
      };
    },
  };
}
