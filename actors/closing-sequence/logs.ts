import { randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { Deflate, Zip, ZipDeflate, type ZipInputFile } from 'fflate';
import { formatLocalDate, localDateOf } from '../../src/domain/closings/schedule.js';
import { createAggregatedReceiptsWriter } from '../../src/domain/dsfinvk/aggregated-receipts.js';
import { createDsfinvkWriter, StreamedTables, type ExportContext, type StreamedTable } from '../../src/domain/dsfinvk/export.js';
import { DtdFile, GdpduDtd, indexXml } from '../../src/domain/dsfinvk/index-xml.js';
import type { ExportOrder } from '../../src/domain/dsfinvk/orders.js';
import { TableOrder, Tables } from '../../src/domain/dsfinvk/tables.js';
import type { Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { eventSubject } from '../../subjects/events.js';
import { logPath, type ClosingEvent, type LogFormat } from '../../subjects/closings.js';
import { claimLogRun, dropStaged, finishLogRun, insertChunk, stagedChunks } from './log-sql.js';
import { findClosing, ordersPage, type ClosingRow } from './sql.js';

/**
 * Writes the logs of a closing after it was stored (state not_present → present). The orders are
 * read page by page and their rows go straight into the file's chunks in Postgres, so a closing of
 * 50 000 orders is never held whole: memory holds one page of orders and the chunks being written.
 *
 * A DSFinV-K export is a zip (fflate's streaming Zip). Its per-order tables are written in one
 * pass over the orders, each deflated into a staging part of its own; then the zip is assembled
 * member by member (index.xml, the DTD, the 20 tables), the per-order ones fed from their staged
 * parts, so no member ever waits in memory for the one before it.
 */
export interface LogWriterDeps {
  sql: Sql;
  log: Logger;
  software: { brand: string; version: string };
  eventsWritten(): void;
}

const ChunkBytes = 256 * 1024;
const OrdersPerPage = 2000;
const StagedChunksPerRead = 16;
const DeflateLevel = 6;

const utf8 = new TextEncoder();

export const LogFiles: Record<LogFormat, { contentType: string; extension: string }> = {
  dsfinvk_2023_03: { contentType: 'application/zip', extension: 'zip' },
  aggregated_receipts: { contentType: 'text/csv; charset=utf-8', extension: 'csv' },
};

/** Writes every log of a closing that is not written yet. */
export async function writeLogs(deps: LogWriterDeps, logs: ReadonlyArray<{ id: string; format: LogFormat }>): Promise<void> {
  for (const log of logs) await writeLog(deps, log.id);
}

async function writeLog(deps: LogWriterDeps, logId: string): Promise<void> {
  const { sql } = deps;
  const generation = randomUUID();
  const target = await claimLogRun(sql, logId, generation);
  if (!target) return;
  const closing = await findClosing(sql, target.project, target.shop_id, Number(target.closing_sequence_number));
  if (!closing) throw new Error(`log ${logId} has no closing`);
  const store = createChunkStore(sql, logId, generation);
  const started = performance.now();
  if (target.format === 'dsfinvk_2023_03') await writeDsfinvk(deps, closing, store);
  else await writeAggregatedReceipts(sql, closing, store);
  await store.end(0);
  await dropStaged(sql, logId, generation);

  const file = LogFiles[target.format];
  const number = Number(closing.sequence_number);
  const fileName = `${target.format}_${closing.shop_id.replace(/[^A-Za-z0-9._-]/g, '_')}_${number}.${file.extension}`;
  const id = Number(logId);
  const finished = await finishLogRun(sql, logId, generation, { contentType: file.contentType, fileName, size: store.size(0) }, (writtenAt) => {
    const payload: ClosingEvent = {
      project: closing.project,
      shopID: closing.shop_id,
      at: writtenAt.toISOString(),
      event: 'logPresent',
      sequenceNumber: number,
      log: { id, format: target.format, state: 'present' },
      links: { self: { href: logPath(closing.project, id) } },
    };
    return { subject: eventSubject(closing.project, 'closing', closing.shop_id, 'logPresent'), payload };
  });
  if (finished) deps.eventsWritten();
  deps.log.info({ logId, format: target.format, bytes: store.size(0), ms: Math.round(performance.now() - started), finished }, 'closing log written');
}

/** The closing's orders, page by page, parsed. */
async function* ordersOf(sql: Sql, closing: ClosingRow): AsyncGenerator<ExportOrder[]> {
  const scope = {
    project: closing.project,
    shopId: closing.shop_id,
    after: Number(closing.first_order_sequence_number) - 1,
    last: Number(closing.last_order_sequence_number),
    includeAllStates: closing.include_all_states,
  };
  for (;;) {
    const rows = await ordersPage(sql, scope, OrdersPerPage);
    if (rows.length) yield rows.map((r) => JSON.parse(r.doc) as ExportOrder);
    if (rows.length < OrdersPerPage) return;
    scope.after = Number(rows.at(-1)!.sequence_number);
  }
}

async function writeAggregatedReceipts(sql: Sql, closing: ClosingRow, store: ChunkStore): Promise<void> {
  const writer = createAggregatedReceiptsWriter(closing.tax_rates, closing.currency);
  store.write(0, utf8.encode(writer.header));
  for await (const orders of ordersOf(sql, closing)) {
    store.write(0, utf8.encode(orders.map((o) => writer.row(o)).join('')));
    await store.drain();
  }
}

function exportContext(deps: LogWriterDeps, closing: ClosingRow): ExportContext {
  const { company, shop } = closing;
  return {
    shopId: closing.shop_id,
    closingNumber: Number(closing.sequence_number),
    createdAt: closing.created_at,
    zone: closing.zone,
    // The business day the closing books: that of its cut-off (a closing at 00:00 books the day before).
    bookingDay: formatLocalDate(localDateOf(closing.cut_off_at.getTime() - 1, closing.zone)),
    currency: closing.currency,
    company: {
      name: company.companyName,
      street: company.companyAdress.street,
      zip: company.companyAdress.zip,
      city: company.companyAdress.city,
      country: company.companyAdress.country,
      taxNumber: company.taxNumber,
      vatID: company.vatID,
    },
    location: { name: shop.name, street: shop.street, zip: shop.zip, city: shop.city, country: shop.country },
    software: deps.software,
  };
}

interface StagedMember {
  part: number;
  deflate: Deflate;
  crc: number;
  size: number;
  pieces: string[];
}

async function writeDsfinvk(deps: LogWriterDeps, closing: ClosingRow, store: ChunkStore): Promise<void> {
  const { sql } = deps;
  const ctx = exportContext(deps, closing);
  const members = new Map<StreamedTable, StagedMember>(
    StreamedTables.map((table, index) => {
      const part = index + 1;
      const deflate = new Deflate({ level: DeflateLevel }, (chunk) => store.write(part, chunk));
      return [table, { part, deflate, crc: 0, size: 0, pieces: [] }];
    }),
  );
  const push = (final: boolean) => {
    for (const member of members.values()) {
      const data = utf8.encode(member.pieces.join(''));
      member.pieces = [];
      member.crc = crc32(data, member.crc);
      member.size += data.length;
      member.deflate.push(data, final);
    }
  };
  const writer = createDsfinvkWriter(ctx, (table, text) => members.get(table)!.pieces.push(text));
  for await (const orders of ordersOf(sql, closing)) {
    for (const order of orders) writer.addOrder(order);
    push(false);
    await store.drain();
  }
  push(true);
  for (const member of members.values()) await store.end(member.part);
  const tables = writer.finish();

  // Assembly: every member is complete when it is added, so the zip streams each straight out.
  let failure: Error | undefined;
  const zip = new Zip((err, data) => {
    if (err) failure = err;
    else store.write(0, data);
  });
  const mtime = closing.created_at;
  const addText = (filename: string, text: string) => {
    const file = new ZipDeflate(filename, { level: DeflateLevel });
    file.mtime = mtime;
    zip.add(file);
    file.push(utf8.encode(text), true);
  };
  addText('index.xml', indexXml(
    { name: ctx.company.name || ctx.location.name, location: [ctx.company.street, `${ctx.company.zip} ${ctx.company.city}`.trim()].filter(Boolean).join(', '), comment: 'DSFinV-K 2.3' },
    `Kassenabschluss ${ctx.closingNumber} der Kasse ${ctx.shopId}`,
  ));
  addText(DtdFile, GdpduDtd);
  await store.drain();
  for (const key of TableOrder) {
    const member = members.get(key as StreamedTable);
    if (!member) {
      addText(Tables[key].file, tables.get(key) ?? '');
      continue;
    }
    const file: ZipInputFile = { filename: Tables[key].file, size: member.size, crc: member.crc, compression: 8, mtime };
    zip.add(file);
    let after = -1;
    for (;;) {
      const chunks = await stagedChunks(sql, store.logId, store.generation, member.part, after, StagedChunksPerRead);
      for (const chunk of chunks) file.ondata!(null, new Uint8Array(chunk.data), false);
      await store.drain();
      if (chunks.length < StagedChunksPerRead) break;
      after = chunks.at(-1)!.n;
    }
    file.ondata!(null, new Uint8Array(0), true);
  }
  zip.end();
  if (failure) throw new Error('the zip could not be written', { cause: failure });
}

interface ChunkStore {
  logId: string;
  generation: string;
  /** Appends bytes to a part; full chunks are written in the background (await drain). */
  write(part: number, data: Uint8Array): void;
  /** Waits for the chunks written so far. */
  drain(): Promise<void>;
  /** Writes what is left of a part as its last chunk, and waits. */
  end(part: number): Promise<void>;
  size(part: number): number;
}

function createChunkStore(sql: Sql, logId: string, generation: string): ChunkStore {
  const parts = new Map<number, { buffers: Uint8Array[]; length: number; n: number; size: number }>();
  let pending: Array<Promise<void>> = [];
  const partOf = (part: number) => {
    let state = parts.get(part);
    if (!state) {
      state = { buffers: [], length: 0, n: 0, size: 0 };
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
    size: (part) => parts.get(part)?.size ?? 0,
  };
}
