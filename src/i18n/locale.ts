/**
 * The languages the service speaks, and how a request picks one. Pure: the HTTP and
 * socket layers pass in what the client sent.
 */
export enum Locale {
  EN = 'en',
  ZH_CN = 'zh-CN',
}

export const DEFAULT_LOCALE = Locale.EN;
export const ALL_LOCALES: readonly Locale[] = Object.values(Locale);

/** A hostile header is only read this far: negotiation never costs more than a short string. */
const MAX_HEADER_LENGTH = 512;
const MAX_RANGES = 16;

/**
 * The locale a language tag stands for, or null when the service does not speak it.
 * Simplified Chinese is `zh` alone or with a Simplified script or a region writing it
 * (`zh-CN`, `zh-Hans`, `zh-Hans-CN`, `zh-SG`); Traditional (`zh-TW`, `zh-Hant`…) is not
 * served, so it falls through to the next range or English. Any `en-*` is English.
 */
export function localeOfTag(tag: string): Locale | null {
  const parts = tag.trim().toLowerCase().split(/[-_]/);
  if (parts[0] === 'en') return Locale.EN;
  if (parts[0] !== 'zh') return null;
  const rest = parts.slice(1);
  if (rest.length === 0) return Locale.ZH_CN;
  if (rest.includes('hant') || rest.some((p) => p === 'tw' || p === 'hk' || p === 'mo')) return null;
  if (rest.includes('hans') || rest.some((p) => p === 'cn' || p === 'sg' || p === 'my')) return Locale.ZH_CN;
  return null;
}

/**
 * The locale of an `Accept-Language` header (RFC 9110 §12.5.4): the served language of
 * the highest weight, ties to the earlier range; English when none is served or the
 * header is absent or malformed.
 */
export function localeFromAcceptLanguage(header: string | readonly string[] | null | undefined): Locale {
  const text = (Array.isArray(header) ? header.join(',') : (header as string | null | undefined) ?? '').slice(0, MAX_HEADER_LENGTH);
  let best: { locale: Locale; q: number } | null = null;
  for (const range of text.split(',').slice(0, MAX_RANGES)) {
    const [tag, ...attributes] = range.split(';');
    const locale = localeOfTag(tag ?? '');
    if (locale === null) continue;
    const weight = attributes.map((a) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(a)).find((m) => m !== null);
    const q = weight ? Number(weight[1]) : 1;
    if (!(q > 0)) continue;
    if (best === null || q > best.q) best = { locale, q };
  }
  return best?.locale ?? DEFAULT_LOCALE;
}

/** The locale a socket's `connectionParams.locale` names (a tag or a list like a header); English otherwise. */
export function localeFromParam(value: unknown): Locale {
  return typeof value === 'string' ? localeFromAcceptLanguage(value) : DEFAULT_LOCALE;
}
