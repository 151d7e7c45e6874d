import { moneyFormatter, parseAmount } from '../../subjects/formats/money.js';
import { useLanguage, type Language } from './i18n.js';

/**
 * Money, numbers and dates in the form of the language the person chose, the same form everywhere on
 * a screen (tables, filters, date fields): `const f = useFormat()`. The region is the browser's when it
 * prefers a regional form of that language (en-US, en-GB, de-AT), else de-DE for German and en-GB
 * for English. Dates are numeric (27.11.2026, 27/11/2026, 11/27/2026), as the date fields take them.
 */
const Regions: Record<Language, string> = { de: 'de-DE', en: 'en-GB' };

function localeOf(language: Language): string {
  const preferred = (navigator.languages ?? [navigator.language]).find((l) => l.toLowerCase().startsWith(`${language}-`));
  return preferred ?? Regions[language];
}

const NumericDate: Intl.DateTimeFormatOptions = { day: '2-digit', month: '2-digit', year: 'numeric' };

/** What a date field shows for each part of a date: TT.MM.JJJJ, DD/MM/YYYY. */
const PatternLetters: Record<Language, { day: string; month: string; year: string }> = { de: { day: 'T', month: 'M', year: 'J' }, en: { day: 'D', month: 'M', year: 'Y' } };

export interface Format {
  locale: string;
  /**
   * An amount in the currency's subunit (cents), such as 1999 → "19,99 €" / "€19.99": the subunit
   * the API counts in (ISO 4217's, the service's table), not Intl's own digits, which differ.
   */
  money(minor: number | null | undefined, currency?: string): string;
  /** A price as the API writes it, decimal text in the currency ("1.99"); text that is no amount as given. */
  price(text: string, currency: string): string;
  /** A number such as a tax rate, "7,5" / "7.5". */
  number(value: number | string): string;
  dateTime(iso: string | null | undefined): string;
  date(iso: string | Date | null | undefined): string;
  time(iso: string): string;
  /** A day (`YYYY-MM-DD`) as a date field shows it. */
  day(day: string): string;
  /** What a date field's text means: its day (`YYYY-MM-DD`), undefined when it is no date. */
  parseDay(text: string): string | undefined;
  /** How a date is typed, such as TT.MM.JJJJ. */
  datePattern: string;
}

const formats = new Map<string, Format>();

export function useFormat(): Format {
  const language = useLanguage();
  const locale = localeOf(language);
  const key = `${language} ${locale}`;
  let format = formats.get(key);
  if (!format) {
    format = makeFormat(language, locale);
    formats.set(key, format);
  }
  return format;
}

function makeFormat(language: Language, locale: string): Format {
  const moneyFormats = new Map<string, (minor: number) => string>();
  const numberFormat = new Intl.NumberFormat(locale, { maximumFractionDigits: 4 });
  // 09:03 on a 24-hour clock, 9:03 AM on a 12-hour one.
  const twelve = new Intl.DateTimeFormat(locale, { hour: 'numeric' }).resolvedOptions().hour12 === true;
  const hour = twelve ? 'numeric' : '2-digit';
  const dateTime = new Intl.DateTimeFormat(locale, { ...NumericDate, hour, minute: '2-digit' });
  const dateOnly = new Intl.DateTimeFormat(locale, NumericDate);
  const timeOnly = new Intl.DateTimeFormat(locale, { hour, minute: '2-digit', second: '2-digit' });
  // The order of day, month and year, and what stands between them, in this locale.
  const parts = dateOnly.formatToParts(new Date(2026, 10, 27));
  const order = parts.filter((p) => p.type === 'day' || p.type === 'month' || p.type === 'year').map((p) => p.type as 'day' | 'month' | 'year');
  const letters = PatternLetters[language];
  const datePattern = parts.map((p) => (p.type === 'day' ? letters.day.repeat(2) : p.type === 'month' ? letters.month.repeat(2) : p.type === 'year' ? letters.year.repeat(4) : p.value)).join('');

  const money: Format['money'] = (minor, currency = 'EUR') => {
    if (minor === null || minor === undefined) return '–';
    let format = moneyFormats.get(currency);
    if (!format) {
      format = moneyFormatter(locale, currency);
      moneyFormats.set(currency, format);
    }
    return format(minor);
  };

  return {
    locale,
    datePattern,
    money,
    price(text, currency) {
      const minor = parseAmount(text, currency);
      return minor === undefined ? `${text} ${currency}` : money(minor, currency);
    },
    number: (value) => (Number.isFinite(Number(value)) && String(value).trim() !== '' ? numberFormat.format(Number(value)) : String(value)),
    dateTime: (iso) => (iso ? dateTime.format(new Date(iso)) : '–'),
    date: (iso) => (iso ? dateOnly.format(typeof iso === 'string' ? new Date(iso) : iso) : '–'),
    time: (iso) => timeOnly.format(new Date(iso)),
    day: (day) => dateOnly.format(new Date(`${day}T00:00:00`)),
    parseDay(text) {
      const numbers = text.trim().split(/[^0-9]+/).filter(Boolean);
      if (numbers.length !== 3) return undefined;
      const at = (part: 'day' | 'month' | 'year') => numbers[order.indexOf(part)] ?? '';
      const [day, month, year] = [at('day'), at('month'), at('year')];
      if (day.length > 2 || month.length > 2 || year.length !== 4) return undefined;
      const date = new Date(Number(year), Number(month) - 1, Number(day));
      if (date.getFullYear() !== Number(year) || date.getMonth() !== Number(month) - 1 || date.getDate() !== Number(day)) return undefined;
      return isoDay(date);
    },
  };
}

/** `YYYY-MM-DD` of a date in the browser's time zone. */
export function isoDay(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}
