/**
 * A product file as lines of JSON, whatever it came as: ndjson lines stay as they are; a CSV file
 * (the first row naming the fields) becomes one object per row, with its empty cells left out. Each
 * line keeps its line number in the file, and what cannot be read is a problem at its line: the
 * screen lists both beside the API's refusals.
 *
 * CSV is read by papaparse (loaded when the first CSV file is, not with the portal), with what
 * files from Excel need around it:
 * - the bytes' encoding chosen, or found: a byte order mark, else UTF-8 if the bytes are UTF-8,
 *   else Windows-1252 (what German Excel writes "CSV (Trennzeichen-getrennt)" in);
 * - the separator (`;`, `,` or tab) found by papaparse from how the first rows split, quotes
 *   respected;
 * - quoted fields may hold separators, quotes (doubled) and line breaks;
 * - a quote that is never closed, or a quoted field with text after its closing quote, costs its
 *   own line only: reading goes on at the next line (papaparse alone takes the following lines
 *   into that field, up to the end of the file when no quote closes it);
 * - a row with more filled fields than the header names is not read (its values would land in the
 *   wrong columns); fewer are empty cells.
 */
export interface FileLine {
  line: number;
  json: string;
}

/** What could not be read, by its line in the file. */
export type LineProblem =
  | { line: number; kind: 'quote' | 'notUtf8' }
  | { line: number; kind: 'tooManyFields'; fields: number; columns: number };

export const Encodings = ['auto', 'utf-8', 'windows-1252'] as const;
export type Encoding = (typeof Encodings)[number];
/** How the bytes were read: as chosen, or as found (a byte order mark may say UTF-16). */
export type ReadEncoding = Exclude<Encoding, 'auto'> | 'utf-16le' | 'utf-16be';
export type Separator = ';' | ',' | '\t';

export interface ProductFile {
  lines: FileLine[];
  problems: LineProblem[];
  encoding: ReadEncoding;
  /** For CSV files: the separator found. */
  separator?: Separator;
}

const Separators: Separator[] = [';', ',', '\t'];

export function isCsv(name: string): boolean {
  return /\.(csv|tsv|txt)$/i.test(name);
}

export async function readProductFile(name: string, bytes: Uint8Array, encoding: Encoding = 'auto'): Promise<ProductFile> {
  const decoded = decode(bytes, encoding);
  if ('problem' in decoded) return { lines: [], problems: [decoded.problem], encoding: 'utf-8' };
  const { text } = decoded;
  if (!isCsv(name)) {
    const lines = text
      .split('\n')
      .map((raw, i) => ({ line: i + 1, json: raw.replace(/\r$/, '') }))
      .filter((l) => l.json.trim() !== '');
    return { lines, problems: [], encoding: decoded.encoding };
  }
  return { ...(await csvLines(text)), encoding: decoded.encoding };
}

function decode(bytes: Uint8Array, encoding: Encoding): { text: string; encoding: ReadEncoding } | { problem: LineProblem } {
  if (encoding === 'windows-1252') return { text: new TextDecoder('windows-1252').decode(bytes), encoding };
  if (encoding === 'auto') {
    if (bytes[0] === 0xff && bytes[1] === 0xfe) return { text: new TextDecoder('utf-16le').decode(bytes), encoding: 'utf-16le' };
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return { text: new TextDecoder('utf-16be').decode(bytes), encoding: 'utf-16be' };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    if (encoding === 'auto') return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' };
    // Chosen as UTF-8 but it is not: the line of the first bytes that are not.
    const lenient = new TextDecoder('utf-8').decode(bytes);
    return { problem: { line: lineAt(lenient, lenient.indexOf('\ufffd')), kind: 'notUtf8' } };
  }
}

/** The line (from 1) that the character at `index` is on. */
function lineAt(text: string, index: number): number {
  return 1 + countBreaks(text, 0, index);
}

/** Line breaks (LF, CRLF or a lone CR) in text[from, to). */
function countBreaks(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text[i];
    if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) n++;
  }
  return n;
}

/** Where the line after the one that `from` is on starts (the text's end on the last line). */
function nextLineStart(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\n') return i + 1;
    if (text[i] === '\r') return text[i + 1] === '\n' ? i + 2 : i + 1;
  }
  return text.length;
}

async function csvLines(text: string): Promise<{ lines: FileLine[]; problems: LineProblem[]; separator: Separator }> {
  const { default: Papa } = await import('papaparse');
  // The separator from the first rows; empty rows (Excel's ";;;;" among them) do not count.
  const guessed = Papa.parse<string[]>(text, { preview: 10, skipEmptyLines: 'greedy', delimitersToGuess: Separators });
  const separator = (Separators as string[]).includes(guessed.meta.delimiter) ? (guessed.meta.delimiter as Separator) : ',';

  const lines: FileLine[] = [];
  const problems: LineProblem[] = [];
  let header: string[] | undefined;
  // Each row with the line it starts on. After a row whose quotes are broken, reading starts
  // again on the next line.
  let offset = 0;
  let line = 1;
  while (offset < text.length) {
    let start = offset;
    let resume: number | undefined;
    let resumeLine = line;
    Papa.parse<string[]>(text.slice(offset), {
      delimiter: separator,
      step(row, parser) {
        // A quoted field not closed, or text after its closing quote: papaparse went on looking
        // for a closing quote, through the lines after this one.
        if (row.errors.some((e) => e.type === 'Quotes')) {
          problems.push({ line, kind: 'quote' });
          // Without its names no row can be read.
          if (header) [resume, resumeLine] = [nextLineStart(text, start), line + 1];
          parser.abort();
          return;
        }
        const cells = row.data;
        if (cells.some((c) => c.trim() !== '')) {
          if (!header) header = cells.map((c) => c.trim());
          else {
            // Empty cells past the header's (Excel writes them) are no fields.
            const filled = cells.findLastIndex((c) => c !== '') + 1;
            if (filled > header.length) problems.push({ line, kind: 'tooManyFields', fields: filled, columns: header.length });
            else lines.push({ line, json: JSON.stringify(objectOf(header, cells)) });
          }
        }
        const end = offset + row.meta.cursor;
        line += countBreaks(text, start, end);
        start = end;
      },
    });
    if (resume === undefined) break;
    [offset, line] = [resume, resumeLine];
  }
  return { lines, problems, separator };
}

function objectOf(header: readonly string[], cells: readonly string[]): Record<string, string> {
  const item: Record<string, string> = {};
  header.forEach((field, i) => {
    const value = cells[i] ?? '';
    if (field && value !== '') item[field] = value;
  });
  return item;
}
