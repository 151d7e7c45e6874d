/**
 * The mask of a QR code at level M as the qrcode library chooses it: the lowest of the standard's
 * penalties (ISO/IEC 18004 7.8.3: N1 runs, N2 blocks, N3 finder-like patterns, N4 balance), the
 * first on a tie, counted exactly as the library counts them. The library spent 1.5 ms on a DFKA
 * code's eight masks (a function call per module and rule); here each row and column is a line of
 * 32-bit words and every rule is counted 32 modules at a time.
 */

/** Per symbol size: each mask's bits on the data modules (0 on the function patterns), and where the format bits go. */
interface SizeTables {
  words: number;
  /** Per mask, module by module (row-major). */
  cells: Uint8Array[];
  /** Per mask, as lines: row r's module c is bit c % 32 of word r * words + c / 32; columns likewise. */
  rows: Int32Array[];
  cols: Int32Array[];
  /** The format bits' modules (bit i of the 15 at vertical[i] and horizontal[i]) as [row, col]. */
  format: Array<[number, number]>[];
  /** Per word, the positions 0..size − k of a line, for the rules' windows of k modules. */
  upTo: Record<2 | 5 | 6 | 11, Int32Array>;
}

const bySize = new Map<number, SizeTables>();

export interface MaskChoice {
  mask: number;
  /** The symbol with that mask and its format bits, module by module. */
  dark: Uint8Array;
}

/**
 * The library's choice for a symbol before masking (qr-symbol.ts: `unmasked`, with `reserved`
 * marking the function patterns, which no mask touches).
 */
export function chooseMask(size: number, unmasked: Uint8Array, reserved: Uint8Array): MaskChoice {
  const tables = tablesFor(size, reserved);
  const base = linesOf(unmasked, size, tables.words);
  const rows = new Int32Array(base.rows.length);
  const cols = new Int32Array(base.cols.length);
  let best = 0;
  let lowest = Infinity;
  for (let mask = 0; mask < 8; mask++) {
    const maskRows = tables.rows[mask]!;
    const maskCols = tables.cols[mask]!;
    for (let i = 0; i < rows.length; i++) rows[i] = base.rows[i]! ^ maskRows[i]!;
    for (let i = 0; i < cols.length; i++) cols[i] = base.cols[i]! ^ maskCols[i]!;
    const bits = formatBits(mask);
    for (let i = 0; i < 15; i++) {
      for (const [row, col] of tables.format[i]!) {
        setBit(rows, row * tables.words, col, (bits >> i) & 1);
        setBit(cols, col * tables.words, row, (bits >> i) & 1);
      }
    }
    const points = penalty(rows, cols, size, tables);
    if (points < lowest) {
      lowest = points;
      best = mask;
    }
  }
  const dark = new Uint8Array(size * size);
  const cells = tables.cells[best]!;
  for (let i = 0; i < dark.length; i++) dark[i] = unmasked[i]! ^ cells[i]!;
  const bits = formatBits(best);
  for (let i = 0; i < 15; i++) for (const [row, col] of tables.format[i]!) dark[row * size + col] = (bits >> i) & 1;
  return { mask: best, dark };
}

function setBit(lines: Int32Array, offset: number, position: number, bit: number): void {
  const word = offset + (position >> 5);
  lines[word] = (lines[word]! & ~(1 << (position & 31))) | (bit << (position & 31));
}

function linesOf(cells: Uint8Array, size: number, words: number): { rows: Int32Array; cols: Int32Array } {
  const rows = new Int32Array(size * words);
  const cols = new Int32Array(size * words);
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      const v = cells[row * size + col]!;
      rows[row * words + (col >> 5)]! |= v << (col & 31);
      cols[col * words + (row >> 5)]! |= v << (row & 31);
    }
  }
  return { rows, cols };
}

/**
 * The penalty, line by line and word by word: s_k holds the modules k further on (a word and the
 * start of the next), so a window of modules i..i+k is a bitwise AND of s_0..s_k.
 *
 * N1: a run of L ≥ 5 modules of one colour costs L − 2: one point for each of its L − 4 windows of
 * five alike, and two more for the last of them (a window not followed by another).
 */
