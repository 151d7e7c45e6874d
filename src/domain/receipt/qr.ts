import QRCode, { type QRCodeSegment } from 'qrcode';

/**
 * A receipt's QR codes (the order id; the TSE's DFKA code), at error correction level M, and their
 * vector drawing.
 *
 * The content is one segment of the narrowest mode that holds all of it (numeric, alphanumeric,
 * else bytes): the library's search for the shortest mix of modes cost more than the rest of the
 * code for an order id, and gives the same version for the ids the service makes.
 *
 * The mask is the one the library chooses (the standard's penalty rules, the lowest wins), so the
 * modules are the library's own; but chosen here on the matrix the library made with mask 0 rather
 * than by the library, whose evaluation of the eight masks cost 1.5 ms for a DFKA code.
 */
export interface QrModules {
  size: number;
  /** Row by row, 1 for a dark module. */
  dark: Uint8Array;
}

const utf8 = new TextEncoder();

export function qrModules(content: string): QrModules {
  const { modules } = QRCode.create([segmentOf(content)], { errorCorrectionLevel: 'M', maskPattern: 0 });
  const { size, data, reservedBit } = modules as unknown as { size: number; data: Uint8Array; reservedBit: Uint8Array };
  const tables = maskTables(size, reservedBit);
  // The data as it was before mask 0; the function patterns (reserved) as they are.
  const unmasked = new Uint8Array(size * size);
  for (let i = 0; i < unmasked.length; i++) unmasked[i] = data[i]! ^ tables[0]![i]!;
  const format = formatCells(size);
  let best: Uint8Array | undefined;
  let lowest = Infinity;
  const candidate = new Uint8Array(size * size);
  const scratch = penaltyScratch(size);
  for (let mask = 0; mask < 8; mask++) {
    const table = tables[mask]!;
    for (let i = 0; i < candidate.length; i++) candidate[i] = unmasked[i]! ^ table[i]!;
    const bits = formatBits(mask);
    for (let i = 0; i < 15; i++) {
      const dark = (bits >> i) & 1;
      candidate[format.vertical[i]!] = dark;
      candidate[format.horizontal[i]!] = dark;
    }
    const points = penalty(candidate, size, scratch);
    if (points < lowest) {
      lowest = points;
      best = new Uint8Array(candidate);
    }
  }
  return { size, dark: best! };
}

function segmentOf(content: string): QRCodeSegment {
  if (/^[0-9]+$/.test(content)) return { data: content, mode: 'numeric' };
  if (/^[0-9A-Z $%*+\-./:]+$/.test(content)) return { data: content, mode: 'alphanumeric' };
  return { data: utf8.encode(content), mode: 'byte' };
}

/** Per symbol size, per mask: the mask's bit on every data module, 0 on the function patterns. */
const masksBySize = new Map<number, Uint8Array[]>();

function maskTables(size: number, reserved: Uint8Array): Uint8Array[] {
  let tables = masksBySize.get(size);
  if (!tables) {
    tables = Array.from({ length: 8 }, (_, mask) => {
      const table = new Uint8Array(size * size);
      for (let row = 0; row < size; row++) {
        for (let col = 0; col < size; col++) table[row * size + col] = reserved[row * size + col] ? 0 : maskAt(mask, row, col) ? 1 : 0;
      }
      return table;
    });
    masksBySize.set(size, tables);
  }
  return tables;
}

