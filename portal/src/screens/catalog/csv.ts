/**
 * A product file as lines of JSON, whatever it came as: ndjson lines stay as they are; a CSV file
 * (comma or semicolon separated, the first row naming the fields, quotes as RFC 4180) becomes one
 * object per row, with its empty cells left out. Each line keeps its line number in the file.
 */
export interface FileLine {
  line: number;
  json: string;
}

export function linesOf(name: string, text: string): FileLine[] {
  if (/\.csv$/i.test(name)) return csvLines(text);
  return text
    .split('\n')
    .map((raw, i) => ({ line: i + 1, json: raw.replace(/\r$/, '') }))
    .filter((l) => l.json.trim() !== '');
}

function csvLines(text: string): FileLine[] {
  const rows = parseCsv(text);
  const header = rows.shift();
  if (!header) return [];
  return rows
    .filter((r) => r.cells.some((c) => c !== ''))
    .map((r) => {
      const item: Record<string, string> = {};
      header.cells.forEach((field, i) => {
        const value = r.cells[i] ?? '';
        if (field && value !== '') item[field.trim()] = value;
      });
      return { line: r.line, json: JSON.stringify(item) };
    });
}

function parseCsv(text: string): Array<{ line: number; cells: string[] }> {
  const firstLine = text.slice(0, text.indexOf('\n') >>> 0);
  const separator = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  const rows: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        cell += c;
      }
    } else if (c === '"') quoted = true;
    else if (c === separator) {
      cells.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      cells.push(cell);
      rows.push({ line: rowLine, cells });
      cells = [];
      cell = '';
      line++;
      rowLine = line;
    } else cell += c;
  }
  if (cell !== '' || cells.length) rows.push({ line: rowLine, cells: [...cells, cell] });
  return rows;
}
