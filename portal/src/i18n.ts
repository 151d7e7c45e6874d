import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/**
 * German and English. The language is the browser's (German when it prefers German, else English)
 * until the person picks one with the switch; the choice is remembered in this browser. Words live
 * beside the component that shows them: `const t = useWords(words)`.
 */
export const Languages = ['de', 'en'] as const;
export type Language = (typeof Languages)[number];

export type Words<K extends string> = Record<Language, Record<K, string>>;

const StorageKey = 'portal.language';

export function initialLanguage(): Language {
  const stored = localStorage.getItem(StorageKey);
  if (stored === 'de' || stored === 'en') return stored;
  return (navigator.languages ?? [navigator.language]).some((l) => l.toLowerCase().startsWith('de')) ? 'de' : 'en';
}

export function rememberLanguage(language: Language): void {
  localStorage.setItem(StorageKey, language);
  document.documentElement.lang = language;
}

export const LanguageContext = createContext<Language>('de');

/** The words of the current language, with `{name}` placeholders filled from `values`. */
export function useWords<K extends string>(words: Words<K>): (key: K, values?: Record<string, string | number>) => string {
  const language = useContext(LanguageContext);
  const table = words[language];
  return (key, values) => (values ? table[key].replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? '')) : table[key]);
}

export function useLanguage(): Language {
  return useContext(LanguageContext);
}
