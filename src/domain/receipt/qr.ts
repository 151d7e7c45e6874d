import { crc32, deflateSync } from 'node:zlib';
import { chooseMask } from './qr-mask.js';
import { qrSymbol, type QrMode } from './qr-symbol.js';

/**
 * A receipt's QR codes (the order id; the TSE's DFKA code), at error correction level M, and their
 * image (a PNG).
 *
 * The content is one segment of the narrowest mode that holds all of it (numeric, alphanumeric,
 * else bytes): the library's search for the shortest mix of modes cost more than the rest of the
 * code for an order id, and gives the same version for the ids the service makes.
 *
 * The symbol is the qrcode library's, module for module, made here (qr-symbol.ts) at a third of
 * the library's cost; the mask is the one the library chooses (the standard's penalty rules, the
 * lowest wins), chosen here too (qr-mask.ts): the library's evaluation of the eight masks cost
 * 1.5 ms for a DFKA code.
 */
export interface QrModules {
  size: number;
  /** Row by row, 1 for a dark module. */
  dark: Uint8Array;
}

const utf8 = new TextEncoder();

export function qrModules(content: string): QrModules {
  const [mode, data] = segmentOf(content);
  const { size, modules, reserved } = qrSymbol(mode, data);
  return { size, dark: chooseMask(size, modules, reserved).dark };
}

function segmentOf(content: string): [QrMode, string | Uint8Array] {
  if (/^[0-9]+$/.test(content)) return ['numeric', content];
  if (/^[0-9A-Z $%*+\-./:]+$/.test(content)) return ['alphanumeric', content];
  return ['byte', utf8.encode(content)];
}

/**
 * The symbol as a PNG that pdfkit embeds as it is (a grayscale PNG without alpha is copied into
 * the PDF, not decoded): 1 bit per pixel, 0 for a dark one, 4 × 4 pixels per module. Viewers
 * smooth an image drawn at less than four device pixels a pixel (poppler does): one pixel a module
 * came out blurred at 80 dpi; at four, only a module's edges are, as a vector's are. Drawn as
 * rectangles instead (one per horizontal run of dark modules), a DFKA code was thousands of path
 * operators: most of what writing a signed receipt's page cost, and 4 KB of its PDF.
 */
export function qrPng({ size, dark }: QrModules): Buffer {
  const side = size * PngPixelsPerModule;
  const rowBytes = Math.ceil(side / 8);
  const raw = Buffer.alloc((rowBytes + 1) * side);
  for (let y = 0; y < side; y++) {
    // Each row: its filter byte (0, none), then its pixels, white unless dark.
    const at = y * (rowBytes + 1) + 1;
    raw.fill(0xff, at, at + rowBytes);
    const moduleRow = Math.floor(y / PngPixelsPerModule) * size;
    for (let x = 0; x < side; x++) if (dark[moduleRow + Math.floor(x / PngPixelsPerModule)] === 1) raw[at + (x >> 3)]! &= ~(0x80 >> (x & 7));
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([1, 0, 0, 0, 0], 8); // bit depth 1, grayscale, deflate, no filter method, not interlaced
  return Buffer.concat([PngSignature, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]);
}

const PngPixelsPerModule = 4;
const PngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(data.length + 12);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}
