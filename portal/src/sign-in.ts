import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api.js';
import { useWords } from './i18n.js';
import { choosePassword, signIn, type Session } from './session.js';
import { ErrorMessage, Field, useId } from './ui.js';

const words = {
  de: {
    title: 'Anmelden',
    project: 'Projekt',
    email: 'E-Mail',
    password: 'Passwort',
    submit: 'Anmelden',
    wrong: 'E-Mail oder Passwort ist falsch.',
    locked: 'Zu viele Fehlversuche: Das Konto ist 15 Minuten lang gesperrt.',
    chooseTitle: 'Neues Passwort wählen',
    chooseIntro: 'Sie haben sich mit einem Einmalpasswort angemeldet. Wählen Sie jetzt Ihr eigenes Passwort (mindestens 10 Zeichen).',
    current: 'Aktuelles Passwort',
    next: 'Neues Passwort',
    repeat: 'Neues Passwort wiederholen',
    mismatch: 'Die Passwörter stimmen nicht überein.',
    save: 'Passwort speichern',
  },
  en: {
    title: 'Sign in',
    project: 'Project',
    email: 'Email',
    password: 'Password',
    submit: 'Sign in',
    wrong: 'Wrong email or password.',
    locked: 'Too many failed attempts: the account is locked for 15 minutes.',
    chooseTitle: 'Choose a new password',
    chooseIntro: 'You signed in with a one-time password. Choose your own password now (at least 10 characters).',
    current: 'Current password',
    next: 'New password',
    repeat: 'Repeat the new password',
    mismatch: 'The passwords do not match.',
    save: 'Save password',
  },
};

const LastProject = 'portal.project';

/** The sign-in form: project (remembered in this browser), email, password. */
export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const t = useWords(words);
  const [project, setProject] = useState(localStorage.getItem(LastProject) ?? '');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const ids = { project: useId('project'), email: useId('email'), password: useId('password') };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await signIn(project.trim(), email.trim(), password);
      localStorage.setItem(LastProject, project.trim());
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiError && err.type === 'account_locked' ? t('locked') : err instanceof ApiError && err.status === 403 ? t('wrong') : String((err as Error).message));
    } finally {
      setBusy(false);
      setPassword('');
    }
  };

  return html`<main id="main" class="sign-in">
    <h1>${t('title')}</h1>
    <form onSubmit=${submit}>
      <${Field} id=${ids.project} label=${t('project')}>
        <input id=${ids.project} name="project" required autocomplete="organization" value=${project} onInput=${(e: Event) => setProject((e.target as HTMLInputElement).value)} />
      <//>
      <${Field} id=${ids.email} label=${t('email')}>
        <input id=${ids.email} name="email" type="email" required autocomplete="username" value=${email} onInput=${(e: Event) => setEmail((e.target as HTMLInputElement).value)} />
      <//>
      <${Field} id=${ids.password} label=${t('password')}>
        <input id=${ids.password} name="password" type="password" required autocomplete="current-password" value=${password} onInput=${(e: Event) => setPassword((e.target as HTMLInputElement).value)} />
      <//>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <button type="submit" disabled=${busy}>${t('submit')}</button>
    </form>
  </main>`;
}

/** After a one-time password: the person chooses their own before anything else. */
export function ChoosePassword({ onChosen }: { onChosen: (session: Session) => void }) {
  const t = useWords(words);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<unknown>();
  const ids = { current: useId('current'), next: useId('next'), repeat: useId('repeat') };
  const mismatch = repeat !== '' && repeat !== next ? t('mismatch') : undefined;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (mismatch) return;
    try {
      onChosen(await choosePassword(current, next));
    } catch (err) {
      setError(err);
    }
  };

  return html`<main id="main" class="sign-in">
    <h1>${t('chooseTitle')}</h1>
    <p>${t('chooseIntro')}</p>
    <form onSubmit=${submit}>
      <${Field} id=${ids.current} label=${t('current')}>
        <input id=${ids.current} type="password" required autocomplete="current-password" value=${current} onInput=${(e: Event) => setCurrent((e.target as HTMLInputElement).value)} />
      <//>
      <${Field} id=${ids.next} label=${t('next')}>
        <input id=${ids.next} type="password" required minlength="10" autocomplete="new-password" value=${next} onInput=${(e: Event) => setNext((e.target as HTMLInputElement).value)} />
      <//>
      <${Field} id=${ids.repeat} label=${t('repeat')} error=${mismatch}>
        <input id=${ids.repeat} type="password" required minlength="10" autocomplete="new-password" value=${repeat} aria-invalid=${mismatch ? 'true' : undefined} aria-describedby=${mismatch ? `${ids.repeat}-error` : undefined} onInput=${(e: Event) => setRepeat((e.target as HTMLInputElement).value)} />
      <//>
      <${ErrorMessage} error=${error} />
      <button type="submit">${t('save')}</button>
    </form>
  </main>`;
}