function maskAt(mask: number, i: number, j: number): boolean {
  switch (mask) {
    case 0: return (i + j) % 2 === 0;
    case 1: return i % 2 === 0;
    case 2: return j % 3 === 0;
    case 3: return (i + j) % 3 === 0;
    case 4: return (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0;
    case 5: return ((i * j) % 2) + ((i * j) % 3) === 0;
    case 6: return (((i * j) % 2) + ((i * j) % 3)) % 2 === 0;
    default: return (((i * j) % 3) + ((i + j) % 2)) % 2 === 0;
  }
}

/** Where the 15 format bits go (bit i), as the library places them. */
function formatCells(size: number): { vertical: number[]; horizontal: number[] } {
  const vertical: number[] = [];
  const horizontal: number[] = [];
  for (let i = 0; i < 15; i++) {
    const row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
    vertical.push(row * size + 8);
    const col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1;
    horizontal.push(8 * size + col);
  }
  return { vertical, horizontal };
}

/** The format information of level M with this mask: BCH(15,5), masked (ISO/IEC 18004 7.9). */
function formatBits(mask: number): number {
  const G15 = 0b10100110111;
  const data = (0b00 << 3) | mask; // level M is 00
  let d = data << 10;
  const digits = (n: number) => 32 - Math.clz32(n);
  while (digits(d) - digits(G15) >= 0) d ^= G15 << (digits(d) - digits(G15));
  return ((data << 10) | d) ^ 0b101010000010010;
}

/**
 * The standard's penalty of a masked symbol (N1 + N2 + N3 + N4), counted as the library counts it,
 * in one pass over the modules row by row (each column's run and pattern window kept in arrays of
 * their own, a 2×2 block found from the row above), without branches on the modules: on a mask's
 * noise those mispredicted most of the time and made the count slower than the library's.
 *
 * N1: a run of L ≥ 5 modules of one colour costs L − 2, that is one point for each of its L − 4
 * positions with five alike so far, and two when the fifth is reached.
 */
function penalty(m: Uint8Array, size: number, scratch: PenaltyScratch): number {
  const { colLast, colSame, colBits, above } = scratch;
  colLast.fill(2);
  colSame.fill(0);
  colBits.fill(0);
  above.fill(2); // nothing above the first row: no block there
  let n1 = 0;
  let n2 = 0;
  let n3 = 0;
  let dark = 0;
  for (let row = 0; row < size; row++) {
    const base = row * size;
    let rowLast = 2;
    let rowSame = 0;
    let rowBits = 0;
    let left = 2;
    let aboveLeft = 2;
    for (let col = 0; col < size; col++) {
      const v = m[base + col]!;
      dark += v;
      // rowSame: modules alike so far in this row's run (v ^ rowLast is 0 when alike, else 1 or 2).
      rowSame = rowSame * (((v ^ rowLast) - 1) >>> 31) + 1;
      rowLast = v;
      n1 += ((4 - rowSame) >>> 31) + 2 * (((rowSame ^ 5) - 1) >>> 31);
      const same = colSame[col]! * (((v ^ colLast[col]!) - 1) >>> 31) + 1;
      colSame[col] = same;
      colLast[col] = v;
      n1 += ((4 - same) >>> 31) + 2 * (((same ^ 5) - 1) >>> 31);
      rowBits = ((rowBits << 1) & 0x7ff) | v;
      const bits = ((colBits[col]! << 1) & 0x7ff) | v;
      colBits[col] = bits;
      if (col >= 10) n3 += FinderLike[rowBits]!;
      if (row >= 10) n3 += FinderLike[bits]!;
      // A 2×2 block of one colour: this module, the one left of it and the two above them.
      const up = above[col]!;
      n2 += (((v ^ left) | (v ^ up) | (v ^ aboveLeft)) - 1) >>> 31;
      above[col] = v;
      left = v;
      aboveLeft = up;
    }
  }
  const k = Math.abs(Math.ceil((dark * 100) / m.length / 5) - 10);
  return n1 + n2 * 3 + n3 * 40 + k * 10;
}

/** The 11-module windows N3 counts: dark-light-dark×3-light-dark beside four light modules. */
const FinderLike = (() => {
  const table = new Uint8Array(0x800);
  table[0x5d0] = 1;
  table[0x05d] = 1;
  return table;
})();

interface PenaltyScratch {
  colLast: Uint8Array;
  colSame: Int32Array;
  colBits: Int32Array;
  above: Uint8Array;
}

function penaltyScratch(size: number): PenaltyScratch {
  return { colLast: new Uint8Array(size), colSame: new Int32Array(size), colBits: new Int32Array(size), above: new Uint8Array(size) };
}

/**
 * The dark modules as rectangles, one per horizontal run (a third of the path operators of one
 * per module), in modules from the code's top left corner: the caller scales and places the path
 * (cm). Whole numbers only, the same for every code of a size: formatting each rectangle's
 * position in points was most of what a DFKA code's thousands of runs cost, and made the page's
 * content twice as long.
 */
export function qrPath({ size, dark }: QrModules): string {
  const runs: string[] = [];
  for (let row = 0; row < size; row++) {
    const y = Integers[row];
    let start = -1;
    for (let col = 0; col <= size; col++) {
      const isDark = col < size && dark[row * size + col] === 1;
      if (isDark && start < 0) start = col;
      if (!isDark && start >= 0) {
        runs.push(`${Integers[start]} ${y} ${Integers[col - start]} 1 re`);
        start = -1;
      }
    }
  }
  return runs.join('\n');
}

/** 0 to 177 (the largest symbol's size), as strings. */
const Integers = Array.from({ length: 178 }, (_, n) => String(n));
