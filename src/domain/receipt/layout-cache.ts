import type { Font, GlyphPosition, GlyphRun } from 'fontkit';

/**
 * A font whose text layout (shaping: glyph substitution and positioning) is kept across documents.
 * pdfkit lays out every word of every receipt again (its cache lives as long as one document), and
 * shaping was a third of the time a receipt took; the same words (product names, prices, labels)
 * come back receipt after receipt. Words are shaped as before, once each, by the font itself.
 *
 * pdfkit scales the positions of a run it is given in place, so each caller gets positions of its
 * own; the glyphs are the font's shared glyph objects, as they are without the cache.
 */
export function withLayoutCache(font: Font, maxWords = 10_000): Font {
  const runs = new Map<string, GlyphRun>();
  const layout = (text: string, features?: unknown): GlyphRun => {
    if (features !== undefined) return font.layout(text, features as never);
    let run = runs.get(text);
    if (!run) {
      // Bounded: an endless stream of new words (order ids, odd names) starts the cache afresh.
      if (runs.size >= maxWords) runs.clear();
      run = font.layout(text);
      runs.set(text, run);
    }
    return ownCopy(run);
  };
  // Everything else (glyphs, metrics, tables, subsets) is the font's own, through the prototype.
  return Object.create(font, { layout: { value: layout } }) as Font;
}

function ownCopy(run: GlyphRun): GlyphRun {
  const positions: GlyphPosition[] = run.positions.map((p) => ({ ...p }));
  return {
    glyphs: run.glyphs,
    positions,
    // pdfkit reads it after scaling the positions: a sum of them as they are then, as fontkit's is.
    get advanceWidth() {
      let width = 0;
      for (const p of positions) width += p.xAdvance;
      return width;
    },
  } as GlyphRun;
}
