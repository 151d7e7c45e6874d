import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import type { ProjectApi } from '../api.js';
import { useFormat } from '../format.js';
import { useWords } from '../i18n.js';
import { ConfirmButton, ErrorMessage, Field, errorsByField, invalid, useId, useLoad } from '../ui.js';
import type { ScreenProps } from './index.js';

interface ProjectSettings {
  currency: string;
  taxRates: Record<string, string>;
  paymentMethods: string[];
  locale: string;
  companyName: string;
  taxNumber: string;
  vatID: string;
  companyAdress: { street: string; zip: string; city: string; country: string };
  fiscalization?: { provider: Provider; tssId?: string; baseUrl?: string; reason?: string; apiKeySet: boolean; apiSecretSet: boolean; adminPinSet: boolean };
}

type Provider = 'local' | 'fiskaly' | 'none';
const Providers: readonly Provider[] = ['local', 'fiskaly', 'none'];

const words = {
  de: {
    company: 'Unternehmen', companyName: 'Firmenname', taxNumber: 'Steuernummer', vatID: 'USt-IdNr.', street: 'Straße', zip: 'PLZ', city: 'Ort', country: 'Land',
    sales: 'Verkauf', currency: 'Währung', taxRates: 'Steuersätze (je Zeile: Kategorie = Prozent)', paymentMethods: 'Zahlarten (durch Komma getrennt)',
    save: 'Einstellungen speichern', saved: 'Gespeichert.',
    fiscal: 'Fiskalisierung', provider: 'TSE-Anbieter', serial: 'TSE-Seriennummer', certified: 'Zertifiziert', yes: 'ja', no: 'nein (nur für Entwicklung)', notYet: 'Noch nicht signiert.', registers: 'Kassen (je Shop)',
    choice: 'Signiert wird mit', local: 'Lokaler Signierer (nicht zertifiziert, nur Entwicklung und Tests)', fiskaly: 'fiskaly SIGN DE (Cloud-TSE)', none: 'Keine TSE',
    tssId: 'TSS-ID', apiKey: 'API-Key', apiSecret: 'API-Secret', adminPin: 'Admin-PIN', baseUrl: 'API-Adresse (leer: fiskaly)', reason: 'Grund (steht im DSFinV-K-Export)',
    keep: 'gespeichert', choose: 'TSE wählen', secretsHint: 'Key, Secret und PIN werden nie angezeigt; ein leeres Feld behält den gespeicherten Wert.', choiceHint: 'Gilt für neue Vorgänge; begonnene werden mit ihrer TSE abgeschlossen.', choiceSave: 'TSE-Auswahl speichern', choiceSaved: 'TSE-Auswahl gespeichert.',
    pos: 'PoS-Zugänge', posName: 'Name des Zugangs', posCreate: 'Zugang anlegen', posPassword: 'Benutzer {user}, Passwort {password} (wird nur jetzt angezeigt)', posRemove: 'Zugang löschen', posRemoveQuestion: 'Zugang {name} löschen?', posRemoveText: 'Kassen, die sich mit diesem Zugang anmelden, werden abgewiesen. Das lässt sich nicht rückgängig machen.', posRemoveYes: 'Ja, Zugang löschen', posRemoveNo: 'Nicht löschen', posNone: 'Kein PoS-Zugang.',
  },
  en: {
    company: 'Company', companyName: 'Company name', taxNumber: 'Tax number', vatID: 'VAT id', street: 'Street', zip: 'Postcode', city: 'City', country: 'Country',
    sales: 'Sales', currency: 'Currency', taxRates: 'Tax rates (one per line: category = percent)', paymentMethods: 'Payment methods (comma-separated)',
    save: 'Save settings', saved: 'Saved.',
    fiscal: 'Fiscalization', provider: 'TSE provider', serial: 'TSE serial number', certified: 'Certified', yes: 'yes', no: 'no (development only)', notYet: 'Nothing signed yet.', registers: 'Tills (one per shop)',
    choice: 'Sales are signed by', local: 'Local signer (not certified, development and tests only)', fiskaly: 'fiskaly SIGN DE (cloud TSE)', none: 'No TSE',
    tssId: 'TSS id', apiKey: 'API key', apiSecret: 'API secret', adminPin: 'Admin PIN', baseUrl: 'API address (empty: fiskaly)', reason: 'Reason (written into the DSFinV-K export)',
    keep: 'stored', choose: 'Choose the TSE', secretsHint: 'Key, secret and PIN are never shown; a field left empty keeps the stored value.', choiceHint: 'Applies to new processes; those under way finish with their TSE.', choiceSave: 'Save TSE choice', choiceSaved: 'TSE choice saved.',
    pos: 'PoS credentials', posName: 'Name of the credential', posCreate: 'Create credential', posPassword: 'User {user}, password {password} (shown only now)', posRemove: 'Delete credential', posRemoveQuestion: 'Delete the credential {name}?', posRemoveText: 'Tills that sign in with it are refused. This cannot be undone.', posRemoveYes: 'Yes, delete credential', posRemoveNo: 'Keep the credential', posNone: 'No PoS credential.',
  },
};

