import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, type ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, errorsByField, invalid, useId } from '../../ui.js';
import { EventDomains, useIntegrationNames, type CreatedIntegration } from './names.js';

const words = {
  de: {
    kind: 'Art der Integration',
    webhook: 'Webhook: die Plattform sendet jedes Ereignis signiert per HTTP-POST an eine Adresse',
    nats: 'NATS-Zugang: ein System liest die Ereignisse selbst, mit einer Zugangsdatei (.creds)',
    name: 'Name',
    url: 'Adresse (URL)',
    urlHint: 'https, öffentlich erreichbar, z. B. https://erp.example.com/hooks/kasse',
    events: 'Ereignisse',
    all: 'Alle Ereignisse',
    allHint: 'Jedes Ereignis des Projekts, auch Arten, die später hinzukommen.',
    some: 'Nur Ereignisse dieser Bereiche:',
    pickOne: 'Wählen Sie mindestens einen Bereich.',
    createWebhook: 'Webhook anlegen',
    filter: 'Filter',
    filterHint: 'Unterhalb von events.{project}. – „>“: alle Ereignisse des Projekts; „pos.>“: alle der Kasse; „order.*.final“: jede abgeschlossene Bestellung.',
    createNats: 'NATS-Zugang anlegen',
    tooMany: 'Ein Projekt hat höchstens 20 Webhooks. Löschen Sie zuerst einen, den niemand mehr braucht.',
    noNats: 'Diese Installation stellt keine NATS-Zugänge aus (der Betreiber hat NATS ohne Zugangsdaten eingerichtet).',
  },
  en: {
    kind: 'Kind of integration',
    webhook: 'Webhook: the platform POSTs each event, signed, to an address',
    nats: 'NATS access: a system reads the events itself, with a credentials file (.creds)',
    name: 'Name',
    url: 'Address (URL)',
    urlHint: 'https, reachable from the internet, such as https://erp.example.com/hooks/till',
    events: 'Events',
    all: 'All events',
    allHint: "Every event of the project, also kinds added later.",
    some: 'Only events of these areas:',
    pickOne: 'Choose at least one area.',
    createWebhook: 'Create webhook',
    filter: 'Filter',
    filterHint: 'Below events.{project}. – ">": all of the project\'s events; "pos.>": all of the till\'s; "order.*.final": every completed order.',
    createNats: 'Create NATS access',
    tooMany: 'A project has at most 20 webhooks. Delete one that nobody needs first.',
    noNats: 'This installation issues no NATS access (its operator runs NATS without credentials).',
  },
};

type Kind = 'webhook' | 'nats';

/** A field's attributes when a hint (`<id>-hint`) stands below it: the reader hears the hint, and the error when there is one. */
function withHint(id: string, error: string | undefined): Record<string, string | boolean> {
  return { ...invalid(id, error), 'aria-describedby': error ? `${id}-error ${id}-hint` : `${id}-hint` };
}

/** A new integration: the kind chosen first, then its form. `onCreated` gets the answer with its one-time secret. */
export function CreateIntegration({ api, onCreated }: { api: ProjectApi; onCreated(created: CreatedIntegration): void }) {
  const t = useWords(words);
  const [kind, setKind] = useState<Kind>('webhook');
  return html`<div>
    <fieldset>
      <legend>${t('kind')}</legend>
      ${(['webhook', 'nats'] as const).map(
        (k) => html`<div><label class="check"><input type="radio" name="integration-kind" value=${k} checked=${kind === k} onChange=${() => setKind(k)} /> ${t(k)}</label></div>`,
      )}
    </fieldset>
    ${kind === 'webhook' ? html`<${CreateWebhook} api=${api} onCreated=${onCreated} />` : html`<${CreateNatsAccess} api=${api} onCreated=${onCreated} />`}
  </div>`;
}

/**
 * The form-level words for the API's refusals that name no field of the form (`kind`: too many
 * webhooks, no NATS credentials here); undefined for others.
 */
function useRefusal(): (err: unknown) => string | undefined {
  const t = useWords(words);
  return (err) => {
    if (!(err instanceof ApiError)) return undefined;
    const codes = err.details.filter((d) => d.path === 'kind').map((d) => d.code);
    return codes.includes('too_many') ? t('tooMany') : codes.includes('unavailable') ? t('noNats') : undefined;
  };
}

/** Posts a new integration; field errors go to `setErrors`, the rest is the form's error. */
async function create(api: ProjectApi, body: object, fields: readonly string[], setErrors: (e: Record<string, string>) => void, setError: (e: unknown) => void, refusal: (err: unknown) => string | undefined): Promise<CreatedIntegration | undefined> {
  setErrors({});
  setError(undefined);
  try {
    return await api.send<CreatedIntegration>('POST', '/integrations', body);
  } catch (err) {
    const byField = errorsByField(err, ([first]) => (first && fields.includes(first) ? first : undefined));
    if (byField && Object.keys(byField).length) setErrors(byField);
    else setError(refusal(err) ? new Error(refusal(err)) : err);
    return undefined;
  }
}

