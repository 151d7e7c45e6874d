import { taxIncluded } from '../tax.js';

/**
 * An order's figures per tax rate, from its own pricing: what a closing sums, what its DSFinV-K
 * Beleg declares and what its receipt prints, so the three always agree. Pure.
 *
 * The order's `taxPre` (gross), `tax` and `taxNet` are taken as they are; an order whose pricing
 * lacks them (a pricing update may leave them out) has them worked out from its line items as a
 * checkout would (the tax of a rate from its gross sum). What the rates leave of the order's price
 * (figures that do not add up) counts under the rate "" (no known rate, without tax), so the rates
 * always add up to the price. A rate with nothing in it (a coupon line's "" at 0) is left out.
 *
 * Rates come from clients (a PoS's pricing update may write any text up to 16 characters): text
 * that is no decimal percentage has no tax taken out of it, and never fails a closing or a receipt.
 */

/** The parts of an order its rates are read from. */
export interface PricedOrder {
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

/** Percent as decimal text: "19", "7", "5.5", "0". */
const DecimalRate = /^\d{1,3}(?:\.\d{1,6})?$/;

export function isDecimalRate(rate: string): boolean {
  return DecimalRate.test(rate);
}

/** The tax a gross amount includes at a rate (tax.ts's rule); 0 for text that is no rate. */
export function includedTax(gross: number, rate: string): number {
  return isDecimalRate(rate) && Number.isInteger(gross) ? taxIncluded(gross, rate) : 0;
}

/** Per tax rate, the gross, net and tax of an order, from its own figures (highest rate first). */
export function orderRates(order: PricedOrder): RateFigures[] {
  const { price } = order;
  const figures = price.taxPre && price.tax ? ownFigures(price.taxPre, price.tax, price.taxNet) : figuresOfLines(order.lineItems ?? []);
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
  return figures.filter((f) => f.gross !== 0 || f.net !== 0 || f.tax !== 0).sort((a, b) => byRateDescending(a.rate, b.rate));
}

function ownFigures(taxPre: Record<string, number>, tax: Record<string, number>, taxNet: Record<string, number> | undefined): RateFigures[] {
  return Object.keys(taxPre).map((rate) => {
    const gross = member(taxPre, rate) ?? 0;
    const rateTax = member(tax, rate) ?? 0;
    return { rate, gross, tax: rateTax, net: (taxNet && member(taxNet, rate)) ?? gross - rateTax };
  });
}

/** A rate's figure, if the record has one of its own: a rate named "valueOf" is not Object.prototype's. */
function member(record: Record<string, number>, rate: string): number | undefined {
  return Object.hasOwn(record, rate) ? record[rate] : undefined;
}

function figuresOfLines(lines: NonNullable<PricedOrder['lineItems']>): RateFigures[] {
  const gross = new Map<string, number>();
  for (const line of lines) gross.set(line.taxRate ?? '', (gross.get(line.taxRate ?? '') ?? 0) + (line.totalPrice ?? 0));
  return [...gross].map(([rate, sum]) => {
    const tax = includedTax(sum, rate);
    return { rate, gross: sum, tax, net: sum - tax };
  });
}

export function byRateDescending(a: string, b: string): number {
  return rateNumber(b) - rateNumber(a) || (a < b ? -1 : a > b ? 1 : 0);
}

/** "19" → 19, "5.5" → 5.5; text that is no rate counts as 0. */
export function rateNumber(rate: string): number {
  return isDecimalRate(rate) ? Number(rate) : 0;
}
