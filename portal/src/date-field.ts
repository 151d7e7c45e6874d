import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useFormat } from './format.js';
import { useWords } from './i18n.js';
import { Field } from './ui.js';

/**
 * A day typed in the chosen language's form (27.11.2026, 27/11/2026, 11/27/2026), the form the
 * tables show. Not `<input type=date>`: that shows the browser's form, whatever language the person
 * chose. The pattern is shown beside the field; what it means goes to `onDay` as `YYYY-MM-DD`, or
 * null while the text is no date (the form then shows `error`, see `useDateError`).
 */
const words = {
  de: { invalid: 'Bitte als {pattern} eingeben, etwa {example}.' },
  en: { invalid: 'Please type it as {pattern}, such as {example}.' },
};

export function DateField({ id, label, day, error, onDay }: { id: string; label: string; day: string | null; error?: string | undefined; onDay(day: string | null): void }) {
  const f = useFormat();
  const [text, setText] = useState(day ? f.day(day) : '');
  // After a switch of the language, the day is shown in the new form.
  const locale = useRef(f.locale);
  useEffect(() => {
    if (locale.current === f.locale) return;
    locale.current = f.locale;
    if (day) setText(f.day(day));
  }, [f.locale]);
  const hint = `${id}-hint`;
  return html`<${Field} id=${id} label=${label} error=${error}>
    <input id=${id} type="text" inputmode="numeric" autocomplete="off" size="10" placeholder=${f.datePattern} value=${text}
      aria-describedby=${error ? `${hint} ${id}-error` : hint} aria-invalid=${error ? 'true' : undefined}
      onInput=${(e: Event) => {
        const value = (e.target as HTMLInputElement).value;
        setText(value);
        onDay(f.parseDay(value) ?? null);
      }} />
    <span class="hint" id=${hint}>${f.datePattern}</span>
  <//>`;
}

/** The message for a date field whose text is no date: the pattern and an example. */
export function useDateError(): string {
  const t = useWords(words);
  const f = useFormat();
  return t('invalid', { pattern: f.datePattern, example: f.day('2026-11-27') });
}
