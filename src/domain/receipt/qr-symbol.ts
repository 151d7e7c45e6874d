import QRCode from 'qrcode';

/**
 * A QR code's symbol before masking (ISO/IEC 18004), at error correction level M, for one segment
 * in one mode: the modules qr-mask.ts masks. It makes what the qrcode library makes, module for
 * module (test/receipt-pdf-text.test.ts compares them), at a third of the cost: the library spent
 * 165-210 µs on a DFKA code (here 53-65), a bit at a time (a call per bit written, per codeword
 * multiplied, per module placed). Here the codewords are bytes, Reed-Solomon uses log tables, and
 * each version's layout is worked out once: the library draws an empty symbol of that version
 * (finder, timing and alignment patterns, version information: none depend on the content), and
 * the order its data modules are filled in (two columns at a time, up and down, from the right)
 * is kept.
 */
export type QrMode = 'numeric' | 'alphanumeric' | 'byte';

export interface QrSymbol {
  size: number;
  /** Row by row, 1 for a dark module: the function patterns and the data, unmasked. */
  modules: Uint8Array;
  /** 1 where a function pattern or format bit is, which no mask touches. */
  reserved: Uint8Array;
}

export function qrSymbol(mode: QrMode, data: string | Uint8Array): QrSymbol {
  const length = data.length;
  const version = versionFor(mode, length);
  const layout = layoutOf(version);
  const bits = new BitWriter(layout.dataCodewords);
  bits.put(ModeIndicator[mode], 4);
  bits.put(length, countBits(mode, version));
  if (mode === 'byte') for (const byte of data as Uint8Array) bits.put(byte, 8);
  else if (mode === 'numeric') writeNumeric(bits, data as string);
  else writeAlphanumeric(bits, data as string);
  const codewords = bits.finish();

  const modules = layout.template.slice();
  const order = layout.dataModules;
  const placed = interleaved(codewords, version, layout);
  for (let i = 0, position = 0; i < placed.length; i++) {
    const byte = placed[i]!;
    for (let bit = 7; bit >= 0; bit--) modules[order[position++]!] = (byte >>> bit) & 1;
  }
  return { size: layout.size, modules, reserved: layout.reserved };
}

const ModeIndicator: Record<QrMode, number> = { numeric: 0b0001, alphanumeric: 0b0010, byte: 0b0100 };

function countBits(mode: QrMode, version: number): number {
  const range = version < 10 ? 0 : version < 27 ? 1 : 2;
  return { numeric: [10, 12, 14], alphanumeric: [9, 11, 13], byte: [8, 16, 16] }[mode][range]!;
}

/** The smallest version that holds the content, by the library's capacities (ISO/IEC 18004 Table 7). */
function versionFor(mode: QrMode, length: number): number {
  for (let version = 1; version <= 40; version++) {
    const usable = dataCodewordsOf(version) * 8 - 4 - countBits(mode, version);
    const capacity = mode === 'numeric' ? Math.floor((usable / 10) * 3) : mode === 'alphanumeric' ? Math.floor((usable / 11) * 2) : Math.floor(usable / 8);
    if (length <= capacity) return version;
  }
  throw new Error(`a QR code at level M holds no ${length} characters in ${mode} mode`);
}

function writeNumeric(bits: BitWriter, digits: string): void {
  let i = 0;
  for (; i + 3 <= digits.length; i += 3) bits.put(Number(digits.slice(i, i + 3)), 10);
  const rest = digits.length - i;
  if (rest) bits.put(Number(digits.slice(i)), rest * 3 + 1);
}

const Alphanumeric = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:';

function writeAlphanumeric(bits: BitWriter, text: string): void {
  let i = 0;
  for (; i + 2 <= text.length; i += 2) bits.put(Alphanumeric.indexOf(text[i]!) * 45 + Alphanumeric.indexOf(text[i + 1]!), 11);
  if (i < text.length) bits.put(Alphanumeric.indexOf(text[i]!), 6);
}

/** The data codewords, most significant bit first, then the terminator and the pad codewords. */
class BitWriter {
  private readonly bytes: Uint8Array;
  private length = 0;
  /** The bits not yet written to a whole byte (fewer than 8), and how many. */
  private pending = 0;
  private pendingCount = 0;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
  }

  /** The low `count` bits of value (count ≤ 16). */
  put(value: number, count: number): void {
    this.pending = (this.pending << count) | (value & ((1 << count) - 1));
    this.pendingCount += count;
    while (this.pendingCount >= 8) {
      this.pendingCount -= 8;
      this.bytes[this.length >>> 3] = (this.pending >>> this.pendingCount) & 0xff;
      this.length += 8;
    }
    this.pending &= (1 << this.pendingCount) - 1;
  }

  finish(): Uint8Array {
    if (this.pendingCount) {
      this.bytes[this.length >>> 3] = (this.pending << (8 - this.pendingCount)) & 0xff;
      this.length += this.pendingCount;
    }
    const capacityBits = this.bytes.length * 8;
    // A terminator of up to four 0s, then 0s to the byte: both already 0 here.
    this.length = Math.ceil(Math.min(this.length + 4, capacityBits) / 8) * 8;
    for (let i = this.length / 8, pad = 0; i < this.bytes.length; i++, pad++) this.bytes[i] = pad % 2 ? 0x11 : 0xec;
    return this.bytes;
  }
}

