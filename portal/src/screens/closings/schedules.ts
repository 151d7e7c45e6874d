import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ConfirmButton, ErrorMessage, Field, errorsByField, invalid, useId, useLoad } from '../../ui.js';
import { useFormatName } from './names.js';

interface Schedule {
  id: number;
  shop: string;
  days: string[];
  hour: number;
  minute: number;
  location: string;
  mode: string;
  formats: string[];
}

type Draft = Omit<Schedule, 'id'> & { id?: number };

const Days = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;
const Formats = ['dsfinvk_2023_03', 'aggregated_receipts'] as const;

const words = {
  de: {
    title: 'Abschlusszeitpläne',
    none: 'Kein Zeitplan für diesen Shop.',
    add: 'Zeitplan hinzufügen',
    edit: 'Zeitplan {id} bearbeiten',
    change: 'Bearbeiten',
    remove: 'Löschen',
    removeQuestion: 'Zeitplan {when} löschen?',
    removeText: 'Zu diesen Zeiten wird dann kein Abschluss mehr erstellt.',
    removeYes: 'Ja, Zeitplan löschen',
    removeNo: 'Nicht löschen',
    days: 'Tage',
    hour: 'Stunde',
    minute: 'Minute',
    location: 'Zeitzone',
    mode: 'Bestellungen bis',
    includeUntilExecution: 'zur Ausführung',
    includeUntilScheduled: 'zur geplanten Zeit',
    formats: 'Dateien',
    save: 'Zeitplan speichern',
    cancel: 'Abbrechen',
    saved: 'Gespeichert.',
    at: '{days} um {time} ({zone})',
    Monday: 'Mo', Tuesday: 'Di', Wednesday: 'Mi', Thursday: 'Do', Friday: 'Fr', Saturday: 'Sa', Sunday: 'So',
  },
  en: {
    title: 'Closing schedules',
    none: 'No schedule for this shop.',
    add: 'Add a schedule',
    edit: 'Edit schedule {id}',
    change: 'Edit',
    remove: 'Delete',
    removeQuestion: 'Delete the schedule {when}?',
    removeText: 'No closing is made at these times any more.',
    removeYes: 'Yes, delete schedule',
    removeNo: 'Keep the schedule',
    days: 'Days',
    hour: 'Hour',
    minute: 'Minute',
    location: 'Time zone',
    mode: 'Orders up to',
    includeUntilExecution: 'the execution',
    includeUntilScheduled: 'the scheduled time',
    formats: 'Files',
    save: 'Save schedule',
    cancel: 'Cancel',
    saved: 'Saved.',
    at: '{days} at {time} ({zone})',
    Monday: 'Mon', Tuesday: 'Tue', Wednesday: 'Wed', Thursday: 'Thu', Friday: 'Fri', Saturday: 'Sat', Sunday: 'Sun',
  },
};

