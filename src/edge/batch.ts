import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Endpoint } from '../../subjects/contract.js';
import type { ImportChunk } from '../../subjects/imports.js';
import { AppError, isAppError } from '../errors.js';
import { stringAt, tryParseJson } from '../../subjects/formats/json.js';
import { asJsonText, jsonArray, ndjson as ndjsonStream } from './streams.js';
import type { ServiceClient } from '../messaging/client.js';

/**
 * Batch imports at the edge. The body is ndjson (one item per line, at most 20000) or a JSON array
 * (at most 500). Lines are not parsed here: they are cut into chunks, sent to the import workers a
 * few at a time, and the workers' per-item results are streamed back in input order.
 */
export const NdjsonTypes = ['application/x-ndjson', 'application/ndjson'];
export const BatchLimits = { ndjson: 20_000, json: 500 } as const;
/** Batch bodies may be large; the size guards the edge's memory, the item limits guard the rest. */
export const BatchBodyLimit = 100 * 1024 * 1024;

/**
 * Chunks are cut by bytes and items. JSON-escaping the lines can grow them (up to twice, for text
 * that is all quotes and backslashes), so a chunk's lines stay under 40% of the server's message
 * limit and at most 512 KB. Measured on 20000 products: 512 KB chunks with 6 in flight import in
 * 1.1-1.2 s, 128 KB with 4 in 1.4-1.6 s.
 */
const MaxChunkBytes = 512 * 1024;
const ChunkItems = 1000;
/** The first chunk goes alone (see sendBatch), so it is kept small. */
const FirstChunkItems = 50;
const ChunksInFlight = 6;
const ChunkTimeoutMs = 60_000;

/** The API reads JSON and ndjson only: other bodies, text/plain included, are 415. */
export function registerNdjson(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  // Kept as bytes: a body with one non-Latin-1 character (a €) would be a UTF-16 string of twice
  // its size, which every line would keep alive. Lines are decoded chunk by chunk when sent.
  app.addContentTypeParser(NdjsonTypes, { parseAs: 'buffer', bodyLimit: BatchBodyLimit }, (_request, body, done) => done(null, body));
}

export type BatchLine = [line: number, text: string];

/** The items of a batch body: where each one is, and its text when it is needed. */
export interface BatchItems {
  readonly count: number;
  /** The line of item i in the body (1-based; for a JSON array, its position). */
  line(i: number): number;
  /** The size of item i (bytes of ndjson, characters of JSON), to cut chunks by. */
  size(i: number): number;
  text(i: number): string;
}

/** The items of a batch body; 413 batch_too_large above the limits. */
export function batchItems(body: unknown): BatchItems {
  if (Buffer.isBuffer(body)) return ndjsonItems(body);
  if (Array.isArray(body)) {
    if (body.length > BatchLimits.json) throw tooLarge(`a JSON batch holds at most ${BatchLimits.json} items; send more as ndjson`);
    if (!body.length) throw AppError.badRequest('the batch is empty');
    const texts = body.map((item) => JSON.stringify(item));
    return { count: texts.length, line: (i) => i + 1, size: (i) => texts[i]?.length ?? 0, text: (i) => texts[i] ?? '' };
  }
  throw AppError.badRequest('a batch is ndjson (application/x-ndjson, one item per line) or a JSON array');
}

const Newline = 0x0a;
const isBlank = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0d;

/** Non-blank lines of ndjson bytes. A newline byte never occurs inside a UTF-8 character. */
function ndjsonItems(body: Buffer): BatchItems {
  const lines: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let number = 0;
  for (let start = 0; start <= body.length; ) {
    let end = body.indexOf(Newline, start);
    if (end === -1) end = body.length;
    number++;
    let from = start;
    let to = end;
    while (from < to && isBlank(body[from])) from++;
    while (to > from && isBlank(body[to - 1])) to--;
    if (to > from) {
      if (lines.length === BatchLimits.ndjson) throw tooLarge(`an ndjson batch holds at most ${BatchLimits.ndjson} items`);
      lines.push(number);
      starts.push(from);
      ends.push(to);
    }
    start = end + 1;
  }
  if (!lines.length) throw AppError.badRequest('the batch is empty');
  return {
    count: lines.length,
    line: (i) => lines[i] ?? 0,
    size: (i) => (ends[i] ?? 0) - (starts[i] ?? 0),
    text: (i) => body.toString('utf8', starts[i], ends[i]),
  };
}

