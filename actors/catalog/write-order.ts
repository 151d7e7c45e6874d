/**
 * The order of catalog writes. A batch is written in chunks, in parallel, in any order; every row
 * keeps the order of the write that produced it (`written_at` = when the request arrived,
 * `written_line` = its line in the batch, 0 outside batches) and a write applies only when it is not
 * older, so the later line of a batch wins. Deletes inside batches leave a tombstone for the same
 * reason. Within one chunk, the later line about the same row is the only one written.
 */
export function lastPerKey<T>(items: readonly T[], key: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    const k = key(item);
    byKey.delete(k);
    byKey.set(k, item);
  }
  return [...byKey.values()];
}
