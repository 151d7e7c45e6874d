import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, useId } from '../../ui.js';
import { Encodings, isCsv, readProductFile, type Encoding, type LineProblem, type ProductFile } from './csv.js';

interface LineResult {
  sku: string;
  status: 'ok' | 'error';
  message?: string;
  line?: number;
}

const words = {
  de: {
    title: 'Produkte importieren',
    file: 'Datei (ndjson oder CSV)',
    encoding: 'Zeichensatz',
    'encoding.auto': 'automatisch (UTF-8, sonst Windows-1252)',
    'encoding.utf-8': 'UTF-8',
    'encoding.windows-1252': 'Windows-1252 (Excel)',
    start: 'Import starten',
    progress: 'Importfortschritt',
    progressText: { one: '{done} von {n} Zeile', other: '{done} von {n} Zeilen' },
    read: 'Gelesen als {encoding}{separator}.',
    'separator.;': ', Spalten durch Semikolon getrennt',
    'separator.,': ', Spalten durch Komma getrennt',
    'separator.\t': ', Spalten durch Tabulator getrennt',
    done: 'Fertig: {stored}, {failed}.',
    stored: { one: '{n} Produkt gespeichert', other: '{n} Produkte gespeichert' },
    failedLines: { one: '{n} Zeile fehlerhaft', other: '{n} Zeilen fehlerhaft' },
    failedTitle: 'Fehlerhafte Zeilen',
    line: 'Zeile {line}',
    empty: 'Die Datei enthält keine Zeile.',
    quote: 'Ein Feld in Anführungszeichen endet nicht mit einem Anführungszeichen vor dem nächsten Trennzeichen (Anführungszeichen im Feld werden verdoppelt: ""); die Zeile wurde nicht gelesen, weiter ab der nächsten.',
    tooManyFields: '{fields} Felder, die Kopfzeile nennt {columns}; die Zeile wurde nicht gelesen.',
    notUtf8: 'Die Datei ist kein UTF-8 (ab hier): wählen Sie Windows-1252 oder „automatisch“.',
  },
  en: {
    title: 'Import products',
    file: 'File (ndjson or CSV)',
    encoding: 'Character set',
    'encoding.auto': 'automatic (UTF-8, else Windows-1252)',
    'encoding.utf-8': 'UTF-8',
    'encoding.windows-1252': 'Windows-1252 (Excel)',
    start: 'Start import',
    progress: 'Import progress',
    progressText: { one: '{done} of {n} line', other: '{done} of {n} lines' },
    read: 'Read as {encoding}{separator}.',
    'separator.;': ', columns separated by semicolons',
    'separator.,': ', columns separated by commas',
    'separator.\t': ', columns separated by tabs',
    done: 'Done: {stored}, {failed}.',
    stored: { one: '{n} product stored', other: '{n} products stored' },
    failedLines: { one: '{n} line failed', other: '{n} lines failed' },
    failedTitle: 'Failed lines',
    line: 'Line {line}',
    empty: 'The file holds no line.',
    quote: 'A field in quotes does not end with a quote before the next separator (quotes inside a field are doubled: ""); the line was not read, reading went on at the next one.',
    tooManyFields: '{fields} fields, the header names {columns}; the line was not read.',
    notUtf8: 'The file is not UTF-8 (from here on): choose Windows-1252 or "automatic".',
  },
};

/** Lines per request: the API takes up to 20000 ndjson lines; smaller parts let the bar move. */
const LinesPerRequest = 500;

const EncodingNames: Record<ProductFile['encoding'], string> = { 'utf-8': 'UTF-8', 'windows-1252': 'Windows-1252', 'utf-16le': 'UTF-16', 'utf-16be': 'UTF-16' };

interface FailedLine {
  line: number;
  sku?: string;
  message: string;
}

/**
 * Imports a product file through the batch API, part after part, with a progress bar; a bad line
 * costs only itself, and each is listed with its line in the file and why: what could not be read
 * (csv.ts), or the API's message.
 */