function tooLarge(message: string): AppError {
  return new AppError(413, 'batch_too_large', `${message}; nothing was stored`);
}

/** An import endpoint: a chunk of lines in, one result per line out. */
export type ImportEndpoint<R> = Endpoint<typeof ImportChunk, z.ZodType<{ results: R[] }>>;

export interface BatchImport<R> {
  client: ServiceClient;
  endpoint: ImportEndpoint<R>;
  project: string;
  items: BatchItems;
  /** The result of a line that a worker could not answer for. */
  failed(line: BatchLine, message: string): R;
}

/**
 * Sends the chunks and streams the results. The first chunk goes alone: when no worker can take
 * it, the answer is a plain 503 and nothing was stored. After that, a chunk a worker does not answer
 * turns into error results for its lines, and the other chunks carry on.
 */
export async function sendBatch<R>(request: FastifyRequest, reply: FastifyReply, batch: BatchImport<R>): Promise<FastifyReply> {
  const batchAt = new Date().toISOString();
  const maxBytes = Math.min(MaxChunkBytes, Math.floor(batch.client.maxPayload() * 0.4));
  const chunks = chunk(batch.items, maxBytes);
  const linesOf = ({ from, to }: Chunk): BatchLine[] => Array.from({ length: to - from }, (_, k) => [batch.items.line(from + k), batch.items.text(from + k)]);
  const send = async (range: Chunk): Promise<{ results: R[] }> => {
    const lines = linesOf(range);
    const [only] = lines;
    if (lines.length === 1 && only && batch.items.size(range.from) > maxBytes) {
      return { results: [batch.failed(only, `the item is larger than ${Math.floor(maxBytes / 1024)} KB`)] };
    }
    return batch.client.call(batch.endpoint, { project: batch.project, batchAt, lines }, { timeoutMs: ChunkTimeoutMs });
  };

  const first = await send(chunks[0] ?? { from: 0, to: 0 });
  const ndjson = !Array.isArray(request.body);

  async function* results(): AsyncGenerator<R> {
    yield* first.results;
    const pending: Array<Promise<R[]>> = [];
    let next = 1;
    const start = () => {
      const range = chunks[next++] as Chunk;
      pending.push(
        send(range).then(
          (r) => r.results,
          (err: unknown) => {
            const message = isAppError(err) && err.status < 500 ? err.message : `not confirmed: ${isAppError(err) ? err.message : 'internal error'}; imports are idempotent, send these items again`;
            if (!isAppError(err) || err.status >= 500) request.log.warn({ err, items: range.to - range.from }, 'import chunk failed');
            return linesOf(range).map((line) => batch.failed(line, message));
          },
        ),
      );
    };
    while (next < chunks.length && pending.length < ChunksInFlight) start();
    while (pending.length) {
      const done = await pending.shift()!;
      if (next < chunks.length) start();
      yield* done;
    }
  }

  return reply
    .code(200)
    .type(ndjson ? 'application/x-ndjson' : 'application/json')
    .send(Readable.from(ndjson ? ndjsonStream(asJsonText(results())) : jsonArray(asJsonText(results()))));
}

/** A run of consecutive items, [from, to). */
interface Chunk {
  from: number;
  to: number;
}

/** Items in order, cut into chunks; an item above `maxBytes` is a chunk of its own (refused in send). */
function chunk(items: BatchItems, maxBytes: number): Chunk[] {
  const chunks: Chunk[] = [];
  let from = 0;
  let bytes = 0;
  for (let i = 0; i < items.count; i++) {
    const size = items.size(i);
    const full = i - from === (chunks.length === 0 ? FirstChunkItems : ChunkItems);
    if (i > from && (bytes + size > maxBytes || full)) {
      chunks.push({ from, to: i });
      from = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (items.count > from) chunks.push({ from, to: items.count });
  return chunks;
}

/** Best effort, for a line a worker never answered for: a string field of the item, if readable. */
export function fieldOf(text: string, ...path: string[]): string {
  return stringAt(tryParseJson(text), ...path);
}
