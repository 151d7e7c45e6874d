import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useFormat } from '../format.js';
import { useWords } from '../i18n.js';
import { useNames } from '../names.js';
import { ConfirmButton, ErrorMessage, Field, Loading, useId, useLoad } from '../ui.js';
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
    actions: 'Aktionen',
    roleOf: 'Rolle von {email}',
    locked: 'gesperrt bis {time}',
    oneTime: 'Einmalpasswort noch nicht ersetzt',
    active: 'aktiv',
    reset: 'Passwort zurücksetzen',
    remove: 'Konto löschen',
    removeQuestion: 'Konto {email} löschen?',
    removeText: 'Die Person kann sich dann nicht mehr anmelden; ihre Sitzungen enden sofort. Das lässt sich nicht rückgängig machen.',
    removeYes: 'Ja, Konto löschen',
    removeNo: 'Nicht löschen',
    add: 'Konto anlegen',
    create: 'Anlegen',
    password: 'Einmalpasswort für {email}: {password} (wird nur jetzt angezeigt)',
  },
  en: {
    list: 'Accounts',
    email: 'Email',
    role: 'Role',
    state: 'State',
    actions: 'Actions',
    roleOf: 'Role of {email}',
    locked: 'locked until {time}',
    oneTime: 'one-time password not replaced yet',
    active: 'active',
    reset: 'Reset password',
    remove: 'Delete account',
    removeQuestion: 'Delete the account {email}?',
    removeText: 'The person can no longer sign in; their sessions end at once. This cannot be undone.',
    removeYes: 'Yes, delete account',
    removeNo: 'Keep the account',
    add: 'Add an account',
    create: 'Create',
    password: 'One-time password for {email}: {password} (shown only now)',
  },
};

/**
 * The portal's accounts of the project, managed by an owner: role, one-time passwords, deletion. A
 * one-time password is shown once, where it was made: a reset's in the account's row, a new
 * account's below the form that created it.
 */
export function Accounts({ api, session }: ScreenProps) {
  const t = useWords(words);
  const f = useFormat();
  const names = useNames();
  const list = useLoad((signal) => api.get<{ accounts: Account[] }>('/portal/accounts', { signal }), [api]);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('supervisor');
  const [created, setCreated] = useState('');
  const [reset, setReset] = useState<{ id: string; text: string } | null>(null);
  const [error, setError] = useState<unknown>();
  const ids = { email: useId('email'), role: useId('role') };
  const run = (work: () => Promise<void>) => async () => {
    setError(undefined);
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
      const answer = await api.send<{ account: Account; password: string }>('POST', '/portal/accounts', { email, role });
      setReset(null);
      setCreated(t('password', { email: answer.account.email, password: answer.password }));
      setEmail('');
    })();
  };
  const resetPassword = (a: Account) =>
    run(async () => {
      const answer = await api.send<{ password: string }>('PATCH', `/portal/accounts/${a.id}`, { resetPassword: true });
      setCreated('');
      setReset({ id: a.id, text: t('password', { email: a.email, password: answer.password }) });
    });

  return html`<div>
    <section class="panel" aria-labelledby="accounts-title">
      <h2 id="accounts-title">${t('list')}</h2>
      <${Loading} when=${list.loading && !list.data} />
      <${ErrorMessage} error=${list.error ?? error} />
      <table class="accounts">
        <thead><tr><th scope="col">${t('email')}</th><th scope="col">${t('role')}</th><th scope="col">${t('state')}</th><th scope="col">${t('actions')}</th></tr></thead>
        <tbody>
          ${(list.data?.accounts ?? []).map(
            (a) => html`<tr>
              <th scope="row">${a.email}</th>
              <td>
                <select aria-label=${t('roleOf', { email: a.email })} value=${a.role} disabled=${a.id === session.account.id}
                  onChange=${(e: Event) => run(() => api.send('PATCH', `/portal/accounts/${a.id}`, { role: (e.target as HTMLSelectElement).value }))()}>
                  ${Roles.map((r) => html`<option value=${r}>${names.role(r)}</option>`)}
                </select>
              </td>
              <td>${a.lockedUntil ? t('locked', { time: f.dateTime(a.lockedUntil) }) : a.passwordChangeRequired ? t('oneTime') : t('active')}</td>
              <td>
                <div class="actions">
                  <button type="button" class="secondary" onClick=${resetPassword(a)}>${t('reset')}<span class="sr-only"> (${a.email})</span></button>
                  ${a.id === session.account.id
                    ? null
                    : html`<${ConfirmButton} label=${html`${t('remove')}<span class="sr-only"> (${a.email})</span>`} question=${t('removeQuestion', { email: a.email })} text=${t('removeText')}
                        yes=${t('removeYes')} no=${t('removeNo')} onConfirm=${run(() => api.send('DELETE', `/portal/accounts/${a.id}`))} />`}
                </div>
                <p role="status" class="one-time mono">${reset?.id === a.id ? reset.text : ''}</p>
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
      <p role="status" class="one-time mono">${created}</p>
    </section>
  </div>`;
}
