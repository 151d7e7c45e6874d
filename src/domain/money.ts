/**
 * Money arithmetic: integers in the currency's subunit, rounded half away from zero. Amounts as
 * text (parsing and formatting) are a format of the contract: subjects/formats/money.ts.
 */

/** Rounds half away from zero: 2.5 → 3, -2.5 → -3 (Math.round would give -2). */
export function roundHalfAwayFromZero(value: number): number {
  return Math.sign(value) * Math.round(Math.abs(value));
}

/** numerator / denominator rounded half away from zero, exactly (for amounts beyond 2^53 too). */
export function divideRounded(numerator: bigint, denominator: bigint): number {
  if (denominator <= 0n) throw new RangeError('the denominator must be positive');
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  let quotient = magnitude / denominator;
  if ((magnitude % denominator) * 2n >= denominator) quotient += 1n;
  const result = Number(negative ? -quotient : quotient);
  if (!Number.isSafeInteger(result)) throw new RangeError('the amount is too large to count exactly');
  return result;
}
