/** Money and dates as German retail writes them (de-DE), whatever the language of the words. */
const moneyFormats = new Map<string, Intl.NumberFormat>();

/** An amount in the currency's subunit (cents), such as 1999 → "19,99 €". */
export function money(minor: number | null | undefined, currency = 'EUR'): string {
  if (minor === null || minor === undefined) return '–';
  let format = moneyFormats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat('de-DE', { style: 'currency', currency });
    moneyFormats.set(currency, format);
  }
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

const dateTime = new Intl.DateTimeFormat('de-DE', { dateStyle: 'medium', timeStyle: 'short' });
const dateOnly = new Intl.DateTimeFormat('de-DE', { dateStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat('de-DE', { timeStyle: 'medium' });

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '–';
}

export function formatDate(iso: string | Date | null | undefined): string {
  return iso ? dateOnly.format(typeof iso === 'string' ? new Date(iso) : iso) : '–';
}

export function formatTime(iso: string): string {
  return timeOnly.format(new Date(iso));
}

/** `YYYY-MM-DD` of a date in the browser's time zone (the value of an `<input type=date>`). */
export function isoDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
