/**
 * Picking a text from a map of translations (language code → text) for a reader: the best match of
 * the request's Accept-Language (RFC 9110 q-values, RFC 4647 lookup), else the project's default
 * language, else the first translation, else ''. Pure: no I/O.
 */

/** The language ranges of an Accept-Language header, best first; `q=0` ranges and malformed ones are left out. */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  const ranges: Array<{ tag: string; q: number; at: number }> = [];
  header.split(',').forEach((part, at) => {
    const [range = '', ...params] = part.split(';').map((s) => s.trim());
    if (range !== '*' && !/^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$/.test(range)) return;
    let q = 1;
    for (const param of params) {
      const match = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i.exec(param);
      if (!match) return; // a malformed weight: the range is left out rather than guessed at
      q = Number(match[1]);
    }
    if (q > 0) ranges.push({ tag: range, q, at });
  });
  // Equal weights keep the header's order.
  return ranges.sort((a, b) => b.q - a.q || a.at - b.at).map((r) => r.tag);
}

/** `de_DE`, `DE-de` and `de-DE` are one language code. */
function normalize(tag: string): string {
  return tag.replace(/_/g, '-').toLowerCase();
}

/**
 * The key of `texts` that best serves one language range: the range itself, then the range cut
 * back subtag by subtag (de-AT-x → de-AT → de), then any key of the same primary language (de →
 * de-DE).
 */
function lookup(keys: ReadonlyMap<string, string>, range: string): string | undefined {
  const wanted = normalize(range);
  for (let tag = wanted; tag; tag = tag.slice(0, Math.max(tag.lastIndexOf('-'), 0))) {
    const key = keys.get(tag);
    if (key !== undefined) return key;
  }
  const primary = wanted.split('-')[0];
  for (const [normalized, key] of keys) if (normalized.split('-')[0] === primary) return key;
  return undefined;
}

/**
 * The text for a reader who accepts `accepted` (best first, as `acceptedLanguages` answers) in a
 * project whose default locale is `defaultLocale` (such as de-DE). A `*` range accepts any
 * language: the default one serves it.
 */
export function pickTranslation(texts: Readonly<Record<string, string>>, accepted: readonly string[], defaultLocale: string): string {
  const keys = new Map(Object.keys(texts).map((key) => [normalize(key), key] as const));
  if (keys.size === 0) return '';
  for (const range of accepted) {
    if (range === '*') break;
    const key = lookup(keys, range);
    if (key !== undefined) return texts[key]!;
  }
  const key = lookup(keys, defaultLocale) ?? Object.keys(texts)[0]!;
  return texts[key]!;
}
