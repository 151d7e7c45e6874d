import { minorUnitDigits, parseAmount } from '../../../subjects/formats/money.js';
import { parsePercent, type Fraction } from './rounding.js';

/**
 * Reading the string arguments of conditions and actions (design.md: money as decimal text in
 * currency units, percentages as decimal text, booleans "true"/"false", lists comma-separated, times
 * RFC 3339). Every problem is noted with the exact path of the argument, and reading goes on, so a
 * configuration's problems are all reported at once.
 */
export interface ConfigIssue {
  /** Where: `groups[0].rules[2].actions[0].args.value`. */
  path: string;
  /** `groups[0].rules[2].actions[0]: addLineItemDiscount needs value`. */
  message: string;
}

export class Issues {
  readonly list: ConfigIssue[] = [];

  add(path: string, problem: string): void {
    this.list.push({ path, message: `${path}: ${problem}` });
  }
}

const Rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const Count = /^\d{1,9}$/;

/** Date.parse rolls 2026-02-31 over into March; a time must name a day that exists. */
function realDate(text: string): boolean {
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  return m >= 1 && m <= 12 && d >= 1 && new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
}

/** The arguments of one condition or action (`what` is its type, `path` its place). */
export class ArgReader {
  constructor(
    private readonly args: Readonly<Record<string, string>> | undefined,
    private readonly path: string,
    private readonly what: string,
    private readonly issues: Issues,
    private readonly currency: string,
  ) {}

  has(name: string): boolean {
    return this.args?.[name] !== undefined;
  }

  /** The text of an argument; a required one that is absent is an issue. */
  text(name: string, required: boolean): string | undefined {
    const value = this.args?.[name];
    if (value === undefined && required) this.issues.add(this.path, `${this.what} needs ${name}`);
    return value;
  }

  private bad(name: string, problem: string): undefined {
    this.issues.add(`${this.path}.args.${name}`, problem);
    return undefined;
  }

  money(name: string, required: boolean): number | undefined {
    const text = this.text(name, required);
    if (text === undefined) return undefined;
    const amount = parseAmount(text, this.currency);
    if (amount !== undefined) return amount;
    const digits = minorUnitDigits(this.currency);
    return this.bad(name, `${JSON.stringify(text)} is not an amount in ${this.currency} (decimal text in currency units with at most ${digits} decimals, such as "${digits ? `1.${'5'.padEnd(digits, '0')}` : '150'}")`);
  }

  percent(name: string, required: boolean): Fraction | undefined {
    const text = this.text(name, required);
    if (text === undefined) return undefined;
    return parsePercent(text) ?? this.bad(name, `${JSON.stringify(text)} is not a percentage (decimal text from 0 to 100, such as "10" or "12.5")`);
  }

  /** A whole number of at least `min`. */
  count(name: string, required: boolean, min: number): number | undefined {
    const text = this.text(name, required);
    if (text === undefined) return undefined;
    const value = Count.test(text) ? Number(text) : Number.NaN;
    if (value >= min) return value;
    return this.bad(name, `${JSON.stringify(text)} is not a whole number of at least ${min}`);
  }

  bool(name: string, fallback: boolean): boolean | undefined {
    const text = this.text(name, false);
    if (text === undefined) return fallback;
    if (text === 'true') return true;
    if (text === 'false') return false;
    return this.bad(name, `${JSON.stringify(text)} is not "true" or "false"`);
  }

  /** A comma-separated list of non-empty items (spaces around items are dropped). */
  list(name: string, required: boolean): string[] | undefined {
    const text = this.text(name, required);
    if (text === undefined) return undefined;
    const items = text.split(',').map((item) => item.trim());
    if (items.some((item) => item === '')) return this.bad(name, `${JSON.stringify(text)} is not a comma-separated list of non-empty items`);
    return items;
  }

  /** An RFC 3339 time, as epoch milliseconds. */
  time(name: string): number | undefined {
    const text = this.text(name, false);
    if (text === undefined) return undefined;
    const ms = Rfc3339.test(text) && realDate(text) ? Date.parse(text.replace(' ', 'T').toUpperCase()) : Number.NaN;
    if (!Number.isNaN(ms)) return ms;
    return this.bad(name, `${JSON.stringify(text)} is not an RFC 3339 time (such as "2026-12-01T00:00:00+01:00")`);
  }

  /** A problem about the arguments together. */
  problem(problem: string): void {
    this.issues.add(this.path, problem);
  }
}
