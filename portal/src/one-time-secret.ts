import type { ComponentChildren } from 'preact';
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useWords } from './i18n.js';
import { saveBlob, useId } from './ui.js';

const words = {
  de: {
    warningLead: 'Wird nur jetzt angezeigt.',
    copy: 'Kopieren',
    download: 'Herunterladen ({file})',
    copied: 'In die Zwischenablage kopiert.',
    selectToCopy: 'Der Text ist markiert: kopieren Sie ihn mit Strg+C (Mac: ⌘+C).',
    downloaded: 'Als {file} gespeichert.',
    hide: 'Gesichert, ausblenden',
  },
  en: {
    warningLead: 'Shown only now.',
    copy: 'Copy',
    download: 'Download ({file})',
    copied: 'Copied to the clipboard.',
    selectToCopy: 'The text is selected: copy it with Ctrl+C (Mac: ⌘+C).',
    downloaded: 'Saved as {file}.',
    hide: 'Saved it, hide',
  },
};

/** A file name from what a person named a thing (no path separators or control characters). */
export function fileNameOf(name: string, suffix: string, fallback: string): string {
  // eslint-disable-next-line no-control-regex
  const safe = name.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, '-').trim().replace(/^\.+/, '');
  return `${safe || fallback}${suffix}`;
}

export interface OneTimeSecretProps {
  /** What is shown; nothing is rendered without it. */
  value: string;
  title: string;
  /** The label of the field that holds it. */
  field: string;
  /** What to do with it now, after the "shown only now" lead. */
  warning: string;
  file: string;
  /** A file is downloaded first (a .creds file), a secret copied first. */
  downloadFirst?: boolean;
  rows?: number;
  /** What the reader needs beside it (where to use it). */
  children?: ComponentChildren;
  onHide(): void;
}

/**
 * A secret the API answers once (a NATS credential, a signing secret, a client's key), shown the
 * one time with a plain warning, a copy and a download button. The reader is taken to it when it
 * appears. Nothing keeps it: it is gone once the screen is left (or `onHide`).
 */
export function OneTimeSecret({ value, title, field: fieldLabel, warning, file, downloadFirst = false, rows = 2, children, onHide }: OneTimeSecretProps) {
  const t = useWords(words);
  const heading = useRef<HTMLHeadingElement>(null);
  const field = useRef<HTMLTextAreaElement>(null);
  const [status, setStatus] = useState('');
  const ids = { title: useId('secret-title'), field: useId('secret-field') };
  useEffect(() => {
    heading.current?.focus();
    setStatus('');
  }, [value]);

  const copy = async () => {
    try {
      if (!navigator.clipboard?.writeText) throw new Error('no clipboard');
      await navigator.clipboard.writeText(value);
      setStatus(t('copied'));
    } catch {
      // Without the clipboard (an http page not on this machine, a refused permission): the person copies.
      field.current?.focus();
      field.current?.select();
      setStatus(t('selectToCopy'));
    }
  };
  const download = () => {
    saveBlob(new Blob([value], { type: 'text/plain' }), file);
    setStatus(t('downloaded', { file }));
  };

  if (!value) return null;
  const copyButton = (primary: boolean) => html`<button type="button" class=${primary ? undefined : 'secondary'} onClick=${copy}>${t('copy')}</button>`;
  const downloadButton = (primary: boolean) => html`<button type="button" class=${primary ? undefined : 'secondary'} onClick=${download}>${t('download', { file })}</button>`;
  return html`<section class="one-time-secret" aria-labelledby=${ids.title}>
    <h3 id=${ids.title} ref=${heading} tabindex="-1">${title}</h3>
    <p class="warning"><strong>${t('warningLead')}</strong> ${warning}</p>
    ${children}
    <label for=${ids.field}>${fieldLabel}</label>
    <textarea id=${ids.field} ref=${field} class="secret" readonly rows=${rows} spellcheck=${false} value=${value}></textarea>
    <div class="actions">
      ${downloadFirst ? html`${downloadButton(true)}${copyButton(false)}` : html`${copyButton(true)}${downloadButton(false)}`}
      <button type="button" class="secondary" onClick=${onHide}>${t('hide')}</button>
    </div>
    <p role="status" class="one-time">${status}</p>
  </section>`;
}
