/**
 * Amounts as text (imports, promotion arguments, exports, receipts, the portal): money is an
 * integer in the currency's subunit everywhere (150 EUR-cents is 1.50 EUR), and decimal text
 * converts to it exactly, never through floating point.
 *
 * The one table of subunits: the service, its receipts and the portal (which bundles this module,
 * the only one it takes from outside portal/: portal/README.md) read amounts by it. It imports
 * nothing, so a browser runs it as it is.
 */

/**
 * ISO 4217 currencies whose subunit is not the hundredth; every other currency has 2 decimals.
 * Intl's own digits (CLDR's) differ for some: 0 for HUF, COP, IRR, LBP and IQD, whose ISO subunits
 * are 2, 2, 2, 2 and 3 decimals.
 */
const MinorUnitDigits: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

export function minorUnitDigits(currency: string): number {
  return MinorUnitDigits[currency] ?? 2;
}

/**
 * "1.99" in EUR is 199. Undefined when the text is not a non-negative decimal, has more decimals
 * than the currency's subunit, or is too large to count exactly.
 */
export function parseAmount(text: string, currency: string): number | undefined {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const digits = minorUnitDigits(currency);
  const whole = match[1] ?? '0';
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > digits) return undefined;
  const amount = Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
  return Number.isSafeInteger(amount) ? amount : undefined;
}

/** 199 in EUR is "1.99". */
export function formatAmount(amount: number, currency: string): string {
  const digits = minorUnitDigits(currency);
  if (digits === 0) return String(amount);
  const sign = amount < 0 ? '-' : '';
  const text = String(Math.abs(amount)).padStart(digits + 1, '0');
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/**
 * Amounts in the currency's subunit written as the locale writes money, with the currency's digits
 * of the table above: 123456 → "1.234,56 €" (de-DE, EUR), 123456 HUF → "1.234,56 Ft"; exact for every
 * safe integer. A currency Intl does not take (a price's currency is free text) is written after
 * the number.
 */
export function moneyFormatter(locale: string, currency: string): (amount: number) => string {
  const digits = minorUnitDigits(currency);
  const options = { minimumFractionDigits: digits, maximumFractionDigits: digits };
  let format: Intl.NumberFormat;
  let suffix = '';
  try {
    format = new Intl.NumberFormat(locale, { ...options, style: 'currency', currency });
  } catch {
    format = new Intl.NumberFormat(locale, options);
    suffix = ` ${currency}`;
  }
  // As decimal text: Intl formats a string as the decimal it is, beyond 2^53 / 100 too.
  return (amount) => `${format.format(formatAmount(amount, currency) as `${number}`)}${suffix}`;
}
