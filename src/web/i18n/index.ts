import i18next, { type TOptions } from 'i18next';
import { ref } from 'vue';
import { common } from './common';

/** The page's languages; the first is the default for a browser that prefers neither. */
export const LANGUAGES = ['zh-CN', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];

const LANGUAGE_KEY = 'jiaowu.language';

/** Each area's messages: `{ en: {...}, 'zh-CN': {...} }`, a namespace named after its folder. */
export type Messages = Record<Language, Record<string, unknown>>;

/**
 * Every `views/<area>/messages.ts` becomes the namespace `<area>` (`t('jobs:title')`),
 * so an area adds its translations without touching this file. `common` holds what
 * several areas share (statuses, kinds, steps, errors).
 */
const areaModules = import.meta.glob<{ messages: Messages }>('../views/*/messages.ts', { eager: true });

const resources: Record<Language, Record<string, Record<string, unknown>>> = { 'zh-CN': { common: common['zh-CN'] }, en: { common: common.en } };
for (const [file, module] of Object.entries(areaModules)) {
  const area = /views\/([^/]+)\/messages\.ts$/.exec(file)![1]!;
  for (const language of LANGUAGES) resources[language][area] = module.messages[language];
}

/** The language the browser prefers among ours: Chinese of any region is zh-CN; anything else English unless Chinese comes first. */
export function browserLanguage(preferred: readonly string[] = navigator.languages ?? [navigator.language]): Language {
  for (const tag of preferred) {
    const lower = tag.toLowerCase();
    if (lower.startsWith('zh')) return 'zh-CN';
    if (lower.startsWith('en')) return 'en';
  }
  return 'zh-CN';
}

function initialLanguage(): Language {
  const kept = localStorage.getItem(LANGUAGE_KEY);
  return (LANGUAGES as readonly string[]).includes(kept ?? '') ? (kept as Language) : browserLanguage();
}

const language = ref<Language>(initialLanguage());

i18next.init({
  lng: language.value,
  fallbackLng: 'en',
  supportedLngs: [...LANGUAGES],
  ns: Object.keys(resources.en),
  defaultNS: 'common',
  resources,
  interpolation: { escapeValue: false }, // Vue escapes what it renders
  returnNull: false,
  initAsync: false,
});
document.documentElement.lang = language.value;

export const currentLanguage = (): Language => language.value;

/** Switches the page's language and keeps the choice (this browser, across visits). */
export function setLanguage(next: Language): void {
  language.value = next;
  localStorage.setItem(LANGUAGE_KEY, next);
  document.documentElement.lang = next;
  void i18next.changeLanguage(next);
}

/** `t` for templates and code: reading `language` makes every render that uses it follow a switch. */
export function t(key: string, options?: TOptions): string {
  void language.value;
  return i18next.t(key, { ...options, lng: language.value } as TOptions) as string;
}

/** Whether a translation exists (for codes the page may not know yet). */
export function exists(key: string): boolean {
  void language.value;
  return i18next.exists(key, { lng: language.value });
}

export function useI18n() {
  return { t, exists, language, setLanguage, LANGUAGES };
}
