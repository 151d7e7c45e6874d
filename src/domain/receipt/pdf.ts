import PDFDocument from 'pdfkit';
import type { Font } from 'fontkit';
import type { ReceiptLayout, ReceiptLine, ReceiptTse } from './layout.js';
import { qrModules, qrPng } from './qr.js';

/**
 * Draws a receipt layout as a PDF with pdfkit's public API: an 80 mm wide strip, one page as long as
 * the receipt (the longest ones continue on further pages of at most MaxPageHeight). Text is set
 * with `doc.text()` in an embedded TrueType font that covers €, umlauts and ß (pdfkit subsets it to
 * the glyphs used); bold rows are the same glyphs filled and stroked; the TSE's DFKA code and the
 * order id are QR codes drawn as 1-bit images (`doc.image()` of a PNG: qr.ts). Public API only, so
 * that a pdfkit release that keeps its API keeps receipts (the writer on its internals cost half the
 * CPU per receipt and was dropped: docs/benchmarks.md "Receipts on pdfkit's public API").
 */
export interface ReceiptFonts {
  /**
   * Parsed once per process and shared by every document (pdfkit takes a fontkit font as it is):
   * parsing a font costs more than a receipt. One font only: bold rows are the same glyphs filled
   * and stroked, which keeps a second font subset out of every receipt.
   */
  regular: Font;
}

const Width = 226.77; // 80 mm
const Margin = 12;
const ContentWidth = Width - 2 * Margin;
const MaxPageHeight = 14_400; // 200 inches, the largest page PDF readers take; longer receipts get pages
const AmountWidth = 62;
const MarkWidth = 10;
const TextWidth = ContentWidth - AmountWidth - MarkWidth - 4;
const Body = { size: 8, lead: 10.5 };
const Small = { size: 7.5, lead: 9.5 };
const Large = { size: 11, lead: 14.5 };
const NameRows = 3;
const BoldStroke = 0.045; // stroke width of bold rows, per point of font size
const QrModule = 2.6;
const QrQuiet = 2; // modules of white around the code; the page's margin adds to it

type Weight = 'regular' | 'bold';
type Size = typeof Body;

interface Block {
  height: number;
  draw(doc: PDFKit.PDFDocument, y: number): void;
}

function writeReceiptPdf(layout: ReceiptLayout, fonts: ReceiptFonts): PDFKit.PDFDocument {
  const blocks = plan(layout, fonts.regular);
  const total = blocks.reduce((sum, b) => sum + b.height, 0) + 2 * Margin;
  const pageHeight = Math.min(Math.ceil(total), MaxPageHeight);
  const doc = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    lang: layout.language,
    displayTitle: true,
    info: { Title: layout.title, Author: layout.author, Subject: layout.qr, Creator: 'checkout-platform', CreationDate: layout.createdAt, ModDate: layout.createdAt },
    // The receipt's font as the document's (a fontkit font, which pdfkit takes as it is since
    // 0.20), not Helvetica, whose metrics pdfkit read for every document.
    font: fonts.regular as unknown as string,
  });
  let y = Infinity; // the first block starts the first page
  for (const block of blocks) {
    if (y + block.height > pageHeight - Margin && y > Margin) {
      doc.addPage({ size: [Width, pageHeight], margin: Margin });
      y = Margin;
    }
    block.draw(doc, y);
    y += block.height;
  }
  doc.end();
  return doc;
}

/** The whole PDF in memory: what the receipts cache stores. */
export async function renderReceiptPdf(layout: ReceiptLayout, fonts: ReceiptFonts): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of writeReceiptPdf(layout, fonts) as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function plan(layout: ReceiptLayout, font: Font): Block[] {
  const blocks: Block[] = [];
  layout.header.forEach((row, i) => blocks.push(i === 0 ? centered(row, 'bold', Large) : centered(row, 'regular', Body)));
  blocks.push(gap(6), centered(layout.title, 'bold', Body), gap(2));
  for (const [label, value] of layout.sale) blocks.push(pair(label, value, 'regular', Body));
  blocks.push(rule());
  for (const line of layout.lines) blocks.push(...lineBlocks(line, font));
  blocks.push(rule());
  blocks.push(pair(layout.total.label, layout.total.amount, 'bold', Large));
  blocks.push(gap(4));
  for (const [label, value] of layout.payment) blocks.push(pair(label, value, 'regular', Body));
  blocks.push(rule());
  blocks.push(columns(layout.taxTable.head, 'bold'));
  for (const row of layout.taxTable.rows) blocks.push(columns(row, 'regular'));
  blocks.push(columns(layout.taxTable.sum, 'bold'));
  blocks.push(rule());
  if (layout.tse) blocks.push(...tseBlocks(layout.tse, font), rule());
  for (const row of layout.footer) blocks.push(centered(row, 'regular', Body));
  blocks.push(gap(6), qrCode(layout.qr), centered(layout.qrCaption, 'regular', Small));
  return blocks;
}

