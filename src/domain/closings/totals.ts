import { byRateDescending, orderRates, rateNumber, type PricedOrder, type RateFigures } from './order-rates.js';

/**
 * The totals of a closing, from its orders' own figures (order-rates.ts). Pure.
 *
 * Only `final` orders count: the orders of aborted and failed processes (listed with
 * includeAllStates) paid nothing. Per tax rate the orders' figures are summed, so the shares add
 * up to the total; a rate whose sums are all 0 (a coupon line's "" rate) is no share.
 */

/** The parts of an order a closing reads. */
export interface ClosingOrder extends PricedOrder {
  state: string;
  paidAmount: number;
  paymentMethod: string;
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
      const rates = [...byRate.keys()].filter((rate) => Object.values(byRate.get(rate)!).some((v) => v !== 0)).sort(byRateDescending);
      return {
        taxShares: rates.map((rate) => ({ rate: rateNumber(rate), ...byRate.get(rate)! })),
        taxRates: rates,
        shareByPaymentMethod: [...byMethod.keys()].sort().map((paymentMethod) => ({ paymentMethod, amount: byMethod.get(paymentMethod)! })),
        total,
      };
    },
  };
}
