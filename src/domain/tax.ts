import { divideRounded } from './money.js';

/**
 * Taxes of a checkout. Prices are gross (tax included). Per tax rate, `taxPre` is the gross sum of
 * the line items with that rate; the tax is computed once from it (rounded half away from zero),
 * and `taxNet` is the rest, so that for every rate `tax + taxNet = taxPre`, and over the checkout
 * `netPrice + Σ tax = price`.
 */
export interface Price {
  /** Per rate (string-encoded decimal, as in the settings): the tax. */
  tax: Record<string, number>;
  /** Per rate: the net part. */
  taxNet: Record<string, number>;
  /** Per rate: the gross sum of the line items. */
  taxPre: Record<string, number>;
  netPrice: number;
  price: number;
}

export function checkoutPrice(lines: ReadonlyArray<{ totalPrice: number; taxRate: string }>): Price {
  const sums = new Map<string, number>();
  for (const { totalPrice, taxRate } of lines) sums.set(taxRate, (sums.get(taxRate) ?? 0) + totalPrice);
  const taxPre: Record<string, number> = {};
  const tax: Record<string, number> = {};
  const taxNet: Record<string, number> = {};
  let price = 0;
  let totalTax = 0;
  for (const rate of [...sums.keys()].sort()) {
    const gross = sums.get(rate)!;
    const t = taxIncluded(gross, rate);
    taxPre[rate] = gross;
    tax[rate] = t;
    taxNet[rate] = gross - t;
    price += gross;
    totalTax += t;
  }
  return { tax, taxNet, taxPre, netPrice: price - totalTax, price };
}

/** A rate in percent as the fraction r / (100 + r) of a gross amount that is tax, in integers: "7.5" → 75 / 1075. */
interface TaxFraction {
  numerator: bigint;
  denominator: bigint;
}

/** The fractions of the rates seen, parsed once (a shop has a few rates; the cache stays small). */
const fractions = new Map<string, TaxFraction>();

function taxFraction(rate: string): TaxFraction {
  let fraction = fractions.get(rate);
  if (!fraction) {
    const [whole = '0', digits = ''] = rate.split('.');
    const scale = 10n ** BigInt(digits.length);
    const numerator = BigInt(whole) * scale + BigInt(digits || '0');
    fraction = { numerator, denominator: 100n * scale + numerator };
    if (fractions.size < 256) fractions.set(rate, fraction);
  }
  return fraction;
}

/** The tax a gross amount includes at a rate in percent: gross × r / (100 + r), exactly rounded. */
export function taxIncluded(gross: number, rate: string): number {
  const { numerator, denominator } = taxFraction(rate);
  return divideRounded(BigInt(gross) * numerator, denominator);
}
