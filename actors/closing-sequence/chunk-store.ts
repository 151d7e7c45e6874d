import type { Sql, TransactionSql } from '../../src/infra/postgres.js';
import { insertChunk } from './log-sql.js';

/**
 * Where a log's bytes go as they are written: per part, appended and cut into chunks of 256 KB,
 * each inserted into Postgres in the background; drain() waits for them. A log of any size is
 * never held whole.
 */
const ChunkBytes = 256 * 1024;

export interface ChunkStore {
  logId: string;
  generation: string;
  /** Appends bytes to a part; full chunks are written in the background (await drain). */
  write(part: number, data: Uint8Array): void;
  /** Waits for the chunks written so far. */
  drain(): Promise<void>;
  /** Writes what is left of a part as its last chunk, and waits. */
  end(part: number): Promise<void>;
  /** Waits until no chunk is being written any more, whether the writes succeeded or not. */
  settle(): Promise<void>;
  size(part: number): number;
}

/**
 * `sql` may be a transaction (a batch appends its chunks in the transaction that records it);
 * `firstChunk` is where numbering goes on (a batch log's next chunk).
 */
export function createChunkStore(sql: Sql | TransactionSql, logId: string, generation: string, firstChunk = 0): ChunkStore {
  const parts = new Map<number, { buffers: Uint8Array[]; length: number; n: number; size: number }>();
  let pending: Array<Promise<void>> = [];
  const partOf = (part: number) => {
    let state = parts.get(part);
    if (!state) {
      state = { buffers: [], length: 0, n: part === 0 ? firstChunk : 0, size: 0 };
      parts.set(part, state);
    }
    return state;
  };
  const cut = (part: number) => {
    const state = partOf(part);
    if (!state.length) return;
    const chunk = Buffer.concat(state.buffers, state.length);
    state.buffers = [];
    state.length = 0;
    const written = insertChunk(sql, logId, generation, part, state.n++, chunk);
    // Awaited in drain(); handled here so a failure before then is not an unhandled rejection.
    written.catch(() => {});
    pending.push(written);
  };
  const drain = async () => {
    const waiting = pending;
    pending = [];
    await Promise.all(waiting);
  };
  return {
    logId,
    generation,
    write(part, data) {
      if (!data.length) return;
      const state = partOf(part);
      state.buffers.push(data);
      state.length += data.length;
      state.size += data.length;
      if (state.length >= ChunkBytes) cut(part);
    },
    drain,
    async end(part) {
      cut(part);
      await drain();
    },
    async settle() {
      const waiting = pending;
      pending = [];
      await Promise.allSettled(waiting);
    },
    size: (part) => parts.get(part)?.size ?? 0,
  };
}
