import type { z } from 'zod';
import { describeUnstorable, findUnstorableText } from '../../subjects/formats/json.js';

/** One line of an import chunk: its parsed item, or why it has none. */
export type ParsedLine<T> =
  | { line: number; ok: true; value: T }
  | { line: number; ok: false; message: string; raw: unknown };

export function parseLines<S extends z.ZodType>(lines: ReadonlyArray<readonly [number, string]>, schema: S): Array<ParsedLine<z.output<S>>> {
  return lines.map(([line, text]) => {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return { line, ok: false, message: `line ${line} is not valid JSON`, raw: undefined };
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) return { line, ok: false, message: describeIssues(parsed.error), raw };
    const unstorable = findUnstorableText(parsed.data);
    if (unstorable) return { line, ok: false, message: describeUnstorable(unstorable), raw };
    return { line, ok: true, value: parsed.data };
  });
}

/** "codes.0.code: Too small ...; name: ..." — the first few issues, enough to fix the line. */
export function describeIssues(error: z.ZodError, max = 3): string {
  const issues = error.issues.slice(0, max).map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message));
  const more = error.issues.length > max ? ` (and ${error.issues.length - max} more)` : '';
  return `${issues.join('; ')}${more}`;
}
