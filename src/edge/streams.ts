/** Streamed bodies: items that are already JSON text, written as ndjson or inside a JSON array. */

export async function* asJsonText(items: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const item of items) yield JSON.stringify(item);
}

export async function* ndjson(items: AsyncIterable<string>): AsyncGenerator<string> {
  for await (const item of items) yield `${item}\n`;
}

/** `[a,b,c]`, or with another opening and closing, such as `{"products":[` ... `]}`. */
export async function* jsonArray(items: AsyncIterable<string>, open = '[', close = ']'): AsyncGenerator<string> {
  let first = true;
  yield open;
  for await (const item of items) {
    yield first ? item : `,${item}`;
    first = false;
  }
  yield close;
}

export interface ListPart {
  items: readonly string[];
  next: string | null;
}

/**
 * A list that travels from a worker in parts (a message holds one part): the items of each part,
 * then the part after its `next`, until `limit` items are out or no part follows.
 */
export async function* inParts(first: ListPart, limit: number, nextPart: (next: string, remaining: number) => Promise<ListPart>): AsyncGenerator<string> {
  let part = first;
  let remaining = limit;
  for (;;) {
    yield* part.items.length > remaining ? part.items.slice(0, remaining) : part.items;
    remaining -= part.items.length;
    if (!part.next || remaining <= 0) return;
    part = await nextPart(part.next, remaining);
  }
}
