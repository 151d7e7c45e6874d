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

export function fixed(units: number, scale: number): Fixed {
  return { units, scale };
}

/** Text cut to a column's length (in characters), line breaks as spaces, quotes doubled, in quotes. */
export function text(value: string, maxLength: number): string {
  let cleaned = /[\r\n"]/.test(value) ? value.replace(/\r\n|[\r\n]/g, ' ') : value;
  if (cleaned.length > maxLength) {
    const chars = Array.from(cleaned);
    if (chars.length > maxLength) cleaned = chars.slice(0, maxLength).join('');
  }
  return `"${cleaned.includes('"') ? cleaned.replace(/"/g, '""') : cleaned}"`;
}

/** A number with exactly `accuracy` fraction digits and a decimal comma; rounded half away from zero. */
export function decimal(value: number | Fixed, accuracy: number): string {
  const { units, scale } = typeof value === 'number' ? { units: value, scale: 0 } : value;
  let scaled: bigint;
  if (accuracy >= scale) {
    scaled = BigInt(units) * 10n ** BigInt(accuracy - scale);
  } else {
    const divisor = 10n ** BigInt(scale - accuracy);
    const magnitude = BigInt(Math.abs(units));
    let quotient = magnitude / divisor;
    if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
    scaled = units < 0 ? -quotient : quotient;
  }
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(accuracy + 1, '0');
  const whole = digits.slice(0, digits.length - accuracy);
  const body = accuracy > 0 ? `${whole},${digits.slice(digits.length - accuracy)}` : whole;
  return negative && /[1-9]/.test(body) ? `-${body}` : body;
}

/** The header record of a table: its column names. */
export function headerOf(table: Table): string {
  return table.columns.map((c) => c.name).join(ColumnDelimiter) + RecordDelimiter;
}

/** One record of a table; `values` in column order. */
export function rowOf(table: Table, values: readonly Value[]): string {
  const { columns } = table;
  if (values.length !== columns.length) throw new Error(`${table.file}: ${values.length} values for ${columns.length} columns`);
  let row = '';
  for (let i = 0; i < columns.length; i++) {
    const type = columns[i]!.type;
    const value = values[i];
    if (i > 0) row += ColumnDelimiter;
    if (value === null || value === undefined) {
      if (type.kind === 'text') row += '""';
      continue;
    }
    if (type.kind === 'text') row += text(String(typeof value === 'object' ? '' : value), type.maxLength);
    else if (typeof value === 'string') throw new Error(`${table.file}: text for the number column ${columns[i]!.name}`);
    else row += decimal(value, type.accuracy);
  }
  return row + RecordDelimiter;
}

/**
 * An id for a text key column of `maxLength`: as it is when it fits, else a prefix and a digest
 * (ids are keys, so they are never just cut off: two long ids stay apart).
 */
export function idOf(id: string, maxLength: number): string {
  if (Array.from(id).length <= maxLength) return id;
  const digest = createHash('sha256').update(id).digest('hex');
  const keep = Math.max(0, maxLength - 33);
  return `${Array.from(id).slice(0, keep).join('')}~${digest.slice(0, maxLength - keep - 1)}`;
}