interface Draft {
  companyName: string; taxNumber: string; vatID: string; street: string; zip: string; city: string; country: string;
  currency: string; taxRates: string; paymentMethods: string;
}

const draftOf = (s: ProjectSettings): Draft => ({
  companyName: s.companyName, taxNumber: s.taxNumber, vatID: s.vatID, ...s.companyAdress,
  currency: s.currency,
  taxRates: Object.entries(s.taxRates).map(([k, v]) => `${k} = ${v}`).join('\n'),
  paymentMethods: s.paymentMethods.join(', '),
});

/** Company data, tax rates and payment methods; the TSE and its choice; PoS credentials. */
export function Settings({ api }: ScreenProps) {
  const t = useWords(words);
  const [stored, setStored] = useState<ProjectSettings | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [status, setStatus] = useState('');
  const [error, setError] = useState<unknown>();
  const prefix = useId('settings');
  useEffect(() => void api.get<ProjectSettings>('/settings').then((s) => (setStored(s), setDraft(draftOf(s))), setError), [api]);
  if (!stored || !draft) return html`<${ErrorMessage} error=${error} />`;

  const save = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setStatus('');
    const taxRates = Object.fromEntries(draft.taxRates.split('\n').map((l) => l.split('=').map((p) => p.trim())).filter(([k]) => k).map(([k, v]) => [k, v ?? '']));
    // Without `fiscalization`: the stored TSE choice stays (the section below changes it).
    const body = {
      ...writable(stored),
      companyName: draft.companyName, taxNumber: draft.taxNumber, vatID: draft.vatID,
      companyAdress: { street: draft.street, zip: draft.zip, city: draft.city, country: draft.country },
      currency: draft.currency.trim(), taxRates,
      paymentMethods: draft.paymentMethods.split(',').map((m) => m.trim()).filter(Boolean),
    };
    try {
      const saved = await api.send<ProjectSettings>('PUT', '/settings', body);
      setStored(saved);
      setDraft(draftOf(saved));
      setStatus(t('saved'));
    } catch (err) {
      const byField = errorsByField(err, ([first, second]) => (first === 'companyAdress' ? (second ?? first) : (first ?? '')));
      if (byField) setErrors(byField);
      else setError(err);
    }
  };
  const field = (name: keyof Draft, multiline = false) => {
    const id = `${prefix}-${name}`;
    const onInput = (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value });
    return html`<${Field} id=${id} label=${t(name)} error=${errors[name]}>
      ${multiline ? html`<textarea id=${id} rows="3" value=${draft[name]} onInput=${onInput} ...${invalid(id, errors[name])}></textarea>` : html`<input id=${id} value=${draft[name]} onInput=${onInput} ...${invalid(id, errors[name])} />`}
    <//>`;
  };

  return html`<div>
    <form onSubmit=${save}>
      <section class="panel" aria-labelledby=${`${prefix}-company`}>
        <h2 id=${`${prefix}-company`}>${t('company')}</h2>
        <div class="row">${field('companyName')}${field('taxNumber')}${field('vatID')}</div>
        <div class="row">${field('street')}${field('zip')}${field('city')}${field('country')}</div>
      </section>
      <section class="panel" aria-labelledby=${`${prefix}-sales`}>
        <h2 id=${`${prefix}-sales`}>${t('sales')}</h2>
        <div class="row">${field('currency')}${field('paymentMethods')}</div>
        ${field('taxRates', true)}
        <${ErrorMessage} error=${error} />
        <p role="status">${status}</p>
        <button type="submit">${t('save')}</button>
      </section>
    </form>
    <${Fiscalization} api=${api} stored=${stored} onSaved=${(saved: ProjectSettings) => (setStored(saved), setDraft(draftOf(saved)))} />
    <${PosCredentials} api=${api} />
  </div>`;
}

