/**
 * A list too large for one message travels in parts: a worker answers one part per request, its items
 * as JSON texts (`{items: string[], next}`), and the edge asks for the part after `next` until none
 * follows (src/edge/streams.ts `inParts`).
 */
export interface TextPage<K> {
  texts: string[];
  /** The key of the last row answered, to read the next part after; null when no part follows. */
  next: K | null;
}

/**
 * One part of a list: the texts of `rows` (read with at most `limit` rows) that fit in `maxBytes` as
 * the reply carries them. A part holds at least one row and never more than a message carries.
 */
export function textPage<R, K>(rows: readonly R[], limit: number, maxBytes: number, toText: (row: R) => string, keyOf: (row: R) => K): TextPage<K> {
  const texts: string[] = [];
  let bytes = 0;
  for (const row of rows) {
    const text = toText(row);
    // As the reply carries it: a JSON string in an array (its quotes and backslashes escaped again), and a comma.
    const size = Buffer.byteLength(JSON.stringify(text)) + 1;
    if (texts.length && bytes + size > maxBytes) break;
    texts.push(text);
    bytes += size;
  }
  // Rows left over, or as many rows as were asked for: more may follow.
  const more = texts.length < rows.length || rows.length === limit;
  return { texts, next: more && texts.length ? keyOf(rows[texts.length - 1]!) : null };
}