export function ImportProducts({ api, onImported }: { api: ProjectApi; onImported(): void }) {
  const t = useWords(words);
  const ids = { file: useId('file'), encoding: useId('encoding') };
  const [file, setFile] = useState<File | null>(null);
  const [encoding, setEncoding] = useState<Encoding>('auto');
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [failed, setFailed] = useState<FailedLine[]>([]);
  const [read, setRead] = useState('');
  const [summary, setSummary] = useState<string>('');
  const [error, setError] = useState<unknown>();

  const problemText = (p: LineProblem) => (p.kind === 'tooManyFields' ? t('tooManyFields', { fields: p.fields, columns: p.columns }) : t(p.kind));

  const run = async (event: Event) => {
    event.preventDefault();
    if (!file) return;
    setError(undefined);
    setFailed([]);
    setSummary('');
    setRead('');
    setProgress(null);
    try {
      const { lines, problems, encoding: readAs, separator } = await readProductFile(file.name, new Uint8Array(await file.arrayBuffer()), encoding);
      if (isCsv(file.name)) setRead(t('read', { encoding: EncodingNames[readAs], separator: separator ? t(`separator.${separator}`) : '' }));
      const errors: FailedLine[] = problems.map((p) => ({ line: p.line, message: problemText(p) }));
      if (!lines.length) {
        setFailed(errors);
        return setSummary(errors.length ? t('done', { stored: t('stored', { n: 0 }), failed: t('failedLines', { n: errors.length }) }) : t('empty'));
      }
      setProgress({ done: 0, total: lines.length });
      for (let start = 0; start < lines.length; start += LinesPerRequest) {
        const part = lines.slice(start, start + LinesPerRequest);
        const answer = await api.call<string>('POST', '/products/_batch', { raw: { data: part.map((l) => l.json).join('\n'), contentType: 'application/x-ndjson' } });
        const results = String(answer.body)
          .split('\n')
          .filter(Boolean)
          .map((text) => JSON.parse(text) as LineResult);
        results.forEach((r, i) => {
          if (r.status === 'error') errors.push({ line: part[(r.line ?? i + 1) - 1]?.line ?? start + i + 1, sku: r.sku, message: r.message ?? '' });
        });
        setProgress({ done: Math.min(lines.length, start + part.length), total: lines.length });
      }
      setFailed(errors.sort((a, b) => a.line - b.line));
      const stored = lines.length - (errors.length - problems.length);
      setSummary(t('done', { stored: t('stored', { n: stored }), failed: t('failedLines', { n: errors.length }) }));
      onImported();
    } catch (err) {
      setError(err);
    }
  };

  return html`<section class="panel" aria-labelledby="import-title">
    <h2 id="import-title">${t('title')}</h2>
    <form onSubmit=${run}>
      <div class="row">
        <${Field} id=${ids.file} label=${t('file')}>
          <input id=${ids.file} type="file" accept=".ndjson,.jsonl,.json,.csv,.tsv,.txt,text/csv,text/tab-separated-values,application/x-ndjson" onChange=${(e: Event) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
        <//>
        <${Field} id=${ids.encoding} label=${t('encoding')}>
          <select id=${ids.encoding} value=${encoding} onChange=${(e: Event) => setEncoding((e.target as HTMLSelectElement).value as Encoding)}>
            ${Encodings.map((e) => html`<option value=${e}>${t(`encoding.${e}`)}</option>`)}
          </select>
        <//>
      </div>
      <button type="submit" disabled=${!file || (progress !== null && progress.done < progress.total && !summary)}>${t('start')}</button>
    </form>
    ${progress
      ? html`<div class="progress">
          <progress aria-label=${t('progress')} max=${progress.total} value=${progress.done}></progress>
          <span>${t('progressText', { done: progress.done, n: progress.total })}</span>
        </div>`
      : null}
    <${ErrorMessage} error=${error} />
    <p role="status">${[read, summary].filter(Boolean).join(' ')}</p>
    ${failed.length
      ? html`<h3>${t('failedTitle')}</h3>
          <ul class="plain failed-lines">
            ${failed.map((f) => html`<li><strong>${t('line', { line: f.line })}</strong>${f.sku ? ` (${f.sku})` : ''}: ${f.message}</li>`)}
          </ul>`
      : null}
  </section>`;
}