/** Level M per version (ISO/IEC 18004 Table 9): the number of blocks, and of error correction codewords in all. */
const BlocksM = [1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49];
const EcCodewordsM = [
  10, 16, 26, 36, 48, 64, 72, 88, 110, 130, 150, 176, 198, 216, 240, 280, 308, 338, 364, 416, 442, 476, 504, 560, 588, 644, 700, 728, 784, 812, 868, 924, 980,
  1036, 1064, 1120, 1204, 1260, 1316, 1372,
];

function dataCodewordsOf(version: number): number {
  return layoutOf(version).dataCodewords;
}

/** The data codewords split into blocks (the later ones a codeword longer), each followed by its error correction; interleaved codeword by codeword. */
function interleaved(data: Uint8Array, version: number, layout: Layout): Uint8Array {
  const blocks = BlocksM[version - 1]!;
  const total = layout.totalCodewords;
  const ecCount = Math.floor(total / blocks) - Math.floor(layout.dataCodewords / blocks);
  const longBlocks = total % blocks;
  const shortData = Math.floor(layout.dataCodewords / blocks);
  const generator = generatorOf(ecCount);
  const out = new Uint8Array(total);
  let offset = 0;
  for (let b = 0; b < blocks; b++) {
    const size = b < blocks - longBlocks ? shortData : shortData + 1;
    const block = data.subarray(offset, offset + size);
    offset += size;
    for (let i = 0; i < size; i++) out[i < shortData ? i * blocks + b : shortData * blocks + (b - (blocks - longBlocks))] = block[i]!;
    const ec = remainder(block, generator);
    for (let i = 0; i < ecCount; i++) out[layout.dataCodewords + i * blocks + b] = ec[i]!;
  }
  return out;
}

// GF(256) with the polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d).
const Exp = new Uint8Array(512);
const Log = new Uint8Array(256);
for (let i = 0, x = 1; i < 255; i++, x = x & 0x80 ? ((x << 1) ^ 0x11d) & 0xff : x << 1) {
  Exp[i] = x;
  Log[x] = i;
}
for (let i = 255; i < 512; i++) Exp[i] = Exp[i - 255]!;

const generators = new Map<number, Uint8Array>();

/** The generator polynomial of degree n, (x − α^0)…(x − α^(n−1)), highest power first, its leading 1 left out. */
function generatorOf(degree: number): Uint8Array {
  let coefficients = generators.get(degree);
  if (!coefficients) {
    let poly = new Uint8Array([1]);
    for (let i = 0; i < degree; i++) {
      const next = new Uint8Array(poly.length + 1);
      for (let j = 0; j < poly.length; j++) {
        next[j]! ^= poly[j]!;
        if (poly[j]) next[j + 1]! ^= Exp[Log[poly[j]!]! + i]!;
      }
      poly = next;
    }
    coefficients = poly.subarray(1);
    generators.set(degree, coefficients);
  }
  return coefficients;
}

/** The remainder of data · x^n divided by the generator: the block's error correction codewords. */
function remainder(data: Uint8Array, generator: Uint8Array): Uint8Array {
  const n = generator.length;
  const work = new Uint8Array(data.length + n);
  work.set(data);
  for (let i = 0; i < data.length; i++) {
    const factor = work[i]!;
    if (!factor) continue;
    const logFactor = Log[factor]!;
    for (let j = 0; j < n; j++) if (generator[j]) work[i + 1 + j]! ^= Exp[Log[generator[j]!]! + logFactor]!;
  }
  return work.subarray(data.length);
}

interface Layout {
  size: number;
  /** The function patterns (format bits 0), the data modules 0. */
  template: Uint8Array;
  reserved: Uint8Array;
  /** The data modules in the order the codewords' bits fill them. */
  dataModules: Int32Array;
  totalCodewords: number;
  dataCodewords: number;
}

const layouts = new Map<number, Layout>();

function layoutOf(version: number): Layout {
  let layout = layouts.get(version);
  if (!layout) {
    const { modules } = QRCode.create([{ data: new Uint8Array(1), mode: 'byte' }], { version, errorCorrectionLevel: 'M', maskPattern: 0 });
    const { size, data, reservedBit } = modules as unknown as { size: number; data: Uint8Array; reservedBit: Uint8Array };
    const reserved = Uint8Array.from(reservedBit);
    const template = data.map((dark, i) => (reserved[i] ? dark : 0));
    const order: number[] = [];
    let upward = true;
    for (let col = size - 1; col > 0; col -= 2) {
      if (col === 6) col--;
      for (let step = 0; step < size; step++) {
        const row = upward ? size - 1 - step : step;
        for (const c of [col, col - 1]) if (!reserved[row * size + c]) order.push(row * size + c);
      }
      upward = !upward;
    }
    const totalCodewords = Math.floor(order.length / 8);
    layout = { size, template, reserved, dataModules: Int32Array.from(order), totalCodewords, dataCodewords: totalCodewords - EcCodewordsM[version - 1]! };
    layouts.set(version, layout);
  }
  return layout;
}
