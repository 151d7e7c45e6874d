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
  const taxPre: Record<string, number> = {};
  for (const { totalPrice, taxRate } of lines) taxPre[taxRate] = (taxPre[taxRate] ?? 0) + totalPrice;
  const tax: Record<string, number> = {};
  const taxNet: Record<string, number> = {};
  let price = 0;
  let totalTax = 0;
  for (const rate of Object.keys(taxPre).sort()) {
    const gross = taxPre[rate] as number;
    const t = taxIncluded(gross, rate);
    tax[rate] = t;
    taxNet[rate] = gross - t;
    price += gross;
    totalTax += t;
  }
  return { tax, taxNet, taxPre, netPrice: price - totalTax, price };
}

/** The tax a gross amount includes at a rate in percent: gross × r / (100 + r), exactly rounded. */
export function taxIncluded(gross: number, rate: string): number {
  const [whole = '0', fraction = ''] = rate.split('.');
  const scale = 10n ** BigInt(fraction.length);
  const r = BigInt(whole) * scale + BigInt(fraction || '0');
  return divideRounded(BigInt(gross) * r, 100n * scale + r);
}