/** The settings as a PUT repeats them: everything stored but the answer's own members. */
function writable(stored: ProjectSettings): Omit<ProjectSettings, 'fiscalization'> {
  const { fiscalization: _view, ...rest } = stored as ProjectSettings & { project?: string };
  delete (rest as { project?: string }).project;
  return rest;
}

interface FiscalDraft {
  provider: Provider;
  tssId: string; apiKey: string; apiSecret: string; adminPin: string; baseUrl: string; reason: string;
}

const fiscalDraftOf = (s: ProjectSettings): FiscalDraft => ({
  provider: s.fiscalization?.provider ?? 'local',
  tssId: s.fiscalization?.tssId ?? '', apiKey: '', apiSecret: '', adminPin: '', baseUrl: s.fiscalization?.baseUrl ?? '', reason: s.fiscalization?.reason ?? '',
});

/**
 * The TSE the project signs with (GET /fiscalization/registers: what to register with the tax
 * office) and its choice: a PUT of the settings with `fiscalization`. Key, secret and PIN are
 * write-only: their fields stay empty and say when one is stored; left empty, a PUT keeps it.
 */
function Fiscalization({ api, stored, onSaved }: { api: ProjectApi; stored: ProjectSettings; onSaved(saved: ProjectSettings): void }) {
  const t = useWords(words);
  const registers = useLoad((signal) => api.get<{ provider: string | null; reason?: string; tse: { serialNumber: string; certified: boolean } | null; cashRegisters: unknown[] }>('/fiscalization/registers', { signal }), [api]);
  const [draft, setDraft] = useState(() => fiscalDraftOf(stored));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [status, setStatus] = useState('');
  const [error, setError] = useState<unknown>();
  const prefix = useId('fiscal');
  const r = registers.data;

  const save = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setStatus('');
    setError(undefined);
    const given = (value: string) => value.trim() || undefined;
    const fiscalization =
      draft.provider === 'fiskaly'
        ? { provider: draft.provider, tssId: given(draft.tssId), apiKey: given(draft.apiKey), apiSecret: given(draft.apiSecret), adminPin: given(draft.adminPin), baseUrl: given(draft.baseUrl) }
        : draft.provider === 'none'
          ? { provider: draft.provider, reason: given(draft.reason) }
          : { provider: draft.provider };
    try {
      const saved = await api.send<ProjectSettings>('PUT', '/settings', { ...writable(stored), fiscalization });
      onSaved(saved);
      setDraft(fiscalDraftOf(saved));
      setStatus(t('choiceSaved'));
      registers.reload();
    } catch (err) {
      const byField = errorsByField(err, ([first, second]) => (first === 'fiscalization' && second ? second : undefined));
      if (byField && Object.keys(byField).length) setErrors(byField);
      else setError(err);
    }
  };
  const field = (name: Exclude<keyof FiscalDraft, 'provider'>, secret = false) => {
    const id = `${prefix}-${name}`;
    const kept = secret && stored.fiscalization?.[`${name}Set` as 'apiKeySet'] === true;
    const onInput = (e: Event) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value });
    return html`<${Field} id=${id} label=${t(name)} error=${errors[name]}>
      <input id=${id} type=${secret ? 'password' : 'text'} autocomplete="off" value=${draft[name]} placeholder=${kept ? t('keep') : ''} onInput=${onInput} ...${invalid(id, errors[name])} />
    <//>`;
  };

  return html`<section class="panel" aria-labelledby="fiscal-title">
    <h2 id="fiscal-title">${t('fiscal')}</h2>
    <${ErrorMessage} error=${registers.error} />
    ${r
      ? html`<dl class="facts">
          <dt>${t('provider')}</dt><dd>${r.provider ? (Providers.includes(r.provider as Provider) ? t(r.provider as Provider) : r.provider) : '–'}${r.reason ? ` (${r.reason})` : ''}</dd>
          ${r.tse
            ? html`<dt>${t('serial')}</dt><dd class="mono">${r.tse.serialNumber}</dd><dt>${t('certified')}</dt><dd>${r.tse.certified ? t('yes') : t('no')}</dd>`
            : html`<dt>TSE</dt><dd>${t('notYet')}</dd>`}
          <dt>${t('registers')}</dt><dd>${r.cashRegisters.length}</dd>
        </dl>`
      : null}
    <h3>${t('choose')}</h3>
    <form onSubmit=${save}>
      <${Field} id=${`${prefix}-provider`} label=${t('choice')}>
        <select id=${`${prefix}-provider`} value=${draft.provider} onChange=${(e: Event) => setDraft({ ...draft, provider: (e.target as HTMLSelectElement).value as Provider })}>
          ${Providers.map((p) => html`<option value=${p}>${t(p)}</option>`)}
        </select>
      <//>
      ${draft.provider === 'fiskaly'
        ? html`<div class="row">${field('tssId')}${field('baseUrl')}</div>
            <div class="row">${field('apiKey', true)}${field('apiSecret', true)}${field('adminPin', true)}</div>
            <p class="muted">${t('secretsHint')}</p>`
        : null}
      ${draft.provider === 'none' ? field('reason') : null}
      <p class="muted">${t('choiceHint')}</p>
      <${ErrorMessage} error=${error} />
      <p role="status">${status}</p>
      <button type="submit">${t('choiceSave')}</button>
    </form>
  </section>`;
}

