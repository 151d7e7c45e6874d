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
