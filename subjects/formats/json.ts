/** A string field at `path` of a parsed JSON value, or '' (to say which item a message is about). */
export function stringAt(value: unknown, ...path: string[]): string {
  let current = value;
  for (const key of path) current = typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[key] : undefined;
  return typeof current === 'string' ? current : '';
}

/** JSON.parse that answers undefined for text that is not JSON. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

type JsonRecord = Record<string, unknown>;

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * RFC 7386 JSON merge patch: members of `patch` replace those of `target`, `null` removes one,
 * objects merge recursively, anything else (arrays included) replaces whole. `target` is not changed.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return patch;
  const result: JsonRecord = isRecord(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else {
      // defineProperty: a "__proto__" member of parsed JSON is data, never the object's prototype.
      Object.defineProperty(result, key, { value: mergePatch(result[key], value), enumerable: true, writable: true, configurable: true });
    }
  }
  return result;
}

/** How deep a JSON value may nest: deeper values are refused before Postgres meets them (its parser recurses). */
export const MaxJsonDepth = 64;

/** What makes a value unstorable, and where in it: `path` is the members and indexes down to it. */
export interface UnstorableText {
  path: string[];
  reason: string;
}

// Postgres text and jsonb hold neither U+0000 nor unpaired UTF-16 surrogates (a lone surrogate
// would reach a text column as U+FFFD, silently changed).
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this looks for.
const Suspicious = /[\u0000\uD800-\uDFFF]/;

function storableText(text: string): string | undefined {
  if (!Suspicious.test(text)) return undefined;
  if (text.includes('\u0000')) return 'holds the character U+0000, which cannot be stored';
  return text.isWellFormed() ? undefined : 'holds an unpaired UTF-16 surrogate, which cannot be stored';
}

/**
 * The first string (value or member name) in a parsed JSON value that Postgres cannot store, or a
 * nesting deeper than MaxJsonDepth; undefined when the whole value can be stored. Every message a
 * worker takes is checked with it, so such input is a 400 naming the field, never a 500.
 */
export function findUnstorableText(value: unknown, depth = 0): UnstorableText | undefined {
  // The path is made on the way back from a find: a value that can be stored (nearly every message)
  // walks without allocating one.
  if (typeof value === 'string') {
    const reason = storableText(value);
    return reason ? { path: [], reason } : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MaxJsonDepth) return { path: [], reason: `nests deeper than ${MaxJsonDepth} levels` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], depth + 1);
      if (found) return { ...found, path: [String(i), ...found.path] };
    }
    return undefined;
  }
  for (const key in value) {
    const keyReason = storableText(key);
    if (keyReason) return { path: [key], reason: `is a member name that ${keyReason}` };
    const found = findUnstorableText((value as Record<string, unknown>)[key], depth + 1);
    if (found) return { ...found, path: [key, ...found.path] };
  }
  return undefined;
}

/**
 * Whether JSON bytes may parse to a value that findUnstorableText refuses: false only when their
 * strings hold no `\u` escape of U+0000 or of a surrogate and they nest fewer than MaxJsonDepth
 * levels. (Their text cannot hold either otherwise: a U+0000 in a JSON string must be escaped, and
 * UTF-8 decoding makes no lone surrogate.) One pass over the bytes instead of a walk of the parsed
 * value: a worker asks it of every request, and nearly every one is plain.
 */
export function jsonMayBeUnstorable(bytes: Uint8Array): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === Backslash) {
        if (bytes[i + 1] === LowerU && suspiciousEscape(bytes, i + 2)) return true;
        i++;
      } else if (c === Quote) inString = false;
    } else if (c === Quote) inString = true;
    else if (c === OpenBrace || c === OpenBracket) {
      if (++depth >= MaxJsonDepth) return true;
    } else if (c === CloseBrace || c === CloseBracket) depth--;
  }
  return false;
}

const [Backslash, Quote, LowerU, OpenBrace, OpenBracket, CloseBrace, CloseBracket] = [0x5c, 0x22, 0x75, 0x7b, 0x5b, 0x7d, 0x5d];

/** The four hex digits at `at` escape U+0000 or a surrogate (D800 to DFFF). */
function suspiciousEscape(bytes: Uint8Array, at: number): boolean {
  const [h0, h1, h2, h3] = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
  if (h0 === 0x30) return h1 === 0x30 && h2 === 0x30 && h3 === 0x30;
  const hexAtLeast8 = h1 !== undefined && ((h1 >= 0x38 && h1 <= 0x39) || (h1 >= 0x61 && h1 <= 0x66) || (h1 >= 0x41 && h1 <= 0x46));
  return (h0 === 0x64 || h0 === 0x44) && hexAtLeast8;
}

/** "shop.name holds the character U+0000, which cannot be stored". */
export function describeUnstorable(found: UnstorableText): string {
  return `${found.path.length ? found.path.join('.') : 'the value'} ${found.reason}`;
}
