import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Endpoint } from '../../subjects/contract.js';
import type { ImportChunk } from '../../subjects/imports.js';
import { AppError, isAppError } from '../errors.js';
import { stringAt, tryParseJson } from '../json.js';
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

const ChunkBytes = 256 * 1024;
const ChunkItems = 1000;
const ChunksInFlight = 6;
const ChunkTimeoutMs = 60_000;

/** The API reads JSON and ndjson only: other bodies, text/plain included, are 415. */
export function registerNdjson(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser(NdjsonTypes, { parseAs: 'string', bodyLimit: BatchBodyLimit }, (_request, body, done) => done(null, body));
}

export type BatchLine = [line: number, text: string];

/** The items of a batch body with their line numbers; 413 batch_too_large above the limits. */
export function batchLines(body: unknown): BatchLine[] {
  if (typeof body === 'string') {
    const lines: BatchLine[] = [];
    let start = 0;
    let number = 0;
    while (start <= body.length) {
      let end = body.indexOf('\n', start);
      if (end === -1) end = body.length;
      number++;
      const text = body.slice(start, end).trim();
      if (text) {
        if (lines.length === BatchLimits.ndjson) throw tooLarge(`an ndjson batch holds at most ${BatchLimits.ndjson} items`);
        lines.push([number, text]);
      }
      start = end + 1;
    }
    if (!lines.length) throw AppError.badRequest('the batch is empty');
    return lines;
  }
  if (Array.isArray(body)) {
    if (body.length > BatchLimits.json) throw tooLarge(`a JSON batch holds at most ${BatchLimits.json} items; send more as ndjson`);
    if (!body.length) throw AppError.badRequest('the batch is empty');
    return body.map((item, i) => [i + 1, JSON.stringify(item)]);
  }
  throw AppError.badRequest('a batch is ndjson (application/x-ndjson, one item per line) or a JSON array');
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
  lines: BatchLine[];
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
  const chunks = chunk(batch.lines);
  const send = (lines: BatchLine[]): Promise<{ results: R[] }> =>
    batch.client.call(batch.endpoint, { project: batch.project, batchAt, lines }, { timeoutMs: ChunkTimeoutMs });

  const first = await send(chunks[0] ?? []);
  const ndjson = !Array.isArray(request.body);

  async function* results(): AsyncGenerator<R> {
    yield* first.results;
    const pending: Array<Promise<R[]>> = [];
    let next = 1;
    const start = () => {
      const lines = chunks[next++] ?? [];
      pending.push(
        send(lines).then(
          (r) => r.results,
          (err: unknown) => {
            const message = isAppError(err) && err.status < 500 ? err.message : `not confirmed: ${isAppError(err) ? err.message : 'internal error'}; imports are idempotent, send these items again`;
            if (!isAppError(err) || err.status >= 500) request.log.warn({ err, lines: lines.length }, 'import chunk failed');
            return lines.map((line) => batch.failed(line, message));
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

function chunk(lines: BatchLine[]): BatchLine[][] {
  const chunks: BatchLine[][] = [];
  let current: BatchLine[] = [];
  let bytes = 0;
  for (const line of lines) {
    if (current.length && (bytes + line[1].length > ChunkBytes || current.length === ChunkItems)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(line);
    bytes += line[1].length;
  }
  if (current.length) chunks.push(current);
  return chunks;
}

/** Best effort, for a line a worker never answered for: a string field of the item, if readable. */
export function fieldOf(text: string, ...path: string[]): string {
  return stringAt(tryParseJson(text), ...path);
}
