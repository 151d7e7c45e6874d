import { deflateSync } from 'node:zlib';
import type { Font } from 'fontkit';

/**
 * Text in a receipt's PDF, set as pdfkit sets it (the same glyphs, positions and kerning, word by
 * word) without the work pdfkit does for every document: it subsets and encodes the font anew for
 * each one, lays out and measures each text several times, and writes each row as a text object of
 * its own. That was most of a receipt's CPU.
 *
 * Instead, per font (and per render thread), once:
 * - the prepared subset: the glyphs of the characters receipts are mostly written in (ASCII, German
 *   letters, the typographic signs amounts and dates use, the ligatures the font sets for them),
 *   encoded and compressed once, with its widths and its ToUnicode map. Every receipt embeds it as
 *   it is; a receipt that uses other glyphs (another script, an accented name) embeds a second,
 *   small subset of just those, kept for the next receipt that uses the same ones.
 * - each row's layout, width and text operator, kept across receipts (bounded).
 */

/** pdfkit's number formatting in content streams and objects: six decimals at most. */
export function pdfNumber(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** A glyph of a row in pdfkit's text space: 1000ths of the font size. */
interface RunGlyph {
  id: number;
  codePoints: number[];
  xAdvance: number;
  /** The glyph's own advance: the row's kerning is xAdvance - advanceWidth. */
  advanceWidth: number;
  xOffset: number;
  yOffset: number;
}

/**
 * A row laid out. Most rows are all in the prepared subset without offset glyphs: kept as their
 * TJ operator alone (a few hundred bytes, rows being kept by the ten thousand); the others with
 * their glyphs, written per document.
 */
export type TextRun =
  | {
      /** The row's width as pdfkit measures it, in 1000ths of the font size. */
      width: number;
      tj: string;
    }
  | { width: number; glyphs: RunGlyph[] };

/** An embeddable font subset: font glyph id → the subset's glyph id (its CID). */
interface Subset {
  name: string;
  cids: Map<number, number>;
  /** Per CID, in 1000ths of the size (the font dictionary's W). */
  widths: number[];
  /** The subset font file and the ToUnicode map, deflated. */
  fontFile: Uint8Array;
  fontFileLength: number;
  toUnicode: Uint8Array;
}

/** Resource names of the prepared subset and a document's subset of further glyphs. */
export const PreparedResource = 'F1';
export const ExtraResource = 'F2';

const CacheLimit = 20_000;
const ContentLevel = 2;
const ExtraSubsetLimit = 64;

/**
 * What the prepared subset is made of: each character on its own, then the pairs the font sets as
 * ligatures. ASCII but for signs rare on receipts (each glyph adds to every receipt's size),
 * German letters, the signs Intl writes amounts, rates and times with (no-break spaces, €, ’),
 * and × and … the receipt writes itself.
 */
function preparedTexts(): string[] {
  const texts: string[] = [];
  for (let c = 0x20; c < 0x7f; c++) if (!'#<>@[\\]^_`{|}~'.includes(String.fromCharCode(c))) texts.push(String.fromCharCode(c));
  return [...texts, ...'ÄÖÜäöüß\u00a0\u202f€×…–—„“”‚‘’°·', 'ff', 'fi', 'fl', 'ffi', 'ffl'];
}

export class PreparedFont {
  readonly font: Font;
  /** pdfkit's scale from font units to 1000ths of the size. */
  readonly scale: number;
  /** The font's ascent in 1000ths of the size: pdfkit places a row's top there. */
  readonly ascender: number;
  private preparedSubset: Subset | undefined;
  private readonly runs = new Map<string, TextRun>();
  private readonly advances = new Map<string, number>();
  private readonly extraSubsets = new Map<string, Subset>();

  constructor(font: Font) {
    this.font = font;
    this.scale = 1000 / font.unitsPerEm;
    this.ascender = font.ascent * this.scale;
  }

  get prepared(): Subset {
    if (!this.preparedSubset) {
      const glyphs = new Map<number, number[]>();
      for (const text of preparedTexts()) {
        for (const glyph of this.font.layout(text).glyphs) if (!glyphs.has(glyph.id)) glyphs.set(glyph.id, glyph.codePoints);
      }
      this.preparedSubset = makeSubset(this, 'AAAAAA', glyphs, 9);
    }
    return this.preparedSubset;
  }

  /**
   * A row laid out as pdfkit lays it out: word by word, each word with the space that ends it, the
   * positions scaled to 1000ths of the size.
   */
  run(text: string): TextRun {
    let run = this.runs.get(text);
    if (!run) {
      if (this.runs.size >= CacheLimit) this.runs.clear();
      run = this.layout(text);
      this.runs.set(text, run);
    }
    return run;
  }

  /** The sum of the plain advances of the text's glyphs (font units): what rows are wrapped by. */
  advanceUnits(text: string): number {
    let units = this.advances.get(text);
    if (units === undefined) {
      units = 0;
      for (const glyph of this.font.glyphsForString(text)) units += glyph.advanceWidth;
      if (this.advances.size >= CacheLimit) this.advances.clear();
      this.advances.set(text, units);
    }
    return units;
  }

  /** pdfkit's doc.widthOfString(text) at this size, to the last bit. */
  widthOf(text: string, size: number): number {
    return ((this.run(text).width * (size / 1000) + 0) * 100) / 100;
  }

  /** The subset of these glyphs (beyond the prepared ones), kept for the next receipt with the same. */
  extraSubset(glyphs: Map<number, number[]>): Subset {
    const ids = [...glyphs.keys()].sort((a, b) => a - b);
    const key = ids.map((id) => `${id}:${glyphs.get(id)!.join('.')}`).join(',');
    let subset = this.extraSubsets.get(key);
    if (!subset) {
      if (this.extraSubsets.size >= ExtraSubsetLimit) this.extraSubsets.clear();
      subset = makeSubset(this, 'AAAAAB', new Map(ids.map((id) => [id, glyphs.get(id)!])), 6);
      this.extraSubsets.set(key, subset);
    }
    return subset;
  }

  private layout(text: string): TextRun {
    const glyphs: RunGlyph[] = [];
    let width = 0;
    for (const [piece] of pieces(text)) {
      const laid = this.font.layout(piece);
      let pieceWidth = 0;
      laid.glyphs.forEach((glyph, i) => {
        const p = laid.positions[i]!;
        const xAdvance = p.xAdvance * this.scale;
        pieceWidth += xAdvance;
        glyphs.push({ id: glyph.id, codePoints: glyph.codePoints, xAdvance, advanceWidth: glyph.advanceWidth * this.scale, xOffset: p.xOffset * this.scale, yOffset: p.yOffset * this.scale });
      });
      width += pieceWidth;
    }
    const cids = this.prepared.cids;
    const plain = glyphs.every((g) => cids.has(g.id) && !g.xOffset && !g.yOffset);
    return plain ? { width, tj: tjOf(glyphs, cids) } : { width, glyphs };
  }
}

/** pdfkit's words: each piece ends with the space or tab after it. */
function* pieces(text: string): Generator<[string]> {
  let last = 0;
  for (let index = 0; index < text.length; index++) {
    const c = text[index];
    if (c === ' ' || c === '\t') {
      yield [text.slice(last, index + 1)];
      last = index + 1;
    }
  }
  if (last < text.length) yield [text.slice(last)];
}

/** The TJ operator pdfkit writes for these glyphs: runs of CIDs, each closed by its kerning. */
function tjOf(glyphs: readonly RunGlyph[], cids: ReadonlyMap<number, number>): string {
  const commands: string[] = [];
  let hex = '';
  glyphs.forEach((g, i) => {
    hex += cidHex(cids.get(g.id)!);
    const kerning = g.xAdvance - g.advanceWidth;
    if (kerning !== 0 || i === glyphs.length - 1) {
      commands.push(`<${hex}> ${pdfNumber(-kerning)}`);
      hex = '';
    }
  });
  return `[${commands.join(' ')}] TJ`;
}

function cidHex(cid: number): string {
  return `0000${cid.toString(16)}`.slice(-4);
}

function makeSubset(prepared: PreparedFont, tag: string, glyphs: ReadonlyMap<number, number[]>, level: number): Subset {
  const { font, scale } = prepared;
  const subset = font.createSubset();
  const cids = new Map<number, number>();
  // pdfkit gives the missing glyph its width in font units, unscaled: boxes for missing glyphs are
  // as wide as pdfkit draws them.
  const widths = [font.getGlyph(0).advanceWidth];
  const unicode: number[][] = [[0]];
  for (const [id, codePoints] of glyphs) {
    // fontkit answers the glyph's id in the subset (its types say boolean).
    const cid = subset.includeGlyph(font.getGlyph(id)) as unknown as number;
    cids.set(id, cid);
    widths[cid] ??= font.getGlyph(id).advanceWidth * scale;
    unicode[cid] ??= codePoints;
  }
  const file = subset.encode();
  return {
    name: `${tag}+${font.postscriptName.replaceAll(' ', '_')}`,
    cids,
    widths,
    fontFile: deflateSync(file, { level }),
    fontFileLength: file.length,
    toUnicode: deflateSync(toUnicodeCmap(unicode), { level }),
  };
}

/** The ToUnicode CMap pdfkit writes: each CID to the characters it was set for. */
function toUnicodeCmap(unicode: readonly number[][]): string {
  const hex = (n: number) => `0000${n.toString(16)}`.slice(-4);
  const entries = unicode.map((codePoints) => {
    const encoded: string[] = [];
    for (let value of codePoints) {
      if (value > 0xffff) {
        value -= 0x10000;
        encoded.push(hex(((value >>> 10) & 0x3ff) | 0xd800));
        value = 0xdc00 | (value & 0x3ff);
      }
      encoded.push(hex(value));
    }
    return `<${encoded.join(' ')}>`;
  });
  const ranges: string[] = [];
  for (let start = 0; start < entries.length; start += 256) {
    const end = Math.min(start + 256, entries.length);
    ranges.push(`<${hex(start)}> <${hex(end - 1)}> [${entries.slice(start, end).join(' ')}]`);
  }
  return `/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo <<
  /Registry (Adobe)
  /Ordering (UCS)
  /Supplement 0
>> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000><ffff>
endcodespacerange
${ranges.length} beginbfrange
${ranges.join('\n')}
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end
`;
}

const prepared = new WeakMap<Font, PreparedFont>();

/** The prepared form of a font: made on its first receipt, then kept as long as the font is. */
export function preparedFont(font: Font): PreparedFont {
  let p = prepared.get(font);
  if (!p) {
    p = new PreparedFont(font);
    prepared.set(font, p);
  }
  return p;
}

/** A text row on a page: where pdfkit's doc.text(row, x, y) would put it. */
export interface TextRow {
  run: TextRun;
  x: number;
  y: number;
  size: number;
  /** Filled and stroked (bold rows) with this line width, or only filled. */
  stroke?: number;
}

/** A page's content: operators as pdfkit writes them, and text rows written when the fonts are known. */
export type PageOps = Array<string | TextRow>;

/**
 * The fonts of one document: embeds the prepared subset, and the subset of further glyphs when
 * its rows need some; then writes each page's content.
 */
export class DocumentFonts {
  private readonly extra: Subset | undefined;
  private refs: Record<string, PDFKit.PDFKitReference> = {};

  constructor(
    private readonly font: PreparedFont,
    pages: readonly PageOps[],
  ) {
    // Each glyph with the characters of its first use, as pdfkit maps it.
    const extra = new Map<number, number[]>();
    for (const ops of pages) {
      for (const op of ops) {
        if (typeof op === 'string' || !('glyphs' in op.run)) continue;
        for (const g of op.run.glyphs) if (!font.prepared.cids.has(g.id) && !extra.has(g.id)) extra.set(g.id, g.codePoints);
      }
    }
    this.extra = extra.size ? font.extraSubset(extra) : undefined;
  }

  /** Writes the font objects into the document (once); answers the page resources to register. */
  embed(doc: PDFKit.PDFDocument): Record<string, PDFKit.PDFKitReference> {
    if (!Object.keys(this.refs).length) {
      this.refs[PreparedResource] = embedSubset(doc, this.font, this.font.prepared);
      if (this.extra) this.refs[ExtraResource] = embedSubset(doc, this.font, this.extra);
    }
    return this.refs;
  }

  /**
   * A page's content stream, deflated: graphics as they are, text rows in text objects between
   * them. Level 2: the default level (6) took five times as long for a few hundred bytes less.
   */
  content(ops: PageOps, pageHeight: number): Uint8Array {
    return deflateSync(Buffer.from(this.operators(ops, pageHeight), 'latin1'), { level: ContentLevel });
  }

  private operators(ops: PageOps, pageHeight: number): string {
    const out: string[] = [];
    let inText = false;
    let resource = '';
    let size = Number.NaN;
    let mode = 0;
    let lineWidth = Number.NaN;
    for (const op of ops) {
      if (typeof op === 'string') {
        if (inText) out.push('ET', 'Q');
        inText = false;
        out.push(op);
        continue;
      }
      if (!inText) {
        // pdfkit's pages are drawn top-down (a flipped matrix); text is set upright in an unflipped one.
        out.push('q', `1 0 0 -1 0 ${pdfNumber(pageHeight)} cm`, 'BT');
        inText = true;
        resource = '';
        mode = 0;
        lineWidth = Number.NaN;
      }
      const x = op.x;
      const y = pageHeight - op.y - (this.font.ascender / 1000) * op.size;
      out.push(`1 0 0 1 ${pdfNumber(x)} ${pdfNumber(y)} Tm`);
      const wanted = op.stroke === undefined ? 0 : 2;
      if (op.stroke !== undefined && op.stroke !== lineWidth) {
        out.push(`${pdfNumber(op.stroke)} w`);
        lineWidth = op.stroke;
      }
      if (wanted !== mode) {
        out.push(`${wanted} Tr`);
        mode = wanted;
      }
      if ('tj' in op.run) {
        if (resource !== PreparedResource || size !== op.size) out.push(`/${PreparedResource} ${pdfNumber(op.size)} Tf`);
        resource = PreparedResource;
        size = op.size;
        out.push(op.run.tj);
      } else {
        [resource, size] = this.glyphsOf(out, op.run.glyphs, op, y, resource, size);
      }
    }
    if (inText) out.push('ET', 'Q');
    out.push('');
    return out.join('\n');
  }

  /**
   * A row with glyphs of both subsets or offset glyphs (marks): pdfkit's way of writing offset
   * glyphs (each at its own text matrix), switching between the subsets where they change.
   */
  private glyphsOf(out: string[], glyphs: readonly RunGlyph[], row: TextRow, y: number, resource: string, size: number): [string, number] {
    const scale = row.size / 1000;
    const prepared = this.font.prepared.cids;
    const extra = this.extra?.cids;
    let commands: string[] = [];
    let hex = '';
    let x = row.x;
    let hadOffset = false;
    const flush = () => {
      if (hex) commands.push(`<${hex}> 0`);
      hex = '';
      if (commands.length) out.push(`[${commands.join(' ')}] TJ`);
      commands = [];
    };
    const use = (wanted: string) => {
      if (wanted === resource && size === row.size) return;
      flush();
      out.push(`/${wanted} ${pdfNumber(row.size)} Tf`);
      resource = wanted;
      size = row.size;
    };
    for (const g of glyphs) {
      const inPrepared = prepared.has(g.id);
      const cid = inPrepared ? prepared.get(g.id)! : (extra?.get(g.id) ?? 0);
      if (g.xOffset || g.yOffset) {
        flush();
        out.push(`1 0 0 1 ${pdfNumber(x + g.xOffset * scale)} ${pdfNumber(y + g.yOffset * scale)} Tm`);
        use(inPrepared ? PreparedResource : ExtraResource);
        commands.push(`<${cidHex(cid)}> ${pdfNumber(-(g.xAdvance - g.advanceWidth))}`);
        flush();
        hadOffset = true;
      } else {
        if (hadOffset) {
          out.push(`1 0 0 1 ${pdfNumber(x)} ${pdfNumber(y)} Tm`);
          hadOffset = false;
        }
        use(inPrepared ? PreparedResource : ExtraResource);
        hex += cidHex(cid);
        const kerning = g.xAdvance - g.advanceWidth;
        if (kerning !== 0) {
          commands.push(`<${hex}> ${pdfNumber(-kerning)}`);
          hex = '';
        }
      }
      x += g.xAdvance * scale;
    }
    flush();
    return [resource, size];
  }
}

/** The objects of an embedded subset, as pdfkit writes them for a TrueType font (Type0, Identity-H). */
function embedSubset(doc: PDFKit.PDFDocument, prepared: PreparedFont, subset: Subset): PDFKit.PDFKitReference {
  const object = (data: object, stream?: Uint8Array) => {
    const ref = doc.ref(data);
    ref.end(stream);
    return ref;
  };
  const { scale } = prepared;
  // Tables fontkit reads but its types leave out.
  const font = prepared.font as Font & { post: { isFixedPitch: number }; head: { macStyle: { italic: boolean } } };
  const familyClass = (font['OS/2']?.sFamilyClass || 0) >> 8;
  let flags = 1 << 2; // symbolic: glyphs outside the standard Latin set
  if (font.post.isFixedPitch) flags |= 1 << 0;
  if (familyClass >= 1 && familyClass <= 7) flags |= 1 << 1;
  if (familyClass === 10) flags |= 1 << 3;
  if (font.head.macStyle.italic) flags |= 1 << 6;
  const { bbox } = font;
  // A stream whose Filter is given is written as it is: these are deflated once, not per document.
  const fontFile = object({ Length1: subset.fontFileLength, Filter: 'FlateDecode' }, subset.fontFile);
  const descriptor = object({
    Type: 'FontDescriptor',
    FontName: subset.name,
    Flags: flags,
    FontBBox: [bbox.minX * scale, bbox.minY * scale, bbox.maxX * scale, bbox.maxY * scale],
    ItalicAngle: font.italicAngle,
    Ascent: prepared.ascender,
    Descent: font.descent * scale,
    CapHeight: (font.capHeight || font.ascent) * scale,
    XHeight: (font.xHeight || 0) * scale,
    StemV: 0,
    FontFile2: fontFile,
  });
  const descendant = object({
    Type: 'Font',
    Subtype: 'CIDFontType2',
    BaseFont: subset.name,
    CIDSystemInfo: { Registry: new String('Adobe'), Ordering: new String('Identity'), Supplement: 0 },
    FontDescriptor: descriptor,
    W: [0, subset.widths],
    CIDToGIDMap: 'Identity',
  });
  const toUnicode = object({ Filter: 'FlateDecode' }, subset.toUnicode);
  return object({ Type: 'Font', Subtype: 'Type0', BaseFont: subset.name, Encoding: 'Identity-H', DescendantFonts: [descendant], ToUnicode: toUnicode });
}
