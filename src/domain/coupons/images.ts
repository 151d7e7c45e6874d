/**
 * Image formats coupons may show, recognised by their bytes (never by a declared content type), and
 * their width and height read from their headers. Pure: no I/O.
 */
export const ImageFormats = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
} as const;
export type ImageFormat = keyof typeof ImageFormats;

export interface ImageInfo {
  format: ImageFormat;
  contentType: (typeof ImageFormats)[ImageFormat];
  width: number;
  height: number;
}

const PngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** How many leading bytes `formatOf` needs to tell the formats apart. */
export const FormatSignatureBytes = 12;

/** The format the leading bytes announce (magic numbers only), or undefined. */
export function formatOf(bytes: Uint8Array): ImageFormat | undefined {
  if (startsWith(bytes, PngSignature)) return 'png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') return 'gif';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return 'webp';
  return undefined;
}

/**
 * The format and dimensions of a whole image file, or undefined when it is none of the formats or
 * its header cannot be read (cut short, or a zero dimension).
 */
export function readImage(bytes: Uint8Array): ImageInfo | undefined {
  const format = formatOf(bytes);
  if (!format) return undefined;
  const size = sizeReaders[format](bytes);
  // PNG allows up to 2^31 - 1 per side; more is a corrupt header (and more than the column holds).
  if (!size || !inRange(size.width) || !inRange(size.height)) return undefined;
  return { format, contentType: ImageFormats[format], ...size };
}

const inRange = (n: number) => n >= 1 && n <= 0x7fffffff;

interface Size {
  width: number;
  height: number;
}

const sizeReaders: Record<ImageFormat, (bytes: Uint8Array) => Size | undefined> = {
  // The first chunk is IHDR: width and height as 32-bit big-endian integers.
  png: (b) => (b.length >= 24 && ascii(b, 12, 4) === 'IHDR' ? { width: u32be(b, 16), height: u32be(b, 20) } : undefined),
  // The logical screen descriptor follows the signature: 16-bit little-endian width and height.
  gif: (b) => (b.length >= 10 ? { width: u16le(b, 6), height: u16le(b, 8) } : undefined),
  webp: webpSize,
  jpeg: jpegSize,
};

/** WebP: the first chunk after the RIFF header is VP8 (lossy), VP8L (lossless) or VP8X (extended). */
function webpSize(b: Uint8Array): Size | undefined {
  const chunk = ascii(b, 12, 4);
  if (chunk === 'VP8 ' && b.length >= 30) {
    // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height (2 scaling bits above).
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return undefined;
    return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  if (chunk === 'VP8L' && b.length >= 25) {
    if (b[20] !== 0x2f) return undefined;
    // 14 bits width - 1, then 14 bits height - 1, little-endian bit order.
    const bits = u32le(b, 21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X' && b.length >= 30) {
    // Flags (1 byte), reserved (3), then canvas width - 1 and height - 1 as 24-bit little-endian.
    return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  }
  return undefined;
}

/** Start-of-frame markers (baseline, progressive, lossless, arithmetic; not DHT C4, JPG C8, DAC CC). */
const StartOfFrame = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
const StartOfScan = 0xda;

/** JPEG: walk the marker segments after SOI to the first start-of-frame, which holds the size. */
function jpegSize(b: Uint8Array): Size | undefined {
  let at = 2;
  while (at + 1 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    // Markers without a length: TEM and RST0-7.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === StartOfScan || marker === 0xd9 || at + 4 > b.length) return undefined;
    const length = u16be(b, at + 2);
    if (length < 2) return undefined;
    if (StartOfFrame.has(marker)) {
      // Length (2), sample precision (1), height (2), width (2).
      if (at + 9 > b.length) return undefined;
      return { height: u16be(b, at + 5), width: u16be(b, at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((byte, i) => bytes[i] === byte);
}

function ascii(bytes: Uint8Array, at: number, length: number): string {
  if (bytes.length < at + length) return '';
  return String.fromCharCode(...bytes.subarray(at, at + length));
}

const u16be = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u24le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32le = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const u32be = (b: Uint8Array, at: number) => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