function gap(height: number): Block {
  return { height, draw: () => {} };
}

function rule(): Block {
  return {
    height: 8,
    draw(doc, y) {
      doc.save().moveTo(Margin, y + 4).lineTo(Width - Margin, y + 4).lineWidth(0.5).dash(2, { space: 1.5 }).stroke().undash().restore();
    },
  };
}

function centered(text: string, weight: Weight, size: Size): Block {
  return { height: size.lead, draw: (doc, y) => put(doc, text, weight, size, Margin, y, ContentWidth, 'center') };
}

function pair(label: string, value: string, weight: Weight, size: Size): Block {
  return {
    height: size.lead,
    draw(doc, y) {
      const valueWidth = Math.min(widthOf(doc, value, size.size), ContentWidth * 0.7);
      put(doc, label, weight, size, Margin, y, ContentWidth - valueWidth - 4, 'left');
      put(doc, value, weight, size, Width - Margin - valueWidth, y, valueWidth, 'right');
    },
  };
}

/** A line item: its text (wrapped to at most NameRows rows), amount and tax mark, then its details. */
function lineBlocks(line: ReceiptLine, font: Font): Block[] {
  const indent = line.kind === 'item' ? 0 : 6;
  const width = TextWidth - indent;
  const [first = '', ...more] = wrap(font, Body.size, line.text, width, NameRows);
  const main: Block = {
    height: Body.lead,
    draw(doc, y) {
      put(doc, first, 'regular', Body, Margin + indent, y, width, 'left');
      if (line.amount) put(doc, line.amount, 'regular', Body, Margin + TextWidth + 4, y, AmountWidth, 'right');
      if (line.taxMark) put(doc, line.taxMark, 'regular', Body, Width - Margin - MarkWidth, y, MarkWidth, 'right');
    },
  };
  const continued = more.map<Block>((row) => ({ height: Body.lead, draw: (doc, y) => put(doc, row, 'regular', Body, Margin + indent, y, width, 'left') }));
  const details = line.details.map<Block>((detail) => ({
    height: Small.lead,
    draw: (doc, y) => put(doc, detail, 'regular', Small, Margin + indent + 8, y, width - 8, 'left'),
  }));
  return [main, ...continued, ...details];
}

/**
 * Words into rows of at most `width` points, at most `rows` of them (the last cut by put()). Widths
 * come from the glyphs' advances, before the document exists: the page's length depends on them.
 */
function wrap(font: Font, size: number, text: string, width: number, rows: number): string[] {
  const words = text.split(/\s+/u).filter(Boolean);
  const out: string[] = [];
  let row = '';
  for (const word of words) {
    const candidate = row ? `${row} ${word}` : word;
    if (!row || advance(font, size, candidate) <= width || out.length === rows - 1) row = candidate;
    else {
      out.push(row);
      row = word;
    }
  }
  if (row || !out.length) out.push(row);
  return out;
}

function advance(font: Font, size: number, text: string): number {
  // A little room for kerning, which the glyphs' plain advances leave out.
  return (advanceUnits(font, text) * size * 1.02) / font.unitsPerEm;
}

const advances = new WeakMap<Font, Map<string, number>>();
const AdvanceCacheLimit = 20_000;

/** The sum of the plain advances of the text's glyphs (font units), kept per font: words and characters come back receipt after receipt. */
function advanceUnits(font: Font, text: string): number {
  let cache = advances.get(font);
  if (!cache) advances.set(font, (cache = new Map()));
  let units = cache.get(text);
  if (units === undefined) {
    units = 0;
    for (const glyph of font.glyphsForString(text)) units += glyph.advanceWidth;
    if (cache.size >= AdvanceCacheLimit) cache.clear();
    cache.set(text, units);
  }
  return units;
}

