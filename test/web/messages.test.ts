/**
 * The web page's translations: every namespace has the same keys in English and
 * Chinese with the same {{placeholders}}; the step codes of the timeline are the ones
 * the kinds declare (every "Step:" of their catalogues, in the page, translated); the
 * solver's progress parameters are the ones the page reads.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAKEUP_EXAM_MESSAGES } from '../../src/exams/job-messages';
import { ENGINE_MESSAGES } from '../../src/engine/job-messages';
import type { MessageCatalog } from '../../src/i18n/message-catalog';
import { SHARED_JOB_MESSAGES } from '../../src/i18n/shared-job-messages';
import { AUTOMATIC_SCHEDULE_MESSAGES, SCHEDULE_PUBLISH_MESSAGES } from '../../src/scheduling/job-messages';
import { common } from '../../src/web/i18n/common';
import { KIND_STEPS } from '../../src/web/i18n/kind-steps';

const VIEWS = path.resolve(__dirname, '../../src/web/views');

type Tree = { [key: string]: string | Tree };

/** key path → placeholders of every string leaf. */
function leaves(tree: Tree, prefix = ''): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, value] of Object.entries(tree)) {
    const at = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'string') out.set(at, [...value.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!).sort());
    else for (const [k, v] of leaves(value, at)) out.set(k, v);
  }
  return out;
}

const lookup = (tree: Tree, key: string): unknown => key.split('.').reduce<unknown>((node, part) => (node as Tree | undefined)?.[part], tree);

async function namespaces(): Promise<[string, { en: Tree; 'zh-CN': Tree }][]> {
  const areas = fs.readdirSync(VIEWS).filter((area) => fs.existsSync(path.join(VIEWS, area, 'messages.ts')));
  const loaded = await Promise.all(areas.map(async (area) => [area, (await import(path.join(VIEWS, area, 'messages.ts'))).messages] as [string, { en: Tree; 'zh-CN': Tree }]));
  return [['common', common as unknown as { en: Tree; 'zh-CN': Tree }], ...loaded];
}

describe('the web page translations', () => {
  it('has every key in both languages, with the same placeholders', async () => {
    const all = await namespaces();
    expect(all.map(([name]) => name)).toEqual(expect.arrayContaining(['common', 'jobs']));
    for (const [name, messages] of all) {
      const en = leaves(messages.en);
      const zh = leaves(messages['zh-CN']);
      expect([...zh.keys()].sort(), `namespace ${name}`).toEqual([...en.keys()].sort());
      for (const [key, placeholders] of en) expect(zh.get(key), `${name}:${key}`).toEqual(placeholders);
      for (const [key] of zh) expect(lookup(messages['zh-CN'], key), `${name}:${key} is empty`).not.toBe('');
    }
  });

  it('shows each kind\'s declared steps in its timeline, translated', () => {
    const catalogs: Record<string, MessageCatalog> = {
      AUTOMATIC_SCHEDULE: AUTOMATIC_SCHEDULE_MESSAGES,
      SCHEDULE_PUBLISH: SCHEDULE_PUBLISH_MESSAGES,
      MAKEUP_EXAM_AUTO: MAKEUP_EXAM_MESSAGES,
    };
    for (const [kind, catalog] of Object.entries(catalogs)) {
      const declared = Object.entries(catalog)
        .filter(([, definition]) => definition.description.startsWith('Step:'))
        .map(([code]) => code);
      expect([...(KIND_STEPS[kind] ?? [])].sort(), kind).toEqual(declared.sort());
      for (const code of declared) {
        expect(lookup(common.en as unknown as Tree, `steps.${code}`), `en steps.${code}`).toEqual(expect.any(String));
        expect(lookup(common['zh-CN'] as unknown as Tree, `steps.${code}`), `zh-CN steps.${code}`).toEqual(expect.any(String));
      }
    }
  });

  it('translates messages by codes the service declares, with their parameters', () => {
    const server: MessageCatalog = { ...ENGINE_MESSAGES, ...SHARED_JOB_MESSAGES };
    const page = leaves(common.en.messages as unknown as Tree);
    for (const [key, placeholders] of page) {
      if (key === 'solver.progressNone') continue; // the page's wording of solver.progress without a solution
      const definition = server[key];
      expect(definition, `messages.${key} is not a code of the service`).toBeDefined();
      expect(Object.keys(definition!.example), `messages.${key}`).toEqual(expect.arrayContaining(placeholders));
    }
    expect(Object.keys(SHARED_JOB_MESSAGES['solver.progress'].example)).toEqual(expect.arrayContaining(['bestPenalty', 'hardViolations', 'moves']));
  });
});
