import type { Rounding } from '../../../subjects/promotions.js';

/**
 * Exact arithmetic of discounts: percentages as fractions of integers, discounts rounded once with
 * the configuration's rounding, and a cart discount split over tax rates by largest remainder.
 * BigInt where a product of two amounts could pass 2^53.
 */

/** A percentage as the fraction numerator / denominator of the whole (10 % = 10 / 100). */
export interface Fraction {
  numerator: bigint;
  denominator: bigint;
}

const PercentText = /^(\d{1,3})(?:\.(\d{1,6}))?$/;

/** "12.5" → 125 / 1000; undefined unless decimal text from 0 to 100. */
export function parsePercent(text: string): Fraction | undefined {
  const match = PercentText.exec(text);
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  const scale = 10n ** BigInt(fraction.length);
  const numerator = BigInt(match[1] ?? '0') * scale + BigInt(fraction || '0');
  const denominator = 100n * scale;
  if (numerator > denominator) return undefined;
  return { numerator, denominator };
}

/** The percentage as a number, for display fields (`discountPercentage`). */
export function percentNumber(f: Fraction): number {
  return Number((f.numerator * 1_000_000n) / f.denominator) / 10_000;
}

/**
 * numerator / denominator (both ≥ 0) rounded to a multiple of 10^precision with the mode: `up`
 * away from zero (the larger discount), `down` toward zero, `halfUp` halves away from zero,
 * `halfEven` halves to the even multiple.
 */
export function roundDiscount(numerator: bigint, denominator: bigint, rounding: Rounding): number {
  const step = denominator * 10n ** BigInt(rounding.precision);
  let quotient = numerator / step;
  const twice = (numerator % step) * 2n;
  switch (rounding.mode) {
    case 'up':
      if (twice > 0n) quotient += 1n;
      break;
    case 'down':
      break;
    case 'halfUp':
      if (twice >= step) quotient += 1n;
      break;
    case 'halfEven':
      if (twice > step || (twice === step && quotient % 2n === 1n)) quotient += 1n;
      break;
  }
  return Number(quotient) * 10 ** rounding.precision;
}

/** `amount × fraction`, rounded with the configuration's rounding. */
export function percentOf(amount: number, percent: Fraction, rounding: Rounding): number {
  return roundDiscount(BigInt(amount) * percent.numerator, percent.denominator, rounding);
}

/** amount × numerator / denominator rounded half away from zero (amount, numerator ≥ 0). */
export function scaleHalfUp(amount: number, numerator: number, denominator: number): number {
  const n = BigInt(amount) * BigInt(numerator);
  const d = BigInt(denominator);
  let q = n / d;
  if ((n % d) * 2n >= d) q += 1n;
  return Number(q);
}

/**
 * Splits `total` over the weights in proportion to them (largest remainder): each share is the
 * floor of its exact part, and the units left go to the largest remainders, ties to the earlier
 * weight. Σ shares = total, and no share exceeds its weight when total ≤ Σ weights.
 */
export function splitProportionally(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, w) => a + w, 0);
  if (sum <= 0 || total <= 0) return weights.map(() => 0);
  const t = BigInt(total);
  const s = BigInt(sum);
  const shares = weights.map((w) => Number((t * BigInt(w)) / s));
  const remainders = weights.map((w, i) => ({ i, r: (t * BigInt(w)) % s }));
  let left = total - shares.reduce((a, x) => a + x, 0);
  remainders.sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  for (const { i } of remainders) {
    if (left <= 0) break;
    shares[i] = (shares[i] as number) + 1;
    left--;
  }
  return shares;
}
