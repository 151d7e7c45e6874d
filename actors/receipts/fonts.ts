import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import * as fontkit from 'fontkit';
import { withLayoutCache } from '../../src/domain/receipt/layout-cache.js';
import type { ReceiptFonts } from '../../src/domain/receipt/pdf.js';

const require = createRequire(import.meta.url);

/**
 * DejaVu Sans from the dejavu-fonts-ttf package: it covers €, umlauts and ß and most scripts a
 * shop name may be written in. Read and parsed once per render thread, its words' layouts kept
 * across receipts (layout-cache.ts).
 */
export async function loadReceiptFonts(): Promise<ReceiptFonts> {
  const load = async (file: string) => {
    const font = fontkit.create(await readFile(require.resolve(`dejavu-fonts-ttf/ttf/${file}`)));
    if (!('glyphsForString' in font)) throw new Error(`${file} is a font collection, not a font`);
    return withLayoutCache(font);
  };
  return { regular: await load('DejaVuSans.ttf') };
}
