import { crc32, deflateSync } from 'node:zlib';

/**
 * Tiny valid images of each format a coupon may show, built byte by byte, of any width and height
 * (each one plain colour, so the compressed data stays small however large the picture).
 */

const u16be = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u16le = (n: number) => Buffer.from([n & 0xff, (n >> 8) & 0xff]);
const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  return Buffer.concat([u32be(data.length), typed, u32be(crc32(typed))]);
}

/**
 * An RGB PNG. `padTo` adds a private ancillary chunk (decoders skip it) so that the file has
 * exactly that many bytes: a large image that is still a valid one.
 */
export function png(width: number, height: number, options: { padTo?: number } = {}): Buffer {
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 2, 0, 0, 0])]);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3, 0x7f)]);
  const idat = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  const head = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', idat)]);
  const end = pngChunk('IEND', Buffer.alloc(0));
  if (!options.padTo) return Buffer.concat([head, end]);
  const padding = options.padTo - head.length - end.length - 12;
  if (padding < 0) throw new Error('the image is larger than padTo already');
  return Buffer.concat([head, pngChunk('prVt', Buffer.alloc(padding, 0x5a)), end]);
}

/**
 * A baseline JPEG with one grey component: quantisation all ones, and Huffman tables of a single
 * 1-bit code each (DC difference 0, end of block), so every 8×8 block is the two bits `00`.
 */
export function jpeg(width: number, height: number): Buffer {
  const segment = (marker: number, data: Buffer) => Buffer.concat([Buffer.from([0xff, marker]), u16be(data.length + 2), data]);
  const oneCode = (tableClass: number) => Buffer.concat([Buffer.from([tableClass << 4, 1]), Buffer.alloc(15), Buffer.from([0x00])]);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = '00'.repeat(blocks);
  const padded = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1');
  const scan = Buffer.from(padded.match(/.{8}/g)!.map((byte) => Number.parseInt(byte, 2)));
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    segment(0xc0, Buffer.concat([Buffer.from([8]), u16be(height), u16be(width), Buffer.from([1, 1, 0x11, 0])])),
    segment(0xc4, oneCode(0)),
    segment(0xc4, oneCode(1)),
    segment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])),
    scan,
    Buffer.from([0xff, 0xd9]),
  ]);
}

/**
 * A GIF89a with a two-colour table. The LZW data sends a clear code before every pixel, so codes
 * stay 3 bits wide: the plainest stream a decoder takes.
 */
export function gif(width: number, height: number): Buffer {
  const clear = 4;
  const end = 5;
  const codes = [...Array.from({ length: width * height }, () => [clear, 0]).flat(), end];
  const packed: number[] = [];
  let acc = 0;
  let n = 0;
  for (const code of codes) {
    acc |= code << n;
    n += 3;
    while (n >= 8) {
      packed.push(acc & 0xff);
      acc >>= 8;
      n -= 8;
    }
  }
  if (n > 0) packed.push(acc & 0xff);
  const blocks: Buffer[] = [];
  for (let at = 0; at < packed.length; at += 255) {
    const block = packed.slice(at, at + 255);
    blocks.push(Buffer.from([block.length, ...block]));
  }
  return Buffer.concat([
    Buffer.from('GIF89a', 'ascii'),
    u16le(width),
    u16le(height),
    Buffer.from([0x80, 0, 0]), // a global colour table of 2 entries
    Buffer.from([0, 0, 0, 0xff, 0xff, 0xff]),
    Buffer.from([0x2c]),
    u16le(0),
    u16le(0),
    u16le(width),
    u16le(height),
    Buffer.from([0]),
    Buffer.from([2]), // LZW minimum code size
    ...blocks,
    Buffer.from([0, 0x3b]),
  ]);
}

/**
 * A lossless WebP (VP8L): no transforms, no colour cache, and five prefix codes of one symbol each
 * (green 0, red 0, blue 0, alpha 255), which cost no bits per pixel: the header is the whole image.
 */
export function webp(width: number, height: number): Buffer {
  const bits: Array<[value: number, count: number]> = [
    [width - 1, 14],
    [height - 1, 14],
    [1, 1], // alpha is used
    [0, 3], // version
    [0, 1], // no transform
    [0, 1], // no colour cache
    [0, 1], // no meta prefix codes
  ];
  for (const symbol of [0, 0, 0, 255, 0]) {
    // A simple prefix code of one symbol: 1-bit symbols are written as such, others in 8 bits.
    bits.push([1, 1], [0, 1], symbol > 1 ? [1, 1] : [0, 1], [symbol, symbol > 1 ? 8 : 1]);
  }
  const out: number[] = [0x2f];
  let acc = 0;
  let n = 0;
  for (const [value, count] of bits) {
    for (let i = 0; i < count; i++) {
      acc |= ((value >> i) & 1) << n;
      if (++n === 8) {
        out.push(acc);
        acc = 0;
        n = 0;
      }
    }
  }
  if (n > 0) out.push(acc);
  const data = Buffer.from(out);
  const chunk = Buffer.concat([Buffer.from('VP8L', 'ascii'), u32le(data.length), data, data.length % 2 ? Buffer.from([0]) : Buffer.alloc(0)]);
  return Buffer.concat([Buffer.from('RIFF', 'ascii'), u32le(4 + chunk.length), Buffer.from('WEBP', 'ascii'), chunk]);
}
