import type { ComponentChildren } from 'preact';
import { html } from 'htm/preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { useWords } from './i18n.js';

/** Small pieces the screens share: loading what a screen shows, showing an error, a labelled field. */

const words = {
  de: { loading: 'Lädt …', failed: 'Fehler', forbidden: 'Dafür fehlt Ihrer Rolle die Berechtigung.', unavailable: 'Der Dienst ist gerade nicht erreichbar. Bitte erneut versuchen.', previous: 'Vorherige Seite', next: 'Nächste Seite' },
  en: { loading: 'Loading …', failed: 'Error', forbidden: 'Your role lacks the permission for this.', unavailable: 'The service cannot be reached right now. Please try again.', previous: 'Previous page', next: 'Next page' },
};

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

/** Runs `load` when `deps` change (and on reload()); keeps the last data while loading again. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(controller.signal).then(
      (data) => !controller.signal.aborted && setState({ data, error: undefined, loading: false }),
      (error: unknown) => !controller.signal.aborted && setState((s) => ({ ...s, error, loading: false })),
    );
    return () => controller.abort();
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

/**
 * What a button does (rotate, delete, ...): `run(work)` makes its click handler; a failure is kept
 * in `error` for the ErrorMessage beside it, and `then` runs afterwards either way (a list reloads).
 */
export function useAction(then?: () => void): { error: unknown; run: (work: () => Promise<unknown>) => () => Promise<void> } {
  const [error, setError] = useState<unknown>();
  const run = (work: () => Promise<unknown>) => async () => {
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(err);
    }
    then?.();
  };
  return { error, run };
}

export function ErrorMessage({ error }: { error: unknown }) {
  const t = useWords(words);
  if (!error) return null;
  let text: string;
  if (error instanceof ApiError) text = error.status === 403 && error.type === 'forbidden' ? `${t('forbidden')} (${error.message})` : error.status >= 500 ? t('unavailable') : error.message;
  else text = error instanceof Error ? error.message : String(error);
  return html`<p class="error" role="alert"><strong>${t('failed')}:</strong> ${text}</p>`;
}

export function Loading({ when }: { when: boolean }) {
  const t = useWords(words);
  return when ? html`<p class="muted" role="status">${t('loading')}</p>` : null;
}

let fieldCount = 0;

/** A stable id for a label's `for` and the messages a field points at. */
export function useId(prefix: string): string {
  const id = useRef('');
  if (!id.current) id.current = `${prefix}-${++fieldCount}`;
  return id.current;
}

/**
 * The API's validation details of an error by the form field each names (`fieldOf` maps a detail's
 * path, split at its dots, to a field; undefined: none of this form's), the first message of each;
 * undefined when the error carries no details.
 */
export function errorsByField(err: unknown, fieldOf: (path: string[]) => string | undefined): Record<string, string> | undefined {
  if (!(err instanceof ApiError) || !err.details.length) return undefined;
  const byField: Record<string, string> = {};
  for (const d of err.details) {
    const field = fieldOf((d.path ?? '').split('.'));
    if (field !== undefined) byField[field] ??= d.message ?? '';
  }
  return byField;
}

/** A labelled control with an error shown at it (aria-describedby / aria-invalid point the reader there). */
export function Field({ label, error, children, id }: { label: string; error?: string | undefined; id: string; children: ComponentChildren }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${children}
    ${error ? html`<p class="field-error" id=${`${id}-error`}>${error}</p>` : null}
  </div>`;
}

/** The attributes that tie a control to its Field's error. */
export function invalid(id: string, error: string | undefined): Record<string, string | boolean> {
  return error ? { 'aria-invalid': 'true', 'aria-describedby': `${id}-error` } : {};
}

/** Downloads a blob under a file name, as a link the person clicked would. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Previous and next page of a paged list (shown only when there is more than one page); `label` says where the reader is. */
export function Pager({ page, pages, label, onPage }: { page: number; pages: number; label: string; onPage: (page: number) => void }) {
  const t = useWords(words);
  if (pages <= 1) return null;
  return html`<div class="pager">
    <button type="button" class="secondary" disabled=${page === 0} onClick=${() => onPage(page - 1)}>${t('previous')}</button>
    <span>${label}</span>
    <button type="button" class="secondary" disabled=${page + 1 >= pages} onClick=${() => onPage(page + 1)}>${t('next')}</button>
  </div>`;
}

/**
 * A button whose action cannot be undone: it asks first, in a dialog of the page (`<dialog>`, modal:
 * named by its question, Escape answers no) whose safe answer has the focus. `label` is the button's
 * content (which may add words for a screen reader alone, such as for whom).
 */
export function ConfirmButton({ label, question, text, yes, no, disabled = false, onConfirm }: {
  label: ComponentChildren;
  question: string;
  text: string;
  yes: string;
  no: string;
  disabled?: boolean;
  onConfirm(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [asking, setAsking] = useState(false);
  const title = useId('confirm-title');
  const body = useId('confirm-text');
  useEffect(() => {
    if (asking && !dialog.current?.open) dialog.current?.showModal();
    if (!asking && dialog.current?.open) dialog.current.close();
  }, [asking]);
  return html`<button type="button" class="danger" disabled=${disabled} onClick=${() => setAsking(true)}>${label}</button>
    <dialog ref=${dialog} class="confirm" aria-labelledby=${title} aria-describedby=${body} onClose=${() => setAsking(false)}>
      <h2 id=${title}>${question}</h2>
      <p id=${body}>${text}</p>
      <div class="actions">
        <button type="button" class="danger" onClick=${() => (setAsking(false), onConfirm())}>${yes}</button>
        <button type="button" class="secondary" autofocus onClick=${() => setAsking(false)}>${no}</button>
      </div>
    </dialog>`;
}
