import PDFDocument from 'pdfkit';
import type { Font } from 'fontkit';
import type { ReceiptLayout, ReceiptLine, ReceiptTse } from './layout.js';
import { DocumentFonts, pdfNumber as n, preparedFont, type PageOps, type PreparedFont } from './pdf-text.js';
import { qrImageMask, qrModules } from './qr.js';

/**
 * Draws a receipt layout as a PDF: an 80 mm wide strip, one page as long as the receipt (the
 * longest ones continue on further pages of at most MaxPageHeight). Text is set in an embedded
 * TrueType font that covers €, umlauts and ß (a subset prepared once per font, pdf-text.ts); the
 * TSE's DFKA code and the order id are QR codes drawn as image masks (qr.ts). pdfkit writes
 * the document; the pages' content (text rows, rules, codes) is written here, as pdfkit would.
 */
export interface ReceiptFonts {
  /**
   * Parsed once per process and shared by every document: parsing a font costs more than a
   * receipt. One font only: bold rows are the same glyphs filled and stroked, which keeps a second
   * font subset (a quarter of the file, and of the time to make it) out of every receipt.
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

/** Where blocks draw: the current page's content and images, and the font that sets and measures their text. */
interface Canvas {
  ops: PageOps;
  images: PageImages;
  font: PreparedFont;
}

/** A page's images by resource name: QR codes as image masks of `size` × `size` samples (qr.ts). */
type PageImages = Record<string, { size: number; mask: Uint8Array }>;

interface Block {
  height: number;
  draw(canvas: Canvas, y: number): void;
}

function writeReceiptPdf(layout: ReceiptLayout, fonts: ReceiptFonts): PDFKit.PDFDocument {
  const font = preparedFont(fonts.regular);
  const blocks = plan(layout, font);
  const total = blocks.reduce((sum, b) => sum + b.height, 0) + 2 * Margin;
  const pageHeight = Math.min(Math.ceil(total), MaxPageHeight);
  // The pages' content first: the fonts a document embeds depend on the glyphs all its rows use.
  const pages: PageOps[] = [[]];
  const images: PageImages[] = [{}];
  let y = Margin;
  for (const block of blocks) {
    if (y + block.height > pageHeight - Margin && y > Margin) {
      pages.push([]);
      images.push({});
      y = Margin;
    }
    block.draw({ ops: pages.at(-1)!, images: images.at(-1)!, font }, y);
    y += block.height;
  }
  const documentFonts = new DocumentFonts(font, pages);
  const doc = new PDFDocument({
    autoFirstPage: false,
    // Every stream is deflated here, at levels of our choosing (pdfkit's is the default level).
    compress: false,
    lang: layout.language,
    displayTitle: true,
    // No default font: pdfkit would load its Helvetica metrics for every document.
    font: null as never,
    info: { Title: layout.title, Author: layout.author, Subject: layout.qr, Creator: 'checkout-platform', CreationDate: layout.createdAt, ModDate: layout.createdAt },
  });
  pages.forEach((ops, i) => {
    const page = doc.addPage({ size: [Width, pageHeight], margin: Margin }).page as PDFKit.PDFPage & { xobjects: Record<string, PDFKit.PDFKitReference> };
    Object.assign(page.fonts, documentFonts.embed(doc));
    for (const [name, { size, mask }] of Object.entries(images[i]!)) {
      const image = doc.ref({ Type: 'XObject', Subtype: 'Image', Width: size, Height: size, ImageMask: true, BitsPerComponent: 1 });
      image.end(mask);
      page.xobjects[name] = image;
    }
    // After pdfkit's own content (the matrix it draws top-down with), a stream of ours.
    const content = doc.ref({ Filter: 'FlateDecode' });
    content.end(documentFonts.content(ops, pageHeight));
    Object.assign(page.dictionary.data, { Contents: [page.content, content] });
  });
  doc.end();
  return doc;
}

/** The whole PDF in memory: what the receipts cache stores. */
export async function renderReceiptPdf(layout: ReceiptLayout, fonts: ReceiptFonts): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of writeReceiptPdf(layout, fonts) as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function plan(layout: ReceiptLayout, font: PreparedFont): Block[] {
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

type Weight = 'regular' | 'bold';
type Size = typeof Body;

function gap(height: number): Block {
  return { height, draw: () => {} };
}

function rule(): Block {
  return {
    height: 8,
    draw({ ops }, y) {
      ops.push(`q\n${Margin} ${n(y + 4)} m\n${n(Width - Margin)} ${n(y + 4)} l\n0.5 w\n[2 1.5] 0 d\nS\n[] 0 d\nQ`);
    },
  };
}

function centered(text: string, weight: Weight, size: Size): Block {
  return { height: size.lead, draw: (canvas, y) => put(canvas, text, weight, size, Margin, y, ContentWidth, 'center') };
}

function pair(label: string, value: string, weight: Weight, size: Size): Block {
  return {
    height: size.lead,
    draw(canvas, y) {
      const valueWidth = Math.min(canvas.font.widthOf(value, size.size), ContentWidth * 0.7);
      put(canvas, label, weight, size, Margin, y, ContentWidth - valueWidth - 4, 'left');
      put(canvas, value, weight, size, Width - Margin - valueWidth, y, valueWidth, 'right');
    },
  };
}

/** A line item: its text (wrapped to at most NameRows rows), amount and tax mark, then its details. */
function lineBlocks(line: ReceiptLine, font: PreparedFont): Block[] {
  const indent = line.kind === 'item' ? 0 : 6;
  const width = TextWidth - indent;
  const [first = '', ...more] = wrap(font, Body.size, line.text, width, NameRows);
  const main: Block = {
    height: Body.lead,
    draw(canvas, y) {
      put(canvas, first, 'regular', Body, Margin + indent, y, width, 'left');
      if (line.amount) put(canvas, line.amount, 'regular', Body, Margin + TextWidth + 4, y, AmountWidth, 'right');
      if (line.taxMark) put(canvas, line.taxMark, 'regular', Body, Width - Margin - MarkWidth, y, MarkWidth, 'right');
    },
  };
  const continued = more.map<Block>((row) => ({ height: Body.lead, draw: (canvas, y) => put(canvas, row, 'regular', Body, Margin + indent, y, width, 'left') }));
  const details = line.details.map<Block>((detail) => ({
    height: Small.lead,
    draw: (canvas, y) => put(canvas, detail, 'regular', Small, Margin + indent + 8, y, width - 8, 'left'),
  }));
  return [main, ...continued, ...details];
}

/**
 * Words into rows of at most `width` points, at most `rows` of them (the last cut by put()). Widths
 * come from the glyphs' advances, before the document exists: the page's length depends on them.
 */
function wrap(font: PreparedFont, size: number, text: string, width: number, rows: number): string[] {
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

function advance(font: PreparedFont, size: number, text: string): number {
  // A little room for kerning, which the glyphs' plain advances leave out.
  return (font.advanceUnits(text) * size * 1.02) / font.font.unitsPerEm;
}

/**
 * The TSE block: short values as label and value rows, long ones (serial number, signature: no
 * spaces to break at) under their label, cut into rows of the receipt's width; then the DFKA QR
 * code. On an outage, "TSE-Ausfall" in bold and the reason instead of the signature data.
 */
function tseBlocks(tse: ReceiptTse, font: PreparedFont): Block[] {
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
  return { height: size.lead, draw: (canvas, y) => put(canvas, row, weight, size, Margin + indent, y, ContentWidth - indent, 'left') };
}

/** A value without spaces (base64, hex) in rows of at most `width` points, cut between any two characters. */
function wrapCharacters(font: PreparedFont, size: number, value: string, width: number): string[] {
  const rows: string[] = [];
  let row = '';
  let used = 0;
  // Character by character, summing advances: one glyph lookup each, not one per row and character.
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
    draw(canvas, y) {
      put(canvas, cells[0], weight, Small, Margin, y, first, 'left');
      for (let i = 1; i < 4; i++) put(canvas, cells[i]!, weight, Small, Margin + first + (i - 1) * rest, y, rest, 'right');
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
  const mask = qrImageMask(modules);
  return {
    height: side,
    draw({ ops, images }, y) {
      const name = `Qr${Object.keys(images).length + 1}`;
      images[name] = { size: modules.size, mask };
      const x0 = (Width - modules.size * unit) / 2;
      const y0 = y + QrQuiet * unit;
      const edge = modules.size * unit;
      // An image's first row is at the top of its unit square; the page is drawn top-down (pdfkit's
      // flipped matrix), so the square is flipped back to put that row at y0.
      ops.push(`q\n${n(edge)} 0 0 ${n(-edge)} ${n(x0)} ${n(y0 + edge)} cm\n/DeviceRGB cs\n0 0 0 scn\n/${name} Do\nQ`);
    },
  };
}

/** One row of text in a box; text too wide for it is cut with an ellipsis, never wrapped. */
function put(canvas: Canvas, text: string, weight: Weight, size: Size, x: number, y: number, width: number, align: 'left' | 'right' | 'center'): void {
  if (!text) return;
  const { font } = canvas;
  const row = fit(font, text.replace(/[\s\p{Cc}]+/gu, ' ').trim(), size.size, width);
  const free = width - font.widthOf(row, size.size);
  const left = align === 'left' ? x : align === 'right' ? x + free : x + free / 2;
  canvas.ops.push({ run: font.run(row), x: left, y, size: size.size, ...(weight === 'bold' ? { stroke: size.size * BoldStroke } : {}) });
}

function fit(font: PreparedFont, text: string, size: number, width: number): string {
  if (font.widthOf(text, size) <= width) return text;
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (font.widthOf(`${text.slice(0, mid)}…`, size) <= width) low = mid;
    else high = mid - 1;
  }
  return `${text.slice(0, low).trimEnd()}…`;
}
