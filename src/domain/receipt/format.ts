import { moneyFormatter } from '../../../subjects/formats/money.js';
import { isUnit, unitRatio } from '../../../subjects/formats/units.js';

/**
 * How a receipt writes numbers, times and card numbers in the project's locale. Intl formatters
 * are costly to build, so one is kept per locale, currency and zone (a handful per process).
 */
export interface ReceiptFormat {
  /** 123456 → "1.234,56 €" (de-DE, EUR); exact for every safe integer. */
  money(amount: number): string;
  /** A unit price with its reference unit: "2,99 €/kg". */
  unitPrice(amount: number, unit: string): string;
  /** "19" → "19 %", "5.5" → "5,5 %". */
  rate(rate: string): string;
  /** A weight in its unit, written in the reference unit when the two convert: 1234 g → "1,234 kg". */
  weight(weight: number, unit: string, referenceUnit: string): string;
  /** "22.11.2026, 14:03:12" in the receipt's time zone. */
  dateTime(at: Date): string;
  /** A plain integer: "1.234". */
  integer(n: number): string;
}

const cache = new Map<string, ReceiptFormat>();
const CacheLimit = 64;

export function receiptFormat(locale: string, currency: string, timeZone: string): ReceiptFormat {
  const key = `${locale}|${currency}|${timeZone}`;
  let format = cache.get(key);
  if (!format) {
    if (cache.size >= CacheLimit) cache.clear();
    format = buildFormat(locale, currency, timeZone);
    cache.set(key, format);
  }
  return format;
}

function buildFormat(locale: string, currency: string, timeZone: string): ReceiptFormat {
  const decimal = new Intl.NumberFormat(locale, { maximumFractionDigits: 4 });
  const measure = new Intl.NumberFormat(locale, { minimumFractionDigits: 0, maximumFractionDigits: 3 });
  const integer = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 });
  const dateTime = new Intl.DateTimeFormat(locale, { timeZone, dateStyle: 'medium', timeStyle: 'medium' });
  const formatMoney = moneyFormatter(locale, currency);
  return {
    money: formatMoney,
    unitPrice: (amount, unit) => (unit && unit !== 'piece' ? `${formatMoney(amount)}/${unit}` : formatMoney(amount)),
    rate: (rate) => {
      const value = Number(rate);
      return Number.isFinite(value) && rate !== '' ? `${decimal.format(value)} %` : rate;
    },
    weight(weight, unit, referenceUnit) {
      const from = unit || referenceUnit;
      if (isUnit(from) && isUnit(referenceUnit)) {
        const ratio = unitRatio(from, referenceUnit);
        if (ratio) return `${measure.format((weight * Number(ratio.numerator)) / Number(ratio.denominator))} ${referenceUnit}`;
      }
      return `${integer.format(weight)} ${from}`.trim();
    },
    dateTime: (at) => dateTime.format(at),
    integer: (n) => integer.format(n),
  };
}

/** Every digit but the last four replaced: a card number a receipt may show ("************1234"). */
export function maskNumber(value: string): string {
  const digits = [...value].filter((c) => c >= '0' && c <= '9').length;
  let seen = 0;
  return [...value].map((c) => (c >= '0' && c <= '9' ? (++seen <= digits - 4 ? '*' : c) : c)).join('');
}

/** A time a payment system reported: unix seconds (online payments) or RFC 3339 (terminals). */
export function parseReportedTime(value: string): Date | undefined {
  if (/^\d{9,11}$/.test(value)) return new Date(Number(value) * 1000);
  if (/^\d{12,14}$/.test(value)) return new Date(Number(value));
  const ms = Date.parse(value);
  return /^\d{4}-\d{2}-\d{2}T/.test(value) && Number.isFinite(ms) ? new Date(ms) : undefined;
}
