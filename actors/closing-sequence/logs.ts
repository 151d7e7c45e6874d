import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { constants, crc32, deflateRaw } from 'node:zlib';
import { Zip, ZipDeflate, type ZipInputFile } from 'fflate';
import { formatLocalDate, localDateOf } from '../../src/domain/closings/schedule.js';
import { readFiscalReference } from '../../src/domain/fiscal/reference.js';
import { createAggregatedReceiptsWriter } from '../../src/domain/dsfinvk/aggregated-receipts.js';
import { createDsfinvkWriter, StreamedTables, type ExportContext, type StreamedTable } from '../../src/domain/dsfinvk/export.js';
import { DtdFile, GdpduDtd, indexXml } from '../../src/domain/dsfinvk/index-xml.js';
import type { ExportOrder } from '../../src/domain/dsfinvk/orders.js';
import { TableOrder, Tables } from '../../src/domain/dsfinvk/tables.js';
import type { Sql } from '../../src/infra/postgres.js';
import type { Logger } from '../../src/logger.js';
import { readFiscalization } from '../settings/sql.js';
import { logPath, type LogFormat } from '../../subjects/closings.js';
import { createChunkStore, type ChunkStore } from './chunk-store.js';
import { event } from './close.js';
import { claimLogRun, dropRun, dropStaged, finishLogRun, stagedChunks } from './log-sql.js';
import { findClosing, projectedOrdersPage, type ClosingRow, type ProjectedOrder } from './read-sql.js';

/**
 * Writes the logs of a closing after it was stored (state not_present → present). The orders are
 * read page by page and their rows go straight into the file's chunks in Postgres, so a closing of
 * 50 000 orders is never held whole: memory holds one page of orders and the chunks being written.
 *
 * A DSFinV-K export is a zip (fflate's streaming Zip). Its per-order tables are written in one
 * pass over the orders: the largest (lines.csv) straight into the zip, each other one deflated into
 * a staging part of its own; then the zip is completed member by member, the staged ones fed from
 * their parts, so no member ever waits in memory for the one before it.
 */
export interface LogWriterDeps {
  sql: Sql;
  log: Logger;
  software: { brand: string; version: string };
  eventsWritten(): void;
}

const OrdersPerPage = 2000;
const StagedChunksPerRead = 16;
/** Deflate level of the small members (fflate) and of the per-order members (zlib, in the thread pool). */
const DeflateLevel = 6;
const MemberLevel = 1;

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
  let phases: Phases;
  try {
    phases = target.format === 'dsfinvk_2023_03' ? await writeDsfinvk(deps, closing, store) : await writeAggregatedReceipts(sql, closing, store);
    await store.end(0);
    await dropStaged(sql, logId, generation);
  } catch (err) {
    // The log stays not_present (a half-written file is never served) and the work is tried again;
    // the failed run's chunks would otherwise stay behind until a later run finishes.
    await store.settle();
    await dropRun(sql, logId, generation).catch((dropErr: unknown) => deps.log.warn({ err: dropErr, logId }, 'chunks of a failed closing log run were left behind'));
    throw err;
  }

  const file = LogFiles[target.format];
  const number = Number(closing.sequence_number);
  const fileName = `${target.format}_${closing.shop_id.replace(/[^A-Za-z0-9._-]/g, '_')}_${number}.${file.extension}`;
  const id = Number(logId);
  const finished = await finishLogRun(sql, logId, generation, { contentType: file.contentType, fileName, size: store.size(0) }, (writtenAt) =>
    event(closing.project, closing.shop_id, {
      project: closing.project,
      shopID: closing.shop_id,
      at: writtenAt.toISOString(),
      event: 'logPresent',
      sequenceNumber: number,
      log: { id, format: target.format, state: 'present', kind: 'closing' },
      links: { self: { href: logPath(closing.project, id) } },
    }),
  );
  if (finished) deps.eventsWritten();
  deps.log.info({ logId, format: target.format, bytes: store.size(0), ms: Math.round(performance.now() - started), phases, finished }, 'closing log written');
}

/**
 * The closing's orders, page by page, with the members the logs read. The next page is asked for
 * while the caller works on this one, so Postgres cuts it out of the documents meanwhile.
 */
async function* ordersOf(sql: Sql, closing: ClosingRow): AsyncGenerator<ExportOrder[]> {
  const scope = {
    project: closing.project,
    shopId: closing.shop_id,
    after: Number(closing.first_order_sequence_number) - 1,
    last: Number(closing.last_order_sequence_number),
    includeAllStates: closing.include_all_states,
  };
  const fetchFrom = (after: number) => projectedOrdersPage(sql, { ...scope, after }, OrdersPerPage).then((rows) => [...rows]);
  let page = fetchFrom(scope.after);
  for (;;) {
    const rows = await page;
    const full = rows.length === OrdersPerPage;
    if (full) page = fetchFrom(Number(rows.at(-1)!.sequence_number));
    if (rows.length) yield rows.map(toExportOrder);
    if (!full) return;
  }
}

function toExportOrder(row: ProjectedOrder): ExportOrder {
  return {
    id: row.id,
    sequenceNumber: Number(row.sequence_number),
    state: row.state,
    startedAt: row.started_at,
    finalizedAt: row.finalized_at,
    paymentMethod: row.payment_method,
    paidAmount: Number(row.paid_amount),
    lineItems: (row.line_items ?? []) as ExportOrder['lineItems'],
    price: row.price,
    checkoutDevice: row.checkout_device ?? undefined,
    fiscalReference: readFiscalReference(row.fiscal_reference),
  };
}

