import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage } from '../../ui.js';
import { useFormatName, type ClosingRef } from './names.js';

interface ReportJob {
  id: string;
  state: 'pending' | 'done' | 'failed';
  shopID: string;
  sequenceNumber: number | null;
  reason?: string;
}

const words = {
  de: {
    title: 'Abschluss jetzt erstellen',
    pickShop: 'Wählen Sie oben einen Shop.',
    formats: 'Dateien',
    skipped: 'Ohne Kassenzählung (Selbstbedienung)',
    start: 'Abschluss starten',
    running: 'Der Abschluss läuft …',
    done: 'Fertig: Abschluss {n}.',
    failed: 'Fehlgeschlagen: {reason}',
    open: 'Abschluss {n} öffnen',
  },
  en: {
    title: 'Close now',
    pickShop: 'Choose a shop above.',
    formats: 'Files',
    skipped: 'Without a cash count (self-checkout)',
    start: 'Start closing',
    running: 'The closing is running …',
    done: 'Done: closing {n}.',
    failed: 'Failed: {reason}',
    open: 'Open closing {n}',
  },
};

const Formats = ['dsfinvk_2023_03', 'aggregated_receipts'] as const;

/** Starts a report job for the shop and watches it (every second) until it is done or failed. */
export function StartReport({ api, shop, onDone, onOpen }: { api: ProjectApi; shop: string; onDone(): void; onOpen(ref: ClosingRef): void }) {
  const t = useWords(words);
  const formatName = useFormatName();
  const [formats, setFormats] = useState<string[]>([...Formats]);
  const [skipped, setSkipped] = useState(true);
  const [job, setJob] = useState<ReportJob | null>(null);
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    if (!job || job.state !== 'pending') return;
    const timer = setTimeout(async () => {
      try {
        const next = await api.get<ReportJob>(`/closings/jobs/${job.id}`);
        setJob(next);
        if (next.state !== 'pending') onDone();
      } catch (err) {
        setError(err);
      }
    }, 1000);
    return () => clearTimeout(timer);
  }, [job]);

  const start = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      setJob(await api.send<ReportJob>('POST', '/closings/jobs', { shopID: shop, deviceID: 'portal', skippedCashCount: skipped, formats }));
    } catch (err) {
      setError(err);
    }
  };
  const toggle = (format: string) => setFormats(formats.includes(format) ? formats.filter((f) => f !== format) : [...formats, format]);

  return html`<section class="panel" aria-labelledby="report-title">
    <h2 id="report-title">${t('title')}</h2>
    ${shop
      ? html`<form onSubmit=${start}>
          <fieldset>
            <legend>${t('formats')}</legend>
            ${Formats.map((f) => html`<label class="check"><input type="checkbox" checked=${formats.includes(f)} onChange=${() => toggle(f)} /> ${formatName(f)}</label>`)}
          </fieldset>
          <label class="check"><input type="checkbox" checked=${skipped} onChange=${() => setSkipped(!skipped)} /> ${t('skipped')}</label>
          <div class="actions"><button type="submit" disabled=${job?.state === 'pending'}>${t('start')}</button></div>
        </form>`
      : html`<p class="muted">${t('pickShop')}</p>`}
    <${ErrorMessage} error=${error} />
    <div role="status">
      ${job?.state === 'pending' ? html`<p>${t('running')}</p><progress aria-label=${t('running')}></progress>` : null}
      ${job?.state === 'done' ? html`<p class="ok">${t('done', { n: job.sequenceNumber ?? '' })} <button type="button" class="link" onClick=${() => onOpen({ shopID: job.shopID, sequenceNumber: job.sequenceNumber! })}>${t('open', { n: job.sequenceNumber ?? '' })}</button></p>` : null}
      ${job?.state === 'failed' ? html`<p class="error-text">${t('failed', { reason: job.reason ?? '' })}</p>` : null}
    </div>
  </section>`;
}
