/**
 * The Timetabling and Make-up exams strings: the Chinese is Chinese, not English left
 * untranslated (messages.test.ts checks every area's keys and placeholders; the type of
 * the Chinese objects, the same shape as the English).
 */
import { describe, expect, it } from 'vitest';
import { makeupExamsEn, makeupExamsZhCn } from '../../src/web/views/makeup-exams/messages';
import { timetablingEn, timetablingZhCn } from '../../src/web/views/timetabling/messages';

/** Every leaf as "path = value". */
function leaves(value: unknown, path = ''): Map<string, string> {
  const out = new Map<string, string>();
  if (typeof value === 'string') out.set(path, value);
  else if (Array.isArray(value)) value.forEach((v, i) => leaves(v, `${path}[${i}]`).forEach((s, k) => out.set(k, s)));
  else for (const [k, v] of Object.entries(value as object)) leaves(v, path ? `${path}.${k}` : k).forEach((s, key) => out.set(key, s));
  return out;
}

describe.each([
  ['timetabling', timetablingEn, timetablingZhCn],
  ['makeupExams', makeupExamsEn, makeupExamsZhCn],
])('the %s strings', (_name, _en, zh) => {
  const chinese = leaves(zh);

  it('are Chinese in Chinese (each string has a Han character or is a code, number or dash)', () => {
    for (const [key, text] of chinese) {
      const untranslatable = /^[\sA-Za-z0-9.\-–—{}:()（）]*$/.test(text) && !/[a-z]{4,}/.test(text.replace(/\{\{\w+\}\}/g, ''));
      expect(/\p{Script=Han}/u.test(text) || untranslatable, `${key}: ${text}`).toBe(true);
    }
  });
});
