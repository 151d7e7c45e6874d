import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, type ProjectApi } from '../../api.js';
import { useWords } from '../../i18n.js';
import { ErrorMessage, Field, errorsByField, invalid, useId } from '../../ui.js';
import { ServicePermissions, useClientNames, type CreatedClient } from './names.js';

const words = {
  de: {
    kind: 'Art',
    app: 'App: eine Kunden-App mit dem App-SDK; ihre Installationen melden sich selbst an und lesen nur ihre eigenen Einkäufe',
    service: 'Dienst: ein Server (Warenwirtschaft, Buchhaltung) holt Tokens mit OAuth 2.0 Client Credentials',
    name: 'Name',
    lifetime: 'Gültigkeit eines Tokens (Minuten)',
    lifetimeHint: '1 bis 1440 Minuten; danach holt sich der Client ein neues Token.',
    permissions: 'Berechtigungen des Dienstes',
    permissionsHint: 'Seine Tokens tragen diese Berechtigungen oder weniger (scope).',
    pickOne: 'Wählen Sie mindestens eine Berechtigung.',
    createApp: 'App anlegen',
    createService: 'Dienst anlegen',
    tooMany: 'Ein Projekt hat höchstens 100 Apps und Dienste. Löschen Sie zuerst einen Eintrag, den niemand mehr braucht.',
  },
  en: {
    kind: 'Kind',
    app: 'App: a customer app with the app SDK; its installations sign in by themselves and read only their own purchases',
    service: 'Service: a server (inventory, accounting) gets tokens by OAuth 2.0 client credentials',
    name: 'Name',
    lifetime: 'Token lifetime (minutes)',
    lifetimeHint: '1 to 1440 minutes; then the client gets a new token.',
    permissions: "The service's permissions",
    permissionsHint: 'Its tokens carry these permissions or fewer (scope).',
    pickOne: 'Choose at least one permission.',
    createApp: 'Create app',
    createService: 'Create service',
    tooMany: 'A project has at most 100 clients. Delete one that nobody needs first.',
  },
};

type Kind = 'app' | 'service';

/** A new client: its kind first, then its name, its token lifetime and (a service) its permissions. `onCreated` gets the answer with its one-time secret. */
export function CreateClient({ api, onCreated }: { api: ProjectApi; onCreated(created: CreatedClient): void }) {
  const t = useWords(words);
  const names = useClientNames();
  const [kind, setKind] = useState<Kind>('app');
  const [name, setName] = useState('');
  const [minutes, setMinutes] = useState('60');
  const [permissions, setPermissions] = useState<string[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const ids = { name: useId('client-name'), lifetime: useId('client-lifetime'), permissions: useId('client-permissions') };

  const submit = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setError(undefined);
    if (kind === 'service' && !permissions.length) return setErrors({ permissions: t('pickOne') });
    const body = {
      kind,
      name,
      tokenLifetimeSeconds: Math.round(Number(minutes) * 60),
      ...(kind === 'service' ? { permissions: ServicePermissions.filter((p) => permissions.includes(p)) } : {}),
    };
    try {
      const created = await api.send<CreatedClient>('POST', '/clients', body);
      setName('');
      setMinutes('60');
      setPermissions([]);
      onCreated(created);
    } catch (err) {
      const byField = errorsByField(err, ([first]) => (first === 'tokenLifetimeSeconds' ? 'lifetime' : first && ['name', 'permissions'].includes(first) ? first : undefined));
      if (byField && Object.keys(byField).length) setErrors(byField);
      else setError(err instanceof ApiError && err.details.some((d) => d.code === 'too_many') ? new Error(t('tooMany')) : err);
    }
  };
  const toggle = (p: string) => setPermissions(permissions.includes(p) ? permissions.filter((x) => x !== p) : [...permissions, p]);

  return html`<form onSubmit=${submit}>
    <fieldset>
      <legend>${t('kind')}</legend>
      ${(['app', 'service'] as const).map(
        (k) => html`<div><label class="check"><input type="radio" name="client-kind" value=${k} checked=${kind === k} onChange=${() => setKind(k)} /> ${t(k)}</label></div>`,
      )}
    </fieldset>
    <div class="row">
      <${Field} id=${ids.name} label=${t('name')} error=${errors.name}>
        <input id=${ids.name} required maxlength="100" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} ...${invalid(ids.name, errors.name)} />
      <//>
      <${Field} id=${ids.lifetime} label=${t('lifetime')} error=${errors.lifetime}>
        <input id=${ids.lifetime} type="number" min="1" max="1440" step="1" required value=${minutes} onInput=${(e: Event) => setMinutes((e.target as HTMLInputElement).value)}
          ...${invalid(ids.lifetime, errors.lifetime)} aria-describedby=${errors.lifetime ? `${ids.lifetime}-error ${ids.lifetime}-hint` : `${ids.lifetime}-hint`} />
        <span class="hint" id=${`${ids.lifetime}-hint`}>${t('lifetimeHint')}</span>
      <//>
    </div>
    ${kind === 'service'
      ? html`<fieldset aria-describedby=${errors.permissions ? `${ids.permissions}-error ${ids.permissions}-hint` : `${ids.permissions}-hint`}>
          <legend>${t('permissions')}</legend>
          <p class="hint" id=${`${ids.permissions}-hint`}>${t('permissionsHint')}</p>
          <ul class="plain permissions">
            ${ServicePermissions.map(
              (p) => html`<li><label class="check"><input type="checkbox" checked=${permissions.includes(p)} onChange=${() => toggle(p)} /> ${names.permission(p)} <span class="mono hint">${p}</span></label></li>`,
            )}
          </ul>
          ${errors.permissions ? html`<p class="field-error" id=${`${ids.permissions}-error`}>${errors.permissions}</p>` : null}
        </fieldset>`
      : null}
    <${ErrorMessage} error=${error} />
    <button type="submit">${t(kind === 'app' ? 'createApp' : 'createService')}</button>
  </form>`;
}