function penalty(rows: Int32Array, cols: Int32Array, size: number, tables: SizeTables): number {
  const { words, upTo } = tables;
  const [up2, up5, up6, up11] = [upTo[2], upTo[5], upTo[6], upTo[11]];
  let n1 = 0;
  let n2 = 0;
  let n3 = 0;
  let dark = 0;
  for (const lines of [rows, cols]) {
    for (let line = 0; line < size; line++) {
      const o = line * words;
      for (let w = 0; w < words; w++) {
        const cur = lines[o + w]!;
        const next = w + 1 < words ? lines[o + w + 1]! : 0;
        const s0 = cur;
        const s1 = (cur >>> 1) | (next << 31);
        const s2 = (cur >>> 2) | (next << 30);
        const s3 = (cur >>> 3) | (next << 29);
        const s4 = (cur >>> 4) | (next << 28);
        const s5 = (cur >>> 5) | (next << 27);
        const s6 = (cur >>> 6) | (next << 26);
        const s7 = (cur >>> 7) | (next << 25);
        const s8 = (cur >>> 8) | (next << 24);
        const s9 = (cur >>> 9) | (next << 23);
        const s10 = (cur >>> 10) | (next << 22);
        const alike12 = ~(s1 ^ s2) & ~(s2 ^ s3) & ~(s3 ^ s4);
        const five = ~(s0 ^ s1) & alike12 & up5[w]!;
        if (five) n1 += popcount(five) + 2 * popcount(five & ~(alike12 & ~(s4 ^ s5) & up6[w]!));
        // Most words hold no finder-like pattern: the test is cheaper than counting nothing.
        const finder = s4 & ~s5 & s6 & ~s9 & up11[w]!;
        if (finder) n3 += popcount(finder & s0 & ~s1 & s2 & s3 & ~s7 & ~s8 & ~s10) + popcount(finder & ~s0 & ~s1 & ~s2 & ~s3 & s7 & s8 & s10);
        if (lines === rows) dark += popcount(cur);
      }
    }
  }
  // N2: 2×2 blocks of one colour, from each row and the next.
  for (let row = 0; row + 1 < size; row++) {
    const a = row * words;
    const b = a + words;
    for (let w = 0; w < words; w++) {
      const a0 = rows[a + w]!;
      const b0 = rows[b + w]!;
      const a1 = (a0 >>> 1) | ((w + 1 < words ? rows[a + w + 1]! : 0) << 31);
      const b1 = (b0 >>> 1) | ((w + 1 < words ? rows[b + w + 1]! : 0) << 31);
      n2 += popcount(~(a0 ^ b0) & ~(a1 ^ b1) & ~(a0 ^ a1) & up2[w]!);
    }
  }
  const k = Math.abs(Math.ceil((dark * 100) / (size * size) / 5) - 10);
  return n1 + n2 * 3 + n3 * 40 + k * 10;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

function tablesFor(size: number, reserved: Uint8Array): SizeTables {
  let tables = bySize.get(size);
  if (!tables) {
    const words = Math.ceil(size / 32);
    const cells = Array.from({ length: 8 }, (_, mask) => {
      const table = new Uint8Array(size * size);
      for (let row = 0; row < size; row++) {
        for (let col = 0; col < size; col++) table[row * size + col] = !reserved[row * size + col] && maskAt(mask, row, col) ? 1 : 0;
      }
      return table;
    });
    const lines = cells.map((table) => linesOf(table, size, words));
    const upTo = (window: number) =>
      Int32Array.from({ length: words }, (_, w) => {
        const last = size - window - 32 * w; // the last position in this word a window starts at
        return last >= 31 ? -1 : last < 0 ? 0 : 2 ** (last + 1) - 1;
      });
    tables = { words, cells, rows: lines.map((l) => l.rows), cols: lines.map((l) => l.cols), format: formatModules(size), upTo: { 2: upTo(2), 5: upTo(5), 6: upTo(6), 11: upTo(11) } };
    bySize.set(size, tables);
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

/** Where format bit i goes, twice (beside the top left finder, and split over the other two), as the library places it. */
function formatModules(size: number): Array<[number, number]>[] {
  return Array.from({ length: 15 }, (_, i) => {
    const row = i < 6 ? i : i < 8 ? i + 1 : size - 15 + i;
    const col = i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1;
    return [
      [row, 8],
      [8, col],
    ];
  });
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
