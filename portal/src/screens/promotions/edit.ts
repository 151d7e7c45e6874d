import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, useId } from '../../ui.js';
import { TryOnCart } from './try.js';

export interface Configuration {
  id: number;
  active: boolean;
  rounding: unknown;
  ranks: unknown[];
  groups: Array<{ id: string; rules?: unknown[] }>;
}

const words = {
  de: {
    title: 'Konfiguration {id}',
    active: 'Diese Konfiguration ist aktiv.',
    inactive: 'Diese Konfiguration ist nicht aktiv.',
    json: 'Konfiguration (JSON)',
    save: 'Speichern',
    saved: 'Gespeichert.',
    activate: 'Aktivieren',
    activated: 'Aktiviert: Neue Warenkörbe werden mit dieser Konfiguration berechnet.',
    invalid: 'Die Konfiguration ist nicht gültig:',
    syntax: 'Kein gültiges JSON (Zeile {line}, Spalte {column}): {message}',
    at: 'bei {path}',
    show: 'Stelle im Text zeigen',
  },
  en: {
    title: 'Configuration {id}',
    active: 'This configuration is active.',
    inactive: 'This configuration is not active.',
    json: 'Configuration (JSON)',
    save: 'Save',
    saved: 'Saved.',
    activate: 'Activate',
    activated: 'Activated: new carts are priced with this configuration.',
    invalid: 'The configuration is not valid:',
    syntax: 'Not valid JSON (line {line}, column {column}): {message}',
    at: 'at {path}',
    show: 'Show the place in the text',
  },
};

interface Problem {
  path: string;
  message: string;
}

/** The API's paths (`groups.0.rules.1.rankID`, or `groups[0].rules[1].rankID` in messages) in one form. */
function problemsOf(err: ApiError): Problem[] {
  if (err.details.length) return err.details.map((d) => ({ path: (d.path ?? '').replace(/\.(\d+)/g, '[$1]'), message: d.message ?? '' }));
  const match = /^([\w[\].]+): (.*)$/s.exec(err.message);
  return [match ? { path: match[1]!, message: match[2]! } : { path: '', message: err.message }];
}

/** Where a path's last key is written in the JSON text, found by walking the parsed value's key order. */
function offsetOf(text: string, path: string): number {
  const keys = path.split(/\.|\[|\]/).filter(Boolean);
  let from = 0;
  for (const key of keys) {
    if (/^\d+$/.test(key)) continue;
    const at = text.indexOf(`"${key}"`, from);
    if (at < 0) return from;
    from = at;
  }
  return from;
}

export function EditConfiguration({ api, id, canWrite }: { api: ProjectApi; id: number; canWrite: boolean }) {
  const t = useWords(words);
  const textId = useId('json');
  const area = useRef<HTMLTextAreaElement>(null);
  const [config, setConfig] = useState<Configuration | null>(null);
  const [text, setText] = useState('');
  const [problems, setProblems] = useState<Problem[]>([]);
  const [status, setStatus] = useState('');
  const [error, setError] = useState<unknown>();
  const path = `/promotions/configurations/${id}`;

  useEffect(() => {
    api.get<Configuration>(path).then((c) => {
      setConfig(c);
      setText(JSON.stringify({ rounding: c.rounding, ranks: c.ranks, groups: c.groups }, null, 2));
    }, setError);
  }, [id]);
  if (!config) return html`<${ErrorMessage} error=${error} />`;

  const point = (problem: Problem) => {
    const at = offsetOf(text, problem.path);
    area.current?.focus();
    area.current?.setSelectionRange(at, at + (problem.path.split(/\.|\[|\]/).filter(Boolean).pop()?.length ?? 0) + 2);
  };

  const save = async (event: Event) => {
    event.preventDefault();
    setStatus('');
    setError(undefined);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      const message = (err as Error).message;
      const position = Number(/position (\d+)/.exec(message)?.[1] ?? 0);
      const before = text.slice(0, position).split('\n');
      setProblems([{ path: '', message: t('syntax', { line: before.length, column: (before.at(-1)?.length ?? 0) + 1, message }) }]);
      return;
    }
    try {
      setConfig(await api.send<Configuration>('PUT', path, body));
      setProblems([]);
      setStatus(t('saved'));
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) setProblems(problemsOf(err));
      else setError(err);
    }
  };
  const activate = async () => {
    try {
      setConfig(await api.send<Configuration>('POST', `${path}/activate`));
      setStatus(t('activated'));
    } catch (err) {
      setError(err);
    }
  };

  return html`<div>
    <section class="panel" aria-labelledby="configuration-title">
      <h2 id="configuration-title">${t('title', { id })}</h2>
      <p>${config.active ? t('active') : t('inactive')}</p>
      <form onSubmit=${save}>
        <${Field} id=${textId} label=${t('json')}>
          <textarea id=${textId} ref=${area} rows="18" spellcheck="false" readonly=${!canWrite} value=${text} onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
            aria-invalid=${problems.length ? 'true' : undefined} aria-describedby=${problems.length ? `${textId}-problems` : undefined}></textarea>
        <//>
        ${problems.length
          ? html`<div class="error" role="alert" id=${`${textId}-problems`}>
              <p>${t('invalid')}</p>
              <ul>${problems.map((p) => html`<li>${p.path ? html`<button type="button" class="link" title=${t('show')} onClick=${() => point(p)}>${t('at', { path: p.path })}</button>: ` : null}${p.message}</li>`)}</ul>
            </div>`
          : null}
        <${ErrorMessage} error=${error} />
        <p role="status">${status}</p>
        ${canWrite
          ? html`<div class="actions">
              <button type="submit">${t('save')}</button>
              <button type="button" class="secondary" disabled=${config.active} onClick=${activate}>${t('activate')}</button>
            </div>`
          : null}
      </form>
    </section>
    <${TryOnCart} api=${api} id=${id} />
  </div>`;
}
