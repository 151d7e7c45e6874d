import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useFormat } from '../format.js';
import { useWords } from '../i18n.js';
import { useNames } from '../names.js';
import { ErrorMessage, Field, Loading, useId, useLoad } from '../ui.js';
import type { ScreenProps } from './index.js';

interface Account {
  id: string;
  email: string;
  role: string;
  passwordChangeRequired: boolean;
  lockedUntil: string | null;
}

const Roles = ['owner', 'backoffice', 'supervisor', 'accounting'] as const;

const words = {
  de: {
    list: 'Konten',
    email: 'E-Mail',
    role: 'Rolle',
    state: 'Status',
    roleOf: 'Rolle von {email}',
    locked: 'gesperrt bis {time}',
    oneTime: 'Einmalpasswort noch nicht ersetzt',
    active: 'aktiv',
    reset: 'Passwort von {email} zurücksetzen',
    remove: 'Konto {email} löschen',
    add: 'Konto anlegen',
    create: 'Anlegen',
    password: 'Einmalpasswort für {email}: {password} (wird nur jetzt angezeigt)',
  },
  en: {
    list: 'Accounts',
    email: 'Email',
    role: 'Role',
    state: 'State',
    roleOf: 'Role of {email}',
    locked: 'locked until {time}',
    oneTime: 'one-time password not replaced yet',
    active: 'active',
    reset: 'Reset the password of {email}',
    remove: 'Delete the account {email}',
    add: 'Add an account',
    create: 'Create',
    password: 'One-time password for {email}: {password} (shown only now)',
  },
};

/** The portal's accounts of the project, managed by an owner: role, one-time passwords, deletion. */
export function Accounts({ api, session }: ScreenProps) {
  const t = useWords(words);
  const f = useFormat();
  const names = useNames();
  const list = useLoad((signal) => api.get<{ accounts: Account[] }>('/portal/accounts', { signal }), [api]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('supervisor');
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>();
  const ids = { email: useId('email'), role: useId('role') };
  const run = (work: () => Promise<void>) => async () => {
    setError(undefined);
    setNotice('');
    try {
      await work();
      list.reload();
    } catch (err) {
      setError(err);
    }
  };
  const create = async (event: Event) => {
    event.preventDefault();
    await run(async () => {
      const created = await api.send<{ account: Account; password: string }>('POST', '/portal/accounts', { email, role });
      setNotice(t('password', { email: created.account.email, password: created.password }));
      setEmail('');
    })();
  };

  return html`<div>
    <section class="panel" aria-labelledby="accounts-title">
      <h2 id="accounts-title">${t('list')}</h2>
      <${Loading} when=${list.loading && !list.data} />
      <${ErrorMessage} error=${list.error ?? error} />
      <p role="status" class="mono">${notice}</p>
      <table>
        <thead><tr><th scope="col">${t('email')}</th><th scope="col">${t('role')}</th><th scope="col">${t('state')}</th><th scope="col"><span class="sr-only">…</span></th></tr></thead>
        <tbody>
          ${(list.data?.accounts ?? []).map(
            (a) => html`<tr>
              <td>${a.email}</td>
              <td>
                <select aria-label=${t('roleOf', { email: a.email })} value=${a.role} disabled=${a.id === session.account.id}
                  onChange=${(e: Event) => run(() => api.send('PATCH', `/portal/accounts/${a.id}`, { role: (e.target as HTMLSelectElement).value }))()}>
                  ${Roles.map((r) => html`<option value=${r}>${names.role(r)}</option>`)}
                </select>
              </td>
              <td>${a.lockedUntil ? t('locked', { time: f.dateTime(a.lockedUntil) }) : a.passwordChangeRequired ? t('oneTime') : t('active')}</td>
              <td class="actions">
                <button type="button" class="secondary" aria-label=${t('reset', { email: a.email })}
                  onClick=${run(async () => setNotice(t('password', { email: a.email, password: (await api.send<{ password: string }>('PATCH', `/portal/accounts/${a.id}`, { resetPassword: true })).password })))}>↻</button>
                ${a.id === session.account.id ? null : html`<button type="button" class="danger" aria-label=${t('remove', { email: a.email })} onClick=${run(() => api.send('DELETE', `/portal/accounts/${a.id}`))}>✕</button>`}
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
    </section>
    <section class="panel" aria-labelledby="add-account-title">
      <h2 id="add-account-title">${t('add')}</h2>
      <form class="toolbar" onSubmit=${create}>
        <${Field} id=${ids.email} label=${t('email')}><input id=${ids.email} type="email" required value=${email} onInput=${(e: Event) => setEmail((e.target as HTMLInputElement).value)} /><//>
        <${Field} id=${ids.role} label=${t('role')}>
          <select id=${ids.role} value=${role} onChange=${(e: Event) => setRole((e.target as HTMLSelectElement).value)}>${Roles.map((r) => html`<option value=${r}>${names.role(r)}</option>`)}</select>
        <//>
        <button type="submit">${t('create')}</button>
      </form>
    </section>
  </div>`;
}