function CreateWebhook({ api, onCreated }: { api: ProjectApi; onCreated(created: CreatedIntegration): void }) {
  const t = useWords(words);
  const names = useIntegrationNames();
  const refusal = useRefusal();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [all, setAll] = useState(true);
  const [domains, setDomains] = useState<string[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const ids = { name: useId('webhook-name'), url: useId('webhook-url'), events: useId('webhook-events') };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!all && !domains.length) return setErrors({ events: t('pickOne') });
    const events = all ? undefined : EventDomains.filter((d) => domains.includes(d)).map((d) => `${d}.*`);
    const created = await create(api, { kind: 'webhook', name, url: url.trim(), events }, ['name', 'url', 'events'], setErrors, setError, refusal);
    if (!created) return;
    setName('');
    setUrl('');
    setAll(true);
    setDomains([]);
    onCreated(created);
  };
  const toggle = (domain: string) => setDomains(domains.includes(domain) ? domains.filter((d) => d !== domain) : [...domains, domain]);

  return html`<form onSubmit=${submit}>
    <div class="row">
      <${Field} id=${ids.name} label=${t('name')} error=${errors.name}>
        <input id=${ids.name} required maxlength="100" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} ...${invalid(ids.name, errors.name)} />
      <//>
      <${Field} id=${ids.url} label=${t('url')} error=${errors.url}>
        <input id=${ids.url} class="wide" required inputmode="url" autocomplete="off" spellcheck=${false} value=${url} placeholder="https://"
          onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)} ...${withHint(ids.url, errors.url)} />
        <span class="hint" id=${`${ids.url}-hint`}>${t('urlHint')}</span>
      <//>
    </div>
    <fieldset aria-describedby=${errors.events ? `${ids.events}-error` : undefined}>
      <legend>${t('events')}</legend>
      <div><label class="check"><input type="radio" name=${ids.events} checked=${all} onChange=${() => setAll(true)} /> ${t('all')}</label> <span class="hint">${t('allHint')}</span></div>
      <div><label class="check"><input type="radio" name=${ids.events} checked=${!all} onChange=${() => setAll(false)} /> ${t('some')}</label></div>
      ${all
        ? null
        : html`<ul class="plain domains">
            ${EventDomains.map(
              (d) => html`<li>
                <label class="check"><input type="checkbox" checked=${domains.includes(d)} onChange=${() => toggle(d)} aria-describedby=${`${ids.events}-${d}`} /> ${names.domain(d)}</label>
                <span class="hint" id=${`${ids.events}-${d}`}>${names.domainHint(d)} <span class="mono">(${d}.*)</span></span>
              </li>`,
            )}
          </ul>`}
      ${errors.events ? html`<p class="field-error" id=${`${ids.events}-error`}>${errors.events}</p>` : null}
    </fieldset>
    <${ErrorMessage} error=${error} />
    <button type="submit">${t('createWebhook')}</button>
  </form>`;
}

function CreateNatsAccess({ api, onCreated }: { api: ProjectApi; onCreated(created: CreatedIntegration): void }) {
  const t = useWords(words);
  const refusal = useRefusal();
  const [name, setName] = useState('');
  const [filter, setFilter] = useState('>');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const ids = { name: useId('nats-name'), filter: useId('nats-filter') };

  const submit = async (event: Event) => {
    event.preventDefault();
    const created = await create(api, { kind: 'nats', name, filter: filter.trim() }, ['name', 'filter'], setErrors, setError, refusal);
    if (!created) return;
    setName('');
    setFilter('>');
    onCreated(created);
  };

  return html`<form onSubmit=${submit}>
    <div class="row">
      <${Field} id=${ids.name} label=${t('name')} error=${errors.name}>
        <input id=${ids.name} required maxlength="100" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} ...${invalid(ids.name, errors.name)} />
      <//>
      <${Field} id=${ids.filter} label=${t('filter')} error=${errors.filter}>
        <input id=${ids.filter} class="mono" required autocomplete="off" spellcheck=${false} value=${filter} onInput=${(e: Event) => setFilter((e.target as HTMLInputElement).value)}
          ...${withHint(ids.filter, errors.filter)} />
        <span class="hint" id=${`${ids.filter}-hint`}>${t('filterHint', { project: api.project })}</span>
      <//>
    </div>
    <${ErrorMessage} error=${error} />
    <button type="submit">${t('createNats')}</button>
  </form>`;
}
