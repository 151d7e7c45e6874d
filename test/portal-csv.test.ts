import fc from 'fast-check';
import t from 'tap';
import { importPortalModule } from './support/portal-module.js';

/**
 * The portal's reading of product files (portal/src/screens/catalog/csv.ts, papaparse inside), run
 * as the browser gets it, on files shaped as Excel and other tools write them: a German Excel
 * export in Windows-1252, Excel's "Unicode text" (UTF-16, tabs), quoted line breaks, stray quotes.
 * What each line becomes is what the import sends to `POST /products/_batch`, by its line in the file.
 */
interface FileLine {
  line: number;
  json: string;
}
type Encoding = 'auto' | 'utf-8' | 'windows-1252';
interface ProductFile {
  lines: FileLine[];
  problems: Array<{ line: number; kind: string; fields?: number; columns?: number }>;
  encoding: string;
  separator?: string;
}
interface CsvModule {
  readProductFile(name: string, bytes: Uint8Array, encoding?: Encoding): Promise<ProductFile>;
}

const { readProductFile } = await importPortalModule<CsvModule>(t, 'screens/catalog/csv.ts');

/** What the file's lines become: objects by line. */
const read = async (name: string, bytes: Uint8Array, encoding?: Encoding) => {
  const file = await readProductFile(name, bytes, encoding);
  return { ...file, items: file.lines.map((l) => ({ line: l.line, ...JSON.parse(l.json) })) };
};

/** Windows-1252's letters above ASCII that Latin-1 has elsewhere (the rest is Latin-1). */
const Cp1252: Record<string, number> = { '€': 0x80, '‚': 0x82, '„': 0x84, '…': 0x85, '‘': 0x91, '’': 0x92, '“': 0x93, '”': 0x94, '–': 0x96, '—': 0x97 };
function windows1252(text: string): Uint8Array {
  return Uint8Array.from([...text], (c) => {
    const code = c.codePointAt(0)!;
    if (Cp1252[c] !== undefined) return Cp1252[c];
    if (code < 0x80 || (code >= 0xa0 && code <= 0xff)) return code;
    throw new Error(`${c} is not in Windows-1252`);
  });
}

/** As German Excel saves "CSV (Trennzeichen-getrennt)": Windows-1252, `;`, CRLF, quotes only where needed, Alt+Enter as LF. */
const excelExport = [
  'sku;name;description;taxCategory;saleRestriction',
  'KAESE-01;Bergkäse würzig;"Gereift; 12 Monate";reduced;',
  'BROT-02;Brötchen „Kaiser“;"Zweizeilig:\nfrisch gebacken";reduced;',
  ';;;;',
  'SCHNAPS;Obstbrand 0,7 l;"40 % vol., ""Edel""";normal;min_age_18',
  'GRUSS;Grüße aus Köln – 5 €;;normal;',
  '',
].join('\r\n');

t.test('a German Excel export (Windows-1252, semicolons, quoted separators, quotes and line breaks) reads with its umlauts, by line', async (t) => {
  const file = await read('Artikel.csv', windows1252(excelExport));
  t.equal(file.encoding, 'windows-1252', 'not UTF-8, so Windows-1252');
  t.equal(file.separator, ';');
  t.same(file.problems, []);
  t.same(file.items, [
    { line: 2, sku: 'KAESE-01', name: 'Bergkäse würzig', description: 'Gereift; 12 Monate', taxCategory: 'reduced' },
    { line: 3, sku: 'BROT-02', name: 'Brötchen „Kaiser“', description: 'Zweizeilig:\nfrisch gebacken', taxCategory: 'reduced' },
    { line: 6, sku: 'SCHNAPS', name: 'Obstbrand 0,7 l', description: '40 % vol., "Edel"', taxCategory: 'normal', saleRestriction: 'min_age_18' },
    { line: 7, sku: 'GRUSS', name: 'Grüße aus Köln – 5 €', taxCategory: 'normal' },
  ], 'the row after the quoted line break is line 6 of the file; the empty row is left out');

  const chosen = await read('Artikel.csv', windows1252(excelExport), 'windows-1252');
  t.same(chosen.items, file.items, 'the same when Windows-1252 is chosen');
  const wrong = await read('Artikel.csv', windows1252(excelExport), 'utf-8');
  t.same(wrong.items, [], 'chosen as UTF-8, nothing is read');
  t.same(wrong.problems, [{ line: 2, kind: 'notUtf8' }], 'and the first line that is not UTF-8 is named');
});

t.test('the same export saved as "CSV UTF-8" (a byte order mark) reads the same', async (t) => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(excelExport)]);
  const file = await read('Artikel.csv', bytes);
  t.equal(file.encoding, 'utf-8');
  t.same(file.items, (await read('Artikel.csv', windows1252(excelExport))).items, 'no byte order mark in the first column name');
});

t.test('tab-separated files: Excel\'s "Unicode text" (UTF-16 with tabs) and a plain .tsv', async (t) => {
  const unicodeText = ['sku\tname\ttaxCategory', 'TEE-1\tGrüner Tee, lose; 100 g\tnormal', 'TEE-2\t"Rooibos ""Vanille"""\tnormal', ''].join('\r\n');
  const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from(unicodeText, 'utf16le')]);
  const file = await read('Tee.txt', utf16);
  t.equal(file.encoding, 'utf-16le');
  t.equal(file.separator, '\t', 'tabs, though the names hold commas and semicolons');
  t.same(file.items, [
    { line: 2, sku: 'TEE-1', name: 'Grüner Tee, lose; 100 g', taxCategory: 'normal' },
    { line: 3, sku: 'TEE-2', name: 'Rooibos "Vanille"', taxCategory: 'normal' },
  ]);
  const tsv = await read('tee.tsv', new TextEncoder().encode('sku\tname\nA\tApfel\nB\tBirne\n'));
  t.same(tsv.items, [{ line: 2, sku: 'A', name: 'Apfel' }, { line: 3, sku: 'B', name: 'Birne' }]);
});

