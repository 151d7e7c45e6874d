import fc from 'fast-check';
import t from 'tap';
import { Permissions } from '../src/auth/permissions.js';
import { startTestService, TestProject } from './support/service.js';

/**
 * Bad input never costs a 500 or the good lines: every write route of /openapi.json (so also the
 * routes added after this test was written) gets arbitrary JSON (text with U+0000 and lone
 * surrogates, 100 KB strings, deep nesting, huge and negative numbers, wrong types) in its body, its
 * path and in the members its body documents; no answer is a 5xx. Batches that mix valid lines
 * with such lines store every valid line.
 */
const svc = await startTestService(t);
const token = await svc.token([...Permissions]);
const p = `/${TestProject}`;

interface Operation {
  method: string;
  path: string;
  members: string[];
}
const doc = (await svc.request('GET', '/openapi.json')).body as {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> } }>>;
};
const writes: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops)
    .filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method) && path.startsWith('/{project}'))
    .map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      members: Object.keys(Object.values(op.requestBody?.content ?? {})[0]?.schema?.properties ?? {}),
    })),
);

// Text Postgres cannot store, and text that is merely unusual.
const nastyText = fc.oneof(
  fc.constantFrom('a\u0000b', '\u0000', '\ud800', 'x\udfffy', '\ud83d', 'é\u0000', '\u202e', '', ' ', '../../etc', '%00', "'; drop table shops; --", '{"a":1}', '\uffff'),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: 1, max: 3 }).map((n) => 'x'.repeat(n * 50_000)),
);
const nastyNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1e308, -1e308, 2 ** 53, -(2 ** 53), 2 ** 63, 2 ** 31, -(2 ** 31) - 1, 1.5, 0.1, 4.9e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);
function deep(depth: number, leaf: unknown, asArray: boolean): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
}
const leaf: fc.Arbitrary<unknown> = fc.oneof(nastyText, nastyNumber, fc.boolean(), fc.constant(null));
const nasty: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: leaf },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 50, max: 3000 }), leaf, fc.boolean()).map(([d, l, a]) => deep(d, l, a)) },
  { weight: 2, arbitrary: fc.array(leaf, { maxLength: 4 }) },
  { weight: 2, arbitrary: fc.dictionary(nastyText.filter((k) => k.length < 1000), leaf, { maxKeys: 4 }) },
);

/** A body in the shape the route documents (its members), with nasty values; or nasty as a whole. */
const bodyFor = (op: Operation): fc.Arbitrary<unknown> =>
  op.members.length
    ? fc.oneof(
        { weight: 4, arbitrary: fc.record(Object.fromEntries(op.members.map((m) => [m, nasty])), { requiredKeys: [] }) },
        { weight: 1, arbitrary: nasty },
      )
    : nasty;

/** A path of the route with its parameters filled: mostly harmless ids, sometimes nasty ones. */
const pathFor = (op: Operation): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof(fc.constantFrom('s1', 'x', '42', 'WATER', 'a-b_c'), nastyText.filter((s) => s.length > 0 && s.length < 300)), { minLength: 8, maxLength: 8 })
    .map((values) => {
      let i = 0;
      return op.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'project' ? TestProject : encodeURIComponent((values[i++] ?? 'x').toWellFormed())));
    });

async function send(method: string, path: string, body: unknown, contentType = 'application/json') {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let payload: string | undefined;
  if (body !== undefined && method !== 'DELETE') {
    headers['content-type'] = contentType;
    payload = contentType.includes('ndjson') ? (body as string) : JSON.stringify(body);
  }
  const res = await fetch(`${svc.url}${path}`, { method, headers, body: payload });
  return { status: res.status, text: await res.text() };
}

t.test('knows the write routes it exercises', async (t) => {
  t.ok(writes.length >= 25, `${writes.length} write routes: ${writes.map((o) => `${o.method} ${o.path}`).join(', ')}`);
});

t.test('answers no 5xx to arbitrary JSON on any write route (property)', async (t) => {
  let requests = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...writes).chain((op) => fc.tuple(fc.constant(op), pathFor(op), bodyFor(op), fc.constantFrom('application/json', 'application/merge-patch+json', 'application/x-ndjson'))),
      async ([op, path, body, contentType]) => {
        const ndjsonBody = contentType.includes('ndjson') ? JSON.stringify(body) : body;
        const res = await send(op.method, path, ndjsonBody, contentType);
        requests++;
        if (res.status >= 500) throw new Error(`${op.method} ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
      },
    ),
    { numRuns: Number(process.env.BAD_INPUT_RUNS ?? 1500) },
  );
  t.pass(`${requests} requests, none answered 5xx`);
});

t.test('stores every valid line of a batch that also holds bad lines (property)', async (t) => {
  let round = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(fc.constant('valid'), nasty), { minLength: 2, maxLength: 12 }), async (lines) => {
      round++;
      const valid = lines.map((l, i) => (l === 'valid' ? `bad-${round}-${i}` : undefined));
      const text = lines
        .map((l, i) => (l === 'valid' ? JSON.stringify({ sku: valid[i], name: `Produkt ${i} ü €` }) : JSON.stringify({ sku: `bad-${round}-${i}`, name: l })))
        .join('\n');
      const res = await send('POST', `${p}/products/_batch`, text, 'application/x-ndjson');
      if (res.status !== 200) throw new Error(`the batch answered ${res.status}: ${res.text.slice(0, 300)}`);
      const results = res.text.split('\n').filter(Boolean).map((r) => JSON.parse(r) as { sku: string; status: string });
      if (results.length !== lines.length) throw new Error(`${results.length} results for ${lines.length} lines`);
      for (const [i, sku] of valid.entries()) {
        if (!sku) continue;
        if (results[i]?.status !== 'ok') throw new Error(`valid line ${i} answered ${JSON.stringify(results[i])}`);
        const stored = await svc.request('GET', `${p}/products/sku/${sku}`, { token });
        if (stored.status !== 200) throw new Error(`valid line ${i} (${sku}) was not stored`);
      }
    }),
    { numRuns: 60 },
  );
  t.pass(`${round} batches, every valid line stored`);
});