/** A shop's closing schedules; a form shows the API's validation errors at their fields. */
export function Schedules({ api, shop, canWrite }: { api: ProjectApi; shop: string; canWrite: boolean }) {
  const t = useWords(words);
  const [editing, setEditing] = useState<Draft | null>(null);
  const [error, setError] = useState<unknown>();
  const list = useLoad((signal) => api.get<{ schedules: Schedule[] }>('/closings/schedules', { signal }), [api]);
  const mine = (list.data?.schedules ?? []).filter((s) => s.shop === shop);
  const blank: Draft = { shop, days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'], hour: 22, minute: 0, location: 'Europe/Berlin', mode: 'includeUntilExecution', formats: [...Formats] };
  const remove = (id: number) => async () => {
    try {
      await api.send('DELETE', `/closings/schedules/id/${id}`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const pad = (n: number) => String(n).padStart(2, '0');

  return html`<section class="panel" aria-labelledby="schedules-title">
    <h2 id="schedules-title">${t('title')}</h2>
    <${ErrorMessage} error=${list.error ?? error} />
    ${mine.length
      ? html`<ul class="plain">
          ${mine.map((s) => {
            const when = t('at', { days: s.days.map((d) => t(d as (typeof Days)[number])).join(', '), time: `${pad(s.hour)}:${pad(s.minute)}`, zone: s.location });
            const whose = html`<span class="sr-only"> (${when})</span>`;
            return html`<li class="with-actions">
              <span>${when}</span>
              ${canWrite
                ? html`<span class="actions">
                    <button type="button" class="secondary" onClick=${() => setEditing({ ...s })}>${t('change')}${whose}</button>
                    <${ConfirmButton} label=${html`${t('remove')}${whose}`} question=${t('removeQuestion', { when })} text=${t('removeText')} yes=${t('removeYes')} no=${t('removeNo')} onConfirm=${remove(s.id)} />
                  </span>`
                : null}
            </li>`;
          })}
        </ul>`
      : html`<p>${t('none')}</p>`}
    ${canWrite && !editing ? html`<button type="button" class="secondary" onClick=${() => setEditing(blank)}>${t('add')}</button>` : null}
    ${editing ? html`<${ScheduleForm} api=${api} draft=${editing} onSaved=${() => (setEditing(null), list.reload())} onCancel=${() => setEditing(null)} />` : null}
  </section>`;
}

function ScheduleForm({ api, draft: initial, onSaved, onCancel }: { api: ProjectApi; draft: Draft; onSaved(): void; onCancel(): void }) {
  const t = useWords(words);
  const formatName = useFormatName();
  const [draft, setDraft] = useState(initial);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const ids = { days: useId('days'), hour: useId('hour'), minute: useId('minute'), location: useId('zone'), mode: useId('mode') };

  const save = async (event: Event) => {
    event.preventDefault();
    setFieldErrors({});
    setError(undefined);
    const { id, ...body } = draft;
    try {
      await api.send(id ? 'PUT' : 'POST', id ? `/closings/schedules/id/${id}` : '/closings/schedules', body);
      onSaved();
    } catch (err) {
      const byField = errorsByField(err, ([first]) => first ?? '');
      if (byField) setFieldErrors(byField);
      else setError(err);
    }
  };
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const toggle = <T,>(list: T[], value: T) => (list.includes(value) ? list.filter((v) => v !== value) : [...list, value]);
  const number = (e: Event) => (e.target as HTMLInputElement).valueAsNumber;

  return html`<form class="schedule-form" onSubmit=${save} aria-label=${draft.id ? t('edit', { id: draft.id }) : t('add')} novalidate>
    <fieldset aria-describedby=${fieldErrors.days ? `${ids.days}-error` : undefined}>
      <legend>${t('days')}</legend>
      ${Days.map((d) => html`<label class="check"><input type="checkbox" checked=${draft.days.includes(d)} onChange=${() => set({ days: toggle(draft.days, d) })} /> ${t(d)}</label>`)}
      ${fieldErrors.days ? html`<p class="field-error" id=${`${ids.days}-error`}>${fieldErrors.days}</p>` : null}
    </fieldset>
    <div class="row">
      <${Field} id=${ids.hour} label=${t('hour')} error=${fieldErrors.hour}>
        <input id=${ids.hour} type="number" min="0" max="24" value=${draft.hour} onInput=${(e: Event) => set({ hour: number(e) })} ...${invalid(ids.hour, fieldErrors.hour)} />
      <//>
      <${Field} id=${ids.minute} label=${t('minute')} error=${fieldErrors.minute}>
        <input id=${ids.minute} type="number" min="0" max="59" value=${draft.minute} onInput=${(e: Event) => set({ minute: number(e) })} ...${invalid(ids.minute, fieldErrors.minute)} />
      <//>
      <${Field} id=${ids.location} label=${t('location')} error=${fieldErrors.location}>
        <input id=${ids.location} value=${draft.location} onInput=${(e: Event) => set({ location: (e.target as HTMLInputElement).value })} ...${invalid(ids.location, fieldErrors.location)} />
      <//>
      <${Field} id=${ids.mode} label=${t('mode')} error=${fieldErrors.mode}>
        <select id=${ids.mode} value=${draft.mode} onChange=${(e: Event) => set({ mode: (e.target as HTMLSelectElement).value })}>
          <option value="includeUntilExecution">${t('includeUntilExecution')}</option>
          <option value="includeUntilScheduled">${t('includeUntilScheduled')}</option>
        </select>
      <//>
    </div>
    <fieldset>
      <legend>${t('formats')}</legend>
      ${Formats.map((f) => html`<label class="check"><input type="checkbox" checked=${draft.formats.includes(f)} onChange=${() => set({ formats: toggle(draft.formats, f) })} /> ${formatName(f)}</label>`)}
    </fieldset>
    <${ErrorMessage} error=${error} />
    <div class="actions">
      <button type="submit">${t('save')}</button>
      <button type="button" class="secondary" onClick=${onCancel}>${t('cancel')}</button>
    </div>
  </form>`;
}
