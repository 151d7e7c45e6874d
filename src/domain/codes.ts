/**
 * Scanned codes. A code is looked up as a product code first; failing that, a GS1 in-store EAN-13
 * (prefix 20-29) carries a PLU and a value, and a short code of digits may be a PLU.
 *
 * In-store layout (13 digits): `2T PPPPP VVVVV C`
 *   T       what VVVVV is: 0-2 the item's price in the currency subunit (01299: 12.99),
 *           3-6 its weight in the product's encoding unit (g when it has none),
 *           7-8 a number of units; 9 is not an in-store code of this platform
 *   PPPPP   the PLU (leading zeros are not significant)
 *   C       the EAN-13 check digit, verified
 */
export type EmbeddedValue = { kind: 'price' | 'weight' | 'units'; value: number };

export type ScannedCode =
  | { kind: 'instore'; plus: string[]; embedded: EmbeddedValue }
  | { kind: 'plu'; plus: string[] }
  | { kind: 'other' }
  | { kind: 'invalid'; reason: string };

const Digits = /^\d+$/;

/** The GS1 check digit of a code's leading digits (EAN-8, UPC-A, EAN-13, ...). */
export function gs1CheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    // Weights 3,1,3,... counted from the digit next to the check digit.
    const weight = (digits.length - i) % 2 === 1 ? 3 : 1;
    sum += Number(digits[i]) * weight;
  }
  return (10 - (sum % 10)) % 10;
}

export function hasValidCheckDigit(code: string): boolean {
  return Digits.test(code) && code.length >= 8 && gs1CheckDigit(code.slice(0, -1)) === Number(code.at(-1));
}

/** What a scanned code may stand for besides a product code of its own. */
export function interpretCode(code: string): ScannedCode {
  if (code.length === 13 && Digits.test(code) && code[0] === '2') {
    if (!hasValidCheckDigit(code)) return { kind: 'invalid', reason: `the check digit of ${code} is wrong` };
    const type = Number(code[1]);
    if (type === 9) return { kind: 'other' };
    const embedded: EmbeddedValue = { kind: type <= 2 ? 'price' : type <= 6 ? 'weight' : 'units', value: Number(code.slice(7, 12)) };
    return { kind: 'instore', plus: pluForms(code.slice(2, 7)), embedded };
  }
  if (code.length <= 8 && Digits.test(code)) return { kind: 'plu', plus: pluForms(code) };
  return { kind: 'other' };
}

/** A PLU as written and without leading zeros ("04011" and "4011"). */
function pluForms(digits: string): string[] {
  const stripped = digits.replace(/^0+(?=\d)/, '');
  return stripped === digits ? [digits] : [digits, stripped];
}
