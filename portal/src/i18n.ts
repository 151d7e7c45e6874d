import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/**
 * German and English. The language is the browser's (German when it prefers German, else English)
 * until the person picks one with the switch; the choice is remembered in this browser. Words live
 * beside the component that shows them: `const t = useWords(words)`.
 */
export const Languages = ['de', 'en'] as const;
export type Language = (typeof Languages)[number];

/**
 * Words that say a count (`{n}`) in the forms the language's plural rules ask for (Intl.PluralRules:
 * German and English know `one` and `other`): `{ one: '{n} Bestellung', other: '{n} Bestellungen' }`.
 */
export interface Plural {
  one: string;
  other: string;
}

export type Words<K extends string> = Record<Language, Record<K, string | Plural>>;

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

const pluralRules = new Map<Language, Intl.PluralRules>();

/** The form of a plural that fits `n` in the language. */
export function pluralForm(language: Language, forms: Plural, n: number): string {
  let rules = pluralRules.get(language);
  if (!rules) {
    rules = new Intl.PluralRules(language);
    pluralRules.set(language, rules);
  }
  return rules.select(n) === 'one' ? forms.one : forms.other;
}

/**
 * The words of the current language, with `{name}` placeholders filled from `values`; a plural's
 * form is chosen by `values.n`.
 */
export function useWords<K extends string>(words: Words<K>): (key: K, values?: Record<string, string | number>) => string {
  const language = useContext(LanguageContext);
  const table = words[language];
  return (key, values) => {
    const entry = table[key];
    const text = typeof entry === 'string' ? entry : pluralForm(language, entry, Number(values?.n));
    return values ? fillWords(text, values) : text;
  };
}

/** A text with its `{name}` placeholders filled from `values` (a missing one: empty). */
export function fillWords(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ''));
}

export function useLanguage(): Language {
  return useContext(LanguageContext);
}