function PosCredentials({ api }: { api: ProjectApi }) {
  const t = useWords(words);
  const f = useFormat();
  const list = useLoad((signal) => api.get<{ credentials: Array<{ user: string; name: string; permissions: string[]; createdAt: string }> }>('/pos/credentials', { signal }), [api]);
  const [name, setName] = useState('');
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>();
  const id = useId('pos-name');
  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await api.send<{ user: string; password: string }>('POST', '/pos/credentials', { name, permissions: ['checkoutRead', 'updatePricingCheckoutProcess'] });
      setNotice(t('posPassword', { user: created.user, password: created.password }));
      setName('');
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = (user: string) => async () => {
    try {
      await api.send('DELETE', `/pos/credentials/${user}`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  return html`<section class="panel" aria-labelledby="pos-title">
    <h2 id="pos-title">${t('pos')}</h2>
    <${ErrorMessage} error=${list.error ?? error} />
    <p role="status" class="mono">${notice}</p>
    ${list.data && !list.data.credentials.length ? html`<p>${t('posNone')}</p>` : null}
    <ul class="plain">
      ${(list.data?.credentials ?? []).map(
        (c) => html`<li class="with-actions">
          <span>${c.name} <span class="muted mono">${c.user} · ${f.dateTime(c.createdAt)}</span></span>
          <${ConfirmButton} label=${html`${t('posRemove')}<span class="sr-only"> (${c.name})</span>`} question=${t('posRemoveQuestion', { name: c.name })} text=${t('posRemoveText')}
            yes=${t('posRemoveYes')} no=${t('posRemoveNo')} onConfirm=${remove(c.user)} />
        </li>`,
      )}
    </ul>
    <form class="toolbar" onSubmit=${create}>
      <${Field} id=${id} label=${t('posName')}><input id=${id} required value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} /><//>
      <button type="submit">${t('posCreate')}</button>
    </form>
  </section>`;
}
