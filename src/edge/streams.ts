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