async function writeAggregatedReceipts(sql: Sql, closing: ClosingRow, store: ChunkStore): Promise<Phases> {
  const { phases, lap } = stopwatch();
  const writer = createAggregatedReceiptsWriter(closing.tax_rates, closing.currency);
  store.write(0, utf8.encode(writer.header));
  for await (const orders of ordersOf(sql, closing)) {
    lap('fetch');
    store.write(0, utf8.encode(orders.map((o) => writer.row(o)).join('')));
    lap('rows');
    await store.drain();
    lap('drain');
  }
  return phases;
}

/** Where a log's writing time goes (milliseconds per phase), for the log line that reports it. */
type Phases = Record<'fetch' | 'rows' | 'push' | 'drain' | 'assemble', number>;

function stopwatch() {
  const phases: Phases = { fetch: 0, rows: 0, push: 0, drain: 0, assemble: 0 };
  let mark = performance.now();
  const lap = (phase: keyof Phases) => {
    const now = performance.now();
    phases[phase] += Math.round(now - mark);
    mark = now;
  };
  return { phases, lap };
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
  crc: number;
  size: number;
  pieces: string[];
}

const deflateSegment = promisify(deflateRaw);

/** The per-order table streamed straight into the zip (the largest); the others are staged. */
const LiveTable: StreamedTable = 'lines';

async function writeDsfinvk(deps: LogWriterDeps, closing: ClosingRow, store: ChunkStore): Promise<Phases> {
  const { sql } = deps;
  const ctx = exportContext(deps, closing);
  const { phases, lap } = stopwatch();
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
  const addDeflated = (filename: string) => {
    const file: ZipInputFile = { filename, size: 0, crc: 0, compression: 8, mtime };
    zip.add(file);
    return file;
  };
  // The zip's members in this order: index.xml and the DTD; lines.csv, the largest, streamed into
  // the zip as the orders are read; the other per-order tables, staged meanwhile; the tables of
  // sums, known at the end. (The members' order is free: index.xml names each by its file.)
  addText('index.xml', indexXml(
    { name: ctx.company.name || ctx.location.name, location: [ctx.company.street, `${ctx.company.zip} ${ctx.company.city}`.trim()].filter(Boolean).join(', '), comment: 'DSFinV-K 2.3' },
    `Kassenabschluss ${ctx.closingNumber} der Kasse ${ctx.shopId}`,
  ));
  addText(DtdFile, GdpduDtd);
  const live = addDeflated(Tables[LiveTable].file);
  const members = new Map<StreamedTable, StagedMember>(StreamedTables.map((table, index) => [table, { part: index + 1, crc: 0, size: 0, pieces: [] }]));
  const place = (member: StagedMember, segment: Buffer) => {
    if (member === members.get(LiveTable)) live.ondata!(null, new Uint8Array(segment), false);
    else store.write(member.part, segment);
  };
  // Each page of a member is deflated on its own in the thread pool (a sync flush ends each
  // segment on a byte boundary, so the segments make one deflate stream), while the next page is
  // read and written; the segments reach the store in order.
  let deflating: Promise<Array<[StagedMember, Buffer]>> = Promise.resolve([]);
  const push = async (final: boolean) => {
    const segments = [...members.values()].map(async (member): Promise<[StagedMember, Buffer]> => {
      const data = utf8.encode(member.pieces.join(''));
      member.pieces = [];
      member.crc = crc32(data, member.crc);
      member.size += data.length;
      return [member, await deflateSegment(data, { level: MemberLevel, finishFlush: final ? constants.Z_FINISH : constants.Z_SYNC_FLUSH })];
    });
    const previous = deflating;
    deflating = Promise.all(segments);
    for (const [member, segment] of await previous) place(member, segment);
  };
  // The project's choice: a project signing nothing (`none`) has its reason written into the TSE tables.
  const chosen = await readFiscalization(sql, closing.project);
  const writer = createDsfinvkWriter(ctx, (table, text) => members.get(table)!.pieces.push(text), chosen && { provider: chosen.provider, ...(chosen.reason ? { reason: chosen.reason } : {}) });
  await store.drain();
  lap('assemble');
  for await (const orders of ordersOf(sql, closing)) {
    lap('fetch');
    for (const order of orders) writer.addOrder(order);
    lap('rows');
    await push(false);
    lap('push');
    await store.drain();
    lap('drain');
  }
  await push(true);
  for (const [member, segment] of await deflating) place(member, segment);
  const liveMember = members.get(LiveTable)!;
  live.size = liveMember.size;
  live.crc = liveMember.crc;
  live.ondata!(null, new Uint8Array(0), true);
  for (const member of members.values()) if (member !== liveMember) await store.end(member.part);
  const tables = writer.finish();

  for (const key of TableOrder) {
    if (key === LiveTable) continue;
    const member = members.get(key as StreamedTable);
    if (!member) {
      addText(Tables[key].file, tables.get(key) ?? '');
      continue;
    }
    const file = addDeflated(Tables[key].file);
    file.size = member.size;
    file.crc = member.crc;
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
  lap('assemble');
  if (failure) throw new Error('the zip could not be written', { cause: failure });
  return phases;
}
