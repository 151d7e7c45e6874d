import { chooseMask } from './qr-mask.js';
import { qrSymbol, type QrMode } from './qr-symbol.js';

/**
 * A receipt's QR codes (the order id; the TSE's DFKA code), at error correction level M, and their
 * image.
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
 * The symbol as a PDF image mask: one bit per module, row by row from the top, each row padded to
 * a whole byte, 0 for a dark module (an image mask paints where its samples are 0). Not deflated:
 * a DFKA code's 800 bytes would shrink by a fifth, for more than it costs to make them.
 * Drawn as rectangles (one per horizontal run), a DFKA code was thousands of path operators: most
 * of what writing and deflating a signed receipt's page cost, and 4 KB of its PDF. As an image
 * it is a few hundred bytes, each module a sharp square (no interpolation).
 */
export function qrImageMask({ size, dark }: QrModules): Uint8Array {
  const rowBytes = Math.ceil(size / 8);
  const bits = new Uint8Array(rowBytes * size).fill(0xff);
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if (dark[row * size + col] === 1) bits[row * rowBytes + (col >> 3)]! &= ~(0x80 >> (col & 7));
    }
  }
  return bits;
}