t.test('the separator is the one outside quotes, however many others the quoted fields hold', async (t) => {
  const csv = ['sku,name,"description; long; with; many; semicolons"', 'A1,"Saft; naturtrüb; 1 l","Apfel; Birne; Quitte"', 'A2,Wasser,"still; 0,5 l"', ''].join('\n');
  const file = await read('saft.csv', new TextEncoder().encode(csv));
  t.equal(file.separator, ',');
  t.same(file.items, [
    { line: 2, sku: 'A1', name: 'Saft; naturtrüb; 1 l', 'description; long; with; many; semicolons': 'Apfel; Birne; Quitte' },
    { line: 3, sku: 'A2', name: 'Wasser', 'description; long; with; many; semicolons': 'still; 0,5 l' },
  ]);
});

t.test('a stray quote costs its own line only: the lines after it are read, and it is named by its line', async (t) => {
  const csv = [
    'sku;name;taxCategory',
    'PIZZA;Pizza 30 cm (12" Ø);normal',
    'BROT;"Brot;reduced',
    'KAESE;Käse;reduced',
    'WEIN;"Wein" rot;normal',
    'WASSER;Wasser;normal',
  ].join('\n');
  const file = await read('stray.csv', new TextEncoder().encode(csv));
  t.same(file.items, [
    { line: 2, sku: 'PIZZA', name: 'Pizza 30 cm (12" Ø)', taxCategory: 'normal' },
    { line: 4, sku: 'KAESE', name: 'Käse', taxCategory: 'reduced' },
    { line: 6, sku: 'WASSER', name: 'Wasser', taxCategory: 'normal' },
  ], 'a quote inside a field is a character; the lines after a broken one are read');
  t.same(file.problems, [{ line: 3, kind: 'quote' }, { line: 5, kind: 'quote' }], 'a quote never closed, and text after a closing quote');
});

t.test('a row with more filled fields than the header names is not read; empty trailing cells are no fields', async (t) => {
  const csv = ['sku;name', 'A;Apfel;;', 'B;Birne; reif;Frucht', 'C;Kirsche', ''].join('\n');
  const file = await read('fields.csv', new TextEncoder().encode(csv));
  t.same(file.items, [{ line: 2, sku: 'A', name: 'Apfel' }, { line: 4, sku: 'C', name: 'Kirsche' }]);
  t.same(file.problems, [{ line: 3, kind: 'tooManyFields', fields: 4, columns: 2 }]);
});

t.test('a file without rows, or only a header, has no lines', async (t) => {
  t.same((await read('empty.csv', new Uint8Array())).items, []);
  t.same((await read('header.csv', new TextEncoder().encode('sku;name\r\n'))).items, []);
  const broken = await read('broken.csv', new TextEncoder().encode('sku;"name\nA;Apfel\n'));
  t.same(broken.items, [], 'a header whose quote is not closed: no row can be read');
  t.same(broken.problems, [{ line: 1, kind: 'quote' }]);
});

t.test('ndjson stays as its lines, numbered, empty lines left out', async (t) => {
  const ndjson = '{"sku":"A","name":"Äpfel"}\r\n\n{"sku":"B","name":"Birne"}\n';
  const file = await readProductFile('produkte.ndjson', new TextEncoder().encode(ndjson));
  t.same(file.lines, [{ line: 1, json: '{"sku":"A","name":"Äpfel"}' }, { line: 3, json: '{"sku":"B","name":"Birne"}' }]);
});

t.test('any table written as Excel writes it reads back as its rows, each at the line it starts on', async () => {
  const cell = (separator: string) => fc.string({ unit: fc.constantFrom('a', 'Ä', 'ß', ' ', '"', '\n', '\r\n', separator, '€'), maxLength: 8 });
  const table = fc.constantFrom(';', ',', '\t').chain((separator) =>
    fc.record({ separator: fc.constant(separator), newline: fc.constantFrom('\r\n', '\n'), rows: fc.array(fc.tuple(cell(separator), cell(separator), cell(separator)), { maxLength: 12 }) }),
  );
  await fc.assert(
    fc.asyncProperty(table, async ({ separator, newline, rows }) => {
      const quote = (value: string) => (/["\r\n]/.test(value) || value.includes(separator) ? `"${value.replace(/"/g, '""')}"` : value);
      const records = [['sku', 'name', 'note'], ...rows].map((r) => r.map(quote).join(separator));
      const text = records.join(newline) + newline;
      const file = await readProductFile('table.csv', new TextEncoder().encode(text));
      let line = 1 + (records[0]!.split(/\r\n|\n/).length - 1) + 1;
      const expected: FileLine[] = [];
      rows.forEach((r, i) => {
        if (r.some((c) => c.trim() !== '')) {
          const item = Object.fromEntries(['sku', 'name', 'note'].map((name, j) => [name, r[j]!]).filter(([, v]) => v !== ''));
          expected.push({ line, json: JSON.stringify(item) });
        }
        line += records[i + 1]!.split(/\r\n|\n/).length - 1 + 1;
      });
      return file.problems.length === 0 && JSON.stringify(file.lines) === JSON.stringify(expected) && file.separator === separator;
    }),
    { numRuns: 300 },
  );
});
