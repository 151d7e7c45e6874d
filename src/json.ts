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

function isRecord(value: unknown): value is JsonRecord {
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
