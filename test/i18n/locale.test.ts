import { describe, expect, it } from 'vitest';
import { Locale, localeFromAcceptLanguage, localeFromParam, localeOfTag } from '../../src/i18n/locale';

describe('choosing the locale', () => {
  it('Simplified Chinese tags are Chinese; Traditional and other languages are not served', () => {
    for (const tag of ['zh', 'zh-CN', 'zh-cn', 'zh_CN', 'zh-Hans', 'zh-Hans-CN', 'zh-SG', 'ZH']) expect(localeOfTag(tag), tag).toBe(Locale.ZH_CN);
    for (const tag of ['en', 'en-US', 'en-GB']) expect(localeOfTag(tag), tag).toBe(Locale.EN);
    for (const tag of ['zh-TW', 'zh-HK', 'zh-Hant', 'zh-Hant-TW', 'fr', 'ja', '', '*']) expect(localeOfTag(tag), tag).toBeNull();
  });

  it('Accept-Language: the served language of the highest weight, earlier first on a tie; English otherwise', () => {
    const cases: [string | string[] | undefined | null, Locale][] = [
      [undefined, Locale.EN],
      [null, Locale.EN],
      ['', Locale.EN],
      ['zh-CN', Locale.ZH_CN],
      ['zh-CN,zh;q=0.9,en;q=0.8', Locale.ZH_CN],
      ['en-US,en;q=0.9,zh-CN;q=0.8', Locale.EN],
      ['fr-FR, zh-CN;q=0.8, en;q=0.5', Locale.ZH_CN],
      ['en;q=0.5, zh;q=0.6', Locale.ZH_CN],
      ['zh;q=0, en', Locale.EN],
      ['zh;q=0', Locale.EN],
      ['zh-TW, zh-Hans;q=0.5', Locale.ZH_CN],
      ['zh-TW', Locale.EN],
      ['*', Locale.EN],
      ['zh;q=banana', Locale.ZH_CN],
      [';;;,,,q=', Locale.EN],
      [['fr', 'zh-CN'], Locale.ZH_CN],
    ];
    for (const [header, locale] of cases) expect(localeFromAcceptLanguage(header), String(header)).toBe(locale);
  });

  it('a hostile header is read only so far', () => {
    expect(localeFromAcceptLanguage(`${'fr;q=0.1,'.repeat(10_000)}zh-CN`)).toBe(Locale.EN);
    expect(localeFromAcceptLanguage('x'.repeat(1_000_000))).toBe(Locale.EN);
  });

  it("a socket's locale parameter: a tag (or a list like the header); anything else is English", () => {
    expect(localeFromParam('zh-CN')).toBe(Locale.ZH_CN);
    expect(localeFromParam('zh')).toBe(Locale.ZH_CN);
    expect(localeFromParam('en')).toBe(Locale.EN);
    for (const value of [undefined, null, 42, {}, ['zh-CN'], 'klingon']) expect(localeFromParam(value), JSON.stringify(value)).toBe(Locale.EN);
  });
});
