import QRCode, { type QRCodeSegment } from 'qrcode';
import { chooseMask } from './qr-mask.js';

/**
 * A receipt's QR codes (the order id; the TSE's DFKA code), at error correction level M, and their
 * vector drawing.
 *
 * The content is one segment of the narrowest mode that holds all of it (numeric, alphanumeric,
 * else bytes): the library's search for the shortest mix of modes cost more than the rest of the
 * code for an order id, and gives the same version for the ids the service makes.
 *
 * The mask is the one the library chooses (the standard's penalty rules, the lowest wins), so the
 * modules are the library's own; but chosen here (qr-mask.ts) on the symbol the library made with
 * mask 0, rather than by the library, whose evaluation of the eight masks cost 1.5 ms for a DFKA code.
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
  return { size, dark: chooseMask(size, data, reservedBit).dark };
}

function segmentOf(content: string): QRCodeSegment {
  if (/^[0-9]+$/.test(content)) return { data: content, mode: 'numeric' };
  if (/^[0-9A-Z $%*+\-./:]+$/.test(content)) return { data: content, mode: 'alphanumeric' };
  return { data: utf8.encode(content), mode: 'byte' };
}

/**
 * The dark modules as rectangles, one per horizontal run (a third of the path operators of one
 * per module), in modules from the code's top left corner: the caller scales and places the path
 * (cm). Whole numbers only: formatting each rectangle's position in points was most of what a DFKA
 * code's thousands of runs cost, and made the page's content twice as long.
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
