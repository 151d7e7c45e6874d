import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, useId } from '../../ui.js';
import { linesOf } from './csv.js';

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
    start: 'Import starten',
    progress: 'Importfortschritt',
    progressText: { one: '{done} von {n} Zeile', other: '{done} von {n} Zeilen' },
    done: 'Fertig: {stored}, {failed}.',
    stored: { one: '{n} Produkt gespeichert', other: '{n} Produkte gespeichert' },
    failedLines: { one: '{n} Zeile fehlerhaft', other: '{n} Zeilen fehlerhaft' },
    failedTitle: 'Fehlerhafte Zeilen',
    line: 'Zeile {line}',
    empty: 'Die Datei enthält keine Zeile.',
  },
  en: {
    title: 'Import products',
    file: 'File (ndjson or CSV)',
    start: 'Start import',
    progress: 'Import progress',
    progressText: { one: '{done} of {n} line', other: '{done} of {n} lines' },
    done: 'Done: {stored}, {failed}.',
    stored: { one: '{n} product stored', other: '{n} products stored' },
    failedLines: { one: '{n} line failed', other: '{n} lines failed' },
    failedTitle: 'Failed lines',
    line: 'Line {line}',
    empty: 'The file holds no line.',
  },
};

/** Lines per request: the API takes up to 20000 ndjson lines; smaller parts let the bar move. */
const LinesPerRequest = 500;

/**
 * Imports a product file through the batch API, part after part, with a progress bar; a bad line
 * costs only itself, and each is listed with its line in the file and the API's message.
 */
export function ImportProducts({ api, onImported }: { api: ProjectApi; onImported(): void }) {
  const t = useWords(words);
  const id = useId('file');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [failed, setFailed] = useState<Array<{ line: number; sku: string; message: string }>>([]);
  const [summary, setSummary] = useState<string>('');
  const [error, setError] = useState<unknown>();

  const run = async (event: Event) => {
    event.preventDefault();
    if (!file) return;
    setError(undefined);
    setFailed([]);
    setSummary('');
    const lines = linesOf(file.name, await file.text());
    if (!lines.length) return setSummary(t('empty'));
    setProgress({ done: 0, total: lines.length });
    const errors: Array<{ line: number; sku: string; message: string }> = [];
    try {
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
      setFailed(errors);
      setSummary(t('done', { stored: t('stored', { n: lines.length - errors.length }), failed: t('failedLines', { n: errors.length }) }));
      onImported();
    } catch (err) {
      setError(err);
    }
  };

  return html`<section class="panel" aria-labelledby="import-title">
    <h2 id="import-title">${t('title')}</h2>
    <form onSubmit=${run}>
      <${Field} id=${id} label=${t('file')}>
        <input id=${id} type="file" accept=".ndjson,.jsonl,.json,.csv,text/csv,application/x-ndjson" onChange=${(e: Event) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
      <//>
      <button type="submit" disabled=${!file || (progress !== null && progress.done < progress.total && !summary)}>${t('start')}</button>
    </form>
    ${progress
      ? html`<div class="progress">
          <progress aria-label=${t('progress')} max=${progress.total} value=${progress.done}></progress>
          <span>${t('progressText', { done: progress.done, n: progress.total })}</span>
        </div>`
      : null}
    <${ErrorMessage} error=${error} />
    <p role="status">${summary}</p>
    ${failed.length
      ? html`<h3>${t('failedTitle')}</h3>
          <ul class="plain failed-lines">
            ${failed.map((f) => html`<li><strong>${t('line', { line: f.line })}</strong>${f.sku ? ` (${f.sku})` : ''}: ${f.message}</li>`)}
          </ul>`
      : null}
  </section>`;
}
