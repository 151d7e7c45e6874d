import { html } from 'htm/preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { projectApi } from './api.js';
import { initialLanguage, LanguageContext, Languages, rememberLanguage, useWords, type Language } from './i18n.js';
import { useNames } from './names.js';
import { Base, followLink, navigate, useScreen } from './router.js';
import { Screens, type ScreenProps } from './screens/index.js';
import { currentSession, signOut, type Session } from './session.js';
import { ChoosePassword, SignIn } from './sign-in.js';

const words = {
  de: { skip: 'Zum Inhalt springen', portal: 'Händlerportal', nav: 'Hauptnavigation', language: 'Sprache', signOut: 'Abmelden', signedInAs: 'Angemeldet als {email} ({role})', nothing: 'Ihrer Rolle ist keine Ansicht freigegeben.' },
  en: { skip: 'Skip to content', portal: 'Retailer portal', nav: 'Main navigation', language: 'Language', signOut: 'Sign out', signedInAs: 'Signed in as {email} ({role})', nothing: 'Your role has no screen.' },
};

export function App() {
  const [language, setLanguage] = useState<Language>(initialLanguage());
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  useEffect(() => void currentSession().then(setSession), []);
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);
  const choose = (l: Language) => {
    rememberLanguage(l);
    setLanguage(l);
  };

  let content;
  if (session === undefined) content = null;
  else if (session === null) content = html`<${SignIn} onSignedIn=${setSession} />`;
  else if (session.account.passwordChangeRequired) content = html`<${ChoosePassword} onChosen=${setSession} />`;
  else content = html`<${Layout} session=${session} onSignedOut=${() => setSession(null)} />`;

  return html`<${LanguageContext.Provider} value=${language}>
    <${TopBar} session=${session ?? null} language=${language} onLanguage=${choose} onSignedOut=${() => setSession(null)} />
    ${content}
  <//>`;
}

function TopBar({ session, language, onLanguage, onSignedOut }: { session: Session | null; language: Language; onLanguage: (l: Language) => void; onSignedOut: () => void }) {
  const t = useWords(words);
  const names = useNames();
  const leave = async () => {
    await signOut();
    history.replaceState(null, '', Base);
    onSignedOut();
  };
  return html`<header class="top">
    <a class="skip" href="#main">${t('skip')}</a>
    <span class="brand">${t('portal')}${session ? html` · <span class="project">${session.project}</span>` : null}</span>
    <div class="top-tools">
      ${session ? html`<span class="who">${t('signedInAs', { email: session.account.email, role: names.role(session.account.role) })}</span>` : null}
      <label class="language">${t('language')}
        <select value=${language} onChange=${(e: Event) => onLanguage((e.target as HTMLSelectElement).value as Language)}>
          ${Languages.map((l) => html`<option value=${l}>${l === 'de' ? 'Deutsch' : 'English'}</option>`)}
        </select>
      </label>
      ${session ? html`<button type="button" class="secondary" onClick=${leave}>${t('signOut')}</button>` : null}
    </div>
  </header>`;
}

/** Navigation and the current screen; only the screens the account's role may use are offered. */
function Layout({ session }: { session: Session; onSignedOut: () => void }) {
  const t = useWords(words);
  const allowed = Screens.filter((s) => session.permissions.includes(s.permission));
  const screen = useScreen();
  const current = allowed.find((s) => s.id === screen) ?? allowed[0];
  const api = useMemo(() => projectApi(session.project), [session.project]);
  const heading = useRef<HTMLHeadingElement>(null);
  const first = useRef(true);
  useEffect(() => {
    if (current && current.id !== screen) history.replaceState(null, '', `${Base}${current.id}`);
    // After a move to another screen, the reader continues at its heading.
    if (!first.current) heading.current?.focus();
    first.current = false;
  }, [current?.id]);

  return html`<div class="layout">
    <nav aria-label=${t('nav')}>
      <ul>
        ${allowed.map(
          (s) => html`<li><a href=${`${Base}${s.id}`} aria-current=${s.id === current?.id ? 'page' : undefined} onClick=${(e: MouseEvent) => followLink(e, s.id)}>
            <${s.Title} />
          </a></li>`,
        )}
      </ul>
    </nav>
    <main id="main" tabindex="-1">
      ${current
        ? html`<h1 ref=${heading} tabindex="-1"><${current.Title} /></h1><${current.Screen} api=${api} session=${session} navigate=${navigate} />`
        : html`<p>${t('nothing')}</p>`}
    </main>
  </div>`;
}

export type { ScreenProps };
