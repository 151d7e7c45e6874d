import type { Rounding } from '../../../subjects/promotions.js';

/**
 * Exact arithmetic of discounts: percentages as fractions of integers, discounts rounded once with
 * the configuration's rounding, and a cart discount split over tax rates by largest remainder.
 * Integers in doubles while a product stays a safe integer (every cart's case), BigInt past 2^53.
 */

/** A percentage as the fraction numerator / denominator of the whole (10 % = 10 / 100), both at most 10^8. */
export interface Fraction {
  numerator: number;
  denominator: number;
}

const PercentText = /^(\d{1,3})(?:\.(\d{1,6}))?$/;

/** "12.5" → 125 / 1000; undefined unless decimal text from 0 to 100. */
export function parsePercent(text: string): Fraction | undefined {
  const match = PercentText.exec(text);
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  const scale = 10 ** fraction.length;
  const numerator = Number(match[1] ?? '0') * scale + Number(fraction || '0');
  const denominator = 100 * scale;
  if (numerator > denominator) return undefined;
  return { numerator, denominator };
}

/** The percentage as a number, for display fields (`discountPercentage`). */
export function percentNumber(f: Fraction): number {
  return Math.trunc((f.numerator * 1_000_000) / f.denominator) / 10_000;
}

/**
 * Whether a quotient goes one up, with the mode, given its division's remainder: whether any is
 * left, and how twice the remainder compares with the divisor (-1 under a half, 0 a half, 1 over).
 */
function roundsUp(mode: Rounding['mode'], left: boolean, half: number, quotientIsOdd: boolean): boolean {
  switch (mode) {
    case 'up':
      return left;
    case 'down':
      return false;
    case 'halfUp':
      return half >= 0;
    case 'halfEven':
      return half > 0 || (half === 0 && quotientIsOdd);
  }
}

/**
 * numerator / denominator (both ≥ 0) rounded to a multiple of 10^precision with the mode: `up`
 * away from zero (the larger discount), `down` toward zero, `halfUp` halves away from zero,
 * `halfEven` halves to the even multiple.
 */
export function roundDiscount(numerator: number | bigint, denominator: number, rounding: Rounding): number {
  const scale = 10 ** rounding.precision;
  const step = denominator * scale;
  if (typeof numerator === 'number' && Number.isSafeInteger(numerator) && Number.isSafeInteger(step)) {
    const { quotient, remainder } = divide(numerator, step);
    return (quotient + (roundsUp(rounding.mode, remainder > 0, Math.sign(remainder * 2 - step), quotient % 2 === 1) ? 1 : 0)) * scale;
  }
  const big = BigInt(numerator);
  const bigStep = BigInt(denominator) * BigInt(scale);
  const quotient = big / bigStep;
  const twice = (big % bigStep) * 2n;
  const half = twice > bigStep ? 1 : twice === bigStep ? 0 : -1;
  return Number(quotient + (roundsUp(rounding.mode, twice > 0n, half, quotient % 2n === 1n) ? 1n : 0n)) * scale;
}

/** `amount × fraction`, rounded with the configuration's rounding. */
export function percentOf(amount: number, percent: Fraction, rounding: Rounding): number {
  const product = amount * percent.numerator;
  return roundDiscount(Number.isSafeInteger(product) ? product : BigInt(amount) * BigInt(percent.numerator), percent.denominator, rounding);
}

/**
 * Splits `total` over the weights in proportion to them (largest remainder): each share is the
 * floor of its exact part, and the units left (fewer than there are weights) go to the largest
 * remainders, ties to the earlier weight. Σ shares = total, and no share exceeds its weight when
 * total ≤ Σ weights.
 */
export function splitProportionally(total: number, weights: readonly number[]): number[] {
  let sum = 0;
  for (const w of weights) sum += w;
  const shares = weights.map(() => 0);
  if (sum <= 0 || total <= 0) return shares;
  // Every product total × weight is at most total × sum: in doubles while that is a safe integer.
  const exact = Number.isSafeInteger(total * sum);
  const remainders: Array<number | bigint> = [];
  let left = total;
  weights.forEach((w, i) => {
    if (exact) {
      const { quotient, remainder } = divide(total * w, sum);
      shares[i] = quotient;
      remainders.push(remainder);
    } else {
      const product = BigInt(total) * BigInt(w);
      shares[i] = Number(product / BigInt(sum));
      remainders.push(product % BigInt(sum));
    }
    left -= shares[i]!;
  });
  for (; left > 0; left--) {
    let largest = 0;
    for (let i = 1; i < remainders.length; i++) if (remainders[i]! > remainders[largest]!) largest = i;
    shares[largest]! += 1;
    remainders[largest] = -1;
  }
  return shares;
}

/** Whole division of safe integers (numerator ≥ 0, divisor > 0) in doubles. */
function divide(numerator: number, divisor: number): { quotient: number; remainder: number } {
  // The floor of a division of doubles can be one too many (the quotient rounds up to a whole
  // number): the remainder puts it right.
  const quotient = Math.floor(numerator / divisor);
  const remainder = numerator - quotient * divisor;
  return remainder < 0 ? { quotient: quotient - 1, remainder: remainder + divisor } : { quotient, remainder };
}