/**
 * The TSE block: short values as label and value rows, long ones (serial number, signature: no
 * spaces to break at) under their label, cut into rows of the receipt's width; then the DFKA QR
 * code. On an outage, "TSE-Ausfall" in bold and the reason instead of the signature data.
 */
function tseBlocks(tse: ReceiptTse, font: Font): Block[] {
  const blocks: Block[] = [centered(tse.heading, 'bold', Body), gap(2)];
  if (tse.outage) {
    blocks.push(centered(tse.outage.label, 'bold', Large));
    for (const row of wrap(font, Small.size, tse.outage.reason, ContentWidth, 4)) blocks.push(centered(row, 'regular', Small));
    blocks.push(gap(2));
  }
  for (const row of tse.rows) {
    if (!row.long) {
      blocks.push(pair(row.label, row.value, 'regular', Small));
      continue;
    }
    blocks.push(text(row.label, 'regular', Small, 0));
    for (const part of wrapCharacters(font, Small.size, row.value, ContentWidth - 8)) blocks.push(text(part, 'regular', Small, 8));
  }
  if (tse.qr) blocks.push(gap(4), qrCode(tse.qr));
  return blocks;
}

function text(row: string, weight: Weight, size: Size, indent: number): Block {
  return { height: size.lead, draw: (doc, y) => put(doc, row, weight, size, Margin + indent, y, ContentWidth - indent, 'left') };
}

/** A value without spaces (base64, hex) in rows of at most `width` points, cut between any two characters. */
function wrapCharacters(font: Font, size: number, value: string, width: number): string[] {
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const c of value) {
    const w = advance(font, size, c);
    if (row && used + w > width) {
      rows.push(row);
      row = '';
      used = 0;
    }
    row += c;
    used += w;
  }
  if (row || !rows.length) rows.push(row);
  return rows;
}

/** The tax table's four columns: the rate, then net, tax and gross right-aligned. */
function columns(cells: readonly [string, string, string, string], weight: Weight): Block {
  const first = 46;
  const rest = (ContentWidth - first) / 3;
  return {
    height: Small.lead,
    draw(doc, y) {
      put(doc, cells[0], weight, Small, Margin, y, first, 'left');
      for (let i = 1; i < 4; i++) put(doc, cells[i]!, weight, Small, Margin + first + (i - 1) * rest, y, rest, 'right');
    },
  };
}

/** A QR code centred on the strip, with QrQuiet modules of white above and below it. */
function qrCode(content: string): Block {
  const modules = qrModules(content);
  // A long code (the DFKA one grows with its process data) gets smaller modules rather than less
  // than the standard's four modules of white beside it on the strip.
  const unit = Math.min(QrModule, Width / (modules.size + 8));
  const side = (modules.size + 2 * QrQuiet) * unit;
  const png = qrPng(modules);
  return {
    height: side,
    draw(doc, y) {
      const edge = modules.size * unit;
      doc.image(png, (Width - edge) / 2, y + QrQuiet * unit, { width: edge, height: edge });
    },
  };
}

/** One row of text in a box; text too wide for it is cut with an ellipsis, never wrapped. */
function put(doc: PDFKit.PDFDocument, text: string, weight: Weight, size: Size, x: number, y: number, width: number, align: 'left' | 'right' | 'center'): void {
  if (!text) return;
  const row = fit(doc, text.replace(/[\s\p{Cc}]+/gu, ' ').trim(), size.size, width);
  const free = width - widthOf(doc, row, size.size);
  const left = align === 'left' ? x : align === 'right' ? x + free : x + free / 2;
  // Bold: the same glyphs filled and stroked.
  if (weight === 'bold') doc.lineWidth(size.size * BoldStroke).text(row, left, y, { lineBreak: false, fill: true, stroke: true });
  else doc.text(row, left, y, { lineBreak: false });
}

function widthOf(doc: PDFKit.PDFDocument, text: string, size: number): number {
  return doc.fontSize(size).widthOfString(text);
}

function fit(doc: PDFKit.PDFDocument, text: string, size: number, width: number): string {
  if (widthOf(doc, text, size) <= width) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (widthOf(doc, `${text.slice(0, mid)}…`, size) <= width) low = mid;
    else high = mid - 1;
  }
  return `${text.slice(0, low).trimEnd()}…`;
}
