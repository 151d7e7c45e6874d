import fc from 'fast-check';
import t from 'tap';
import { findUnstorableText, jsonMayBeUnstorable, MaxJsonDepth } from '../subjects/formats/json.js';

/**
 * A worker looks at a request's bytes (jsonMayBeUnstorable) before it walks the parsed request for
 * text Postgres cannot store (findUnstorableText), and skips the walk when the bytes say there is
 * nothing to find: the look must never say "nothing" where the walk finds something.
 */
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const nested = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : { a: nested(depth - 1, leaf) });

t.test('a plain request needs no walk; escapes of U+0000 or a surrogate, and deep nesting, do', async (t) => {
  t.equal(jsonMayBeUnstorable(bytes({ name: 'Rotwein 0,75 l', codes: ['4001234567890'], nested: { list: [1, { x: 'é 😀 \\u0000' }] } })), false, 'plain text, an emoji, a backslash before "u0000" as text');
  t.equal(jsonMayBeUnstorable(bytes({ name: 'a\u0000b' })), true, 'U+0000');
  t.equal(jsonMayBeUnstorable(bytes({ name: 'x\ud800' })), true, 'a lone high surrogate');
  t.equal(jsonMayBeUnstorable(bytes({ name: '\udfffy' })), true, 'a lone low surrogate');
  t.equal(jsonMayBeUnstorable(new TextEncoder().encode('{"a":"\\uD83D\\uDE00"}')), true, 'an escaped surrogate pair: the walk decides (and finds it well-formed)');
  t.equal(findUnstorableText(JSON.parse('{"a":"\\uD83D\\uDE00"}')), undefined);
  t.equal(jsonMayBeUnstorable(bytes({ '\u0000': 1 })), true, 'in a member name');
  t.equal(jsonMayBeUnstorable(bytes({ text: '{[{[{[' .repeat(40) })), false, 'brackets inside a string do not nest');
  t.equal(jsonMayBeUnstorable(bytes(nested(MaxJsonDepth - 1, 1))), false, `${MaxJsonDepth - 1} levels`);
  t.equal(jsonMayBeUnstorable(bytes(nested(MaxJsonDepth, 1))), true, `${MaxJsonDepth} levels: the walk decides`);
  t.match(findUnstorableText(nested(MaxJsonDepth + 1, 1)), { reason: /nests deeper/ });
});

t.test('whenever the walk finds something, the look said to walk', async (t) => {
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 12 }),
    fc.constantFrom('\u0000', 'a\ud800', '\udc00b', '😀', '\\u0000', '"', '\\', '{[', ']}'),
  );
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text,
      fc.integer(),
      fc.constant(null),
      fc.array(tie('node'), { maxLength: 3 }),
      fc.dictionary(text, tie('node'), { maxKeys: 3 }),
    ),
  })).node;
  const deep = fc.tuple(fc.integer({ min: MaxJsonDepth - 3, max: MaxJsonDepth + 3 }), value).map(([depth, leaf]) => nested(depth, leaf));
  fc.assert(
    fc.property(fc.oneof(value, deep), (v) => {
      if (findUnstorableText(v) !== undefined) return jsonMayBeUnstorable(bytes(v));
      return true;
    }),
    { numRuns: 5000 },
  );
  t.pass('5000 values');
});
