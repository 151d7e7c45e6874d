import { createHash } from 'node:crypto';
import type { Table } from './tables.js';

/**
 * The CSV conventions index.xml declares: UTF-8, `;` between columns, CRLF after every record,
 * text in `"` (doubled inside), a header row of the column names, decimal comma, no digit grouping,
 * numbers with exactly their column's Accuracy in fraction digits.
 */
export const ColumnDelimiter = ';';
export const RecordDelimiter = '\r\n';

/** A decimal number: units / 10^scale (an amount of 1234 EUR-cents is {units: 1234, scale: 2}). */
export interface Fixed {
  units: number;
  scale: number;
}

/** A value of a row: text for text columns; an integer or a Fixed for number columns; null for empty. */
export type Value = string | number | Fixed | null;

/**
 * What no export carries: control characters (C0 but tab and line breaks are what XML 1.0
 * refuses; those and DEL and C1 are what an auditor's CSV reader takes for structure or garbage),
 * the noncharacters U+FFFE and U+FFFF, and lone surrogates. Shop, product and company names are
 * free text from the API, which stores these.
 */
const Unprintable = /[\p{Cc}\ufffe\uffff\p{Cs}]+/gu;
/** The look before the replace, on every text field of an export: without the u flag (about half the time), any surrogate. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const MaybeUnprintable = /[\x00-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]/;

/** The text with each run of unprintable characters (a line break among them) as one space. */
export function printable(value: string): string {
  return MaybeUnprintable.test(value) ? value.replace(Unprintable, ' ') : value;
}

/** Text cut to a column's length (in characters), control characters and line breaks as spaces, quotes doubled, in quotes. */
export function text(value: string, maxLength: number): string {
  if (value === '') return '""';
  let cleaned = printable(value);
  if (cleaned.length > maxLength) {
    const chars = Array.from(cleaned);
    if (chars.length > maxLength) cleaned = chars.slice(0, maxLength).join('');
  }
  return `"${cleaned.includes('"') ? cleaned.replace(/"/g, '""') : cleaned}"`;
}

/** A number with exactly `accuracy` fraction digits and a decimal comma; rounded half away from zero. */
export function decimal(value: number | Fixed, accuracy: number): string {
  return typeof value === 'number' ? decimalOf(value, 0, accuracy) : decimalOf(value.units, value.scale, accuracy);
}

/** decimal() of units / 10^scale. */
function decimalOf(units: number, scale: number, accuracy: number): string {
  if (accuracy === 0 && scale === 0 && Number.isSafeInteger(units)) return String(units);
  // Plain numbers while they are exact (amounts below 2^53 of the smallest unit); BigInt beyond.
  if (accuracy >= scale) {
    const scaled = units * Powers[accuracy - scale]!;
    if (Number.isSafeInteger(scaled)) return withComma(Math.abs(scaled).toString(), accuracy, scaled < 0);
    const big = BigInt(units) * 10n ** BigInt(accuracy - scale);
    return withComma((big < 0n ? -big : big).toString(), accuracy, big < 0n);
  }
  const divisor = 10n ** BigInt(scale - accuracy);
  const magnitude = BigInt(Math.abs(units));
  let quotient = magnitude / divisor;
  if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return withComma(quotient.toString(), accuracy, units < 0 && quotient > 0n);
}

const Powers = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000];

function withComma(digits: string, accuracy: number, negative: boolean): string {
  if (accuracy === 0) return negative && digits !== '0' ? `-${digits}` : digits;
  const padded = digits.length > accuracy ? digits : digits.padStart(accuracy + 1, '0');
  const body = `${padded.slice(0, padded.length - accuracy)},${padded.slice(padded.length - accuracy)}`;
  return negative && /[1-9]/.test(padded) ? `-${body}` : body;
}

/** The header record of a table: its column names. */
export function headerOf(table: Table): string {
  return table.columns.map((c) => c.name).join(ColumnDelimiter) + RecordDelimiter;
}

/**
 * A writer of a table's records that start with the same values (the closing's key): `values` are
 * the rest, in column order. `scales` gives number columns their unit: a plain number in a column
 * of scale 2 is hundredths (an amount in cents); columns not named count whole units.
 */
export function rowWriter(table: Table, prefix: readonly Value[], scales: Readonly<Record<string, number>> = {}): (values: readonly Value[]) => string {
  const { columns } = table;
  const scaleOf = columns.map((c) => scales[c.name] ?? 0);
  const head = prefix.map((value, i) => field(table, i, value, scaleOf[i]!)).join(ColumnDelimiter);
  const start = prefix.length;
  // Fields are joined once, so a record is one flat string (a string built with += is a tree of
  // its parts, which lives on until the page is written and costs the collector dearly).
  const parts: string[] = new Array<string>(columns.length - start + 2);
  return (values) => {
    if (values.length + start !== columns.length) throw new Error(`${table.file}: ${values.length + start} values for ${columns.length} columns`);
    let n = 0;
    if (start > 0) parts[n++] = head;
    for (let i = 0; i < values.length; i++) parts[n++] = field(table, start + i, values[i]!, scaleOf[start + i]!);
    parts.length = n;
    return parts.join(ColumnDelimiter) + RecordDelimiter;
  };
}

function field(table: Table, index: number, value: Value, scale: number): string {
  const column = table.columns[index]!;
  const type = column.type;
  if (value === null || value === undefined) return type.kind === 'text' ? '""' : '';
  if (type.kind === 'text') return text(typeof value === 'object' ? '' : String(value), type.maxLength);
  if (typeof value === 'string') throw new Error(`${table.file}: text for the number column ${column.name}`);
  return typeof value === 'number' ? decimalOf(value, scale, type.accuracy) : decimal(value, type.accuracy);
}

/**
 * An id for a text key column of `maxLength`: as it is when it fits, else a prefix and a digest
 * (ids are keys, so they are never just cut off: two long ids stay apart).
 */
export function idOf(id: string, maxLength: number): string {
  // UTF-16 length is never below the number of characters: most ids are decided here.
  if (id.length <= maxLength || Array.from(id).length <= maxLength) return id;
  const digest = createHash('sha256').update(id).digest('hex');
  const keep = Math.max(0, maxLength - 33);
  return `${Array.from(id).slice(0, keep).join('')}~${digest.slice(0, maxLength - keep - 1)}`;
}
