import { describe, expect, it } from 'vitest';
import { ENGINE_MESSAGES } from '../../src/engine/job-messages';
import { MAKEUP_EXAM_MESSAGES } from '../../src/exams/job-messages';
import { MAKEUP_EXAM_STEPS, MakeupExamSteps } from '../../src/exams/makeup-exam-arrangement';
import { ALL_LOCALES, Locale } from '../../src/i18n/locale';
import { MESSAGE_CODE_PATTERN, MessageCatalogError, mergeCatalogs, message, renderMessage, say } from '../../src/i18n/message-catalog';
import { SHARED_JOB_MESSAGES } from '../../src/i18n/shared-job-messages';
import { JOB_KINDS, jobMessageCatalog, JobKindDeclarationError, type JobKindDescriptor } from '../../src/job-kind-descriptors';
import { ALL_JOB_KINDS } from '../../src/job-kinds';
import { AUTOMATIC_SCHEDULE_STEPS, AutomaticScheduleSteps } from '../../src/scheduling/automatic-schedule';
import { AUTOMATIC_SCHEDULE_MESSAGES } from '../../src/scheduling/job-messages';
import { SCHEDULE_PUBLISH_STEPS, SchedulePublishSteps } from '../../src/scheduling/schedule-publish';

const HAN = /[\u4e00-\u9fff]/;

describe('every declared job message code', () => {
  const catalog = jobMessageCatalog();
  const codes = Object.keys(catalog);

  it('the service declares the engine codes and every kind', () => {
    for (const code of Object.keys(ENGINE_MESSAGES)) expect(codes).toContain(code);
    for (const kind of ALL_JOB_KINDS) for (const code of Object.keys(JOB_KINDS[kind].messages)) expect(codes).toContain(code);
    expect(codes.length).toBeGreaterThan(40);
  });

  it.each(Object.entries(jobMessageCatalog()))('%s: a well-formed code, documented, with a sentence in English and in Chinese', (code, definition) => {
    expect(code).toMatch(MESSAGE_CODE_PATTERN);
    expect(definition.description.length).toBeGreaterThan(10);
    const sentences = Object.fromEntries(ALL_LOCALES.map((locale) => [locale, definition.sentences[locale](definition.example)]));
    expect(Object.keys(definition.sentences).sort()).toEqual([...ALL_LOCALES].sort());
    for (const sentence of Object.values(sentences)) {
      expect(sentence.trim().length).toBeGreaterThan(0);
      expect(sentence).not.toMatch(/undefined|NaN|\[object/);
    }
    expect(sentences[Locale.ZH_CN]).toMatch(HAN);
    expect(sentences[Locale.EN]).not.toMatch(HAN);
    // Every parameter of the example shows in the sentences (a parameter nobody renders is a mistake), except zeros a sentence leaves out.
    for (const [name, value] of Object.entries(definition.example)) {
      if (value === 0 || value === null) continue;
      expect(`${sentences[Locale.EN]} ${sentences[Locale.ZH_CN]}`, `${code}.${name}`).toContain(String(value));
    }
  });

  it('each kind declares the codes of its steps, and the steps keep their English sentences', () => {
    const kindSteps = [
      [JOB_KINDS.AUTOMATIC_SCHEDULE, AUTOMATIC_SCHEDULE_STEPS, AutomaticScheduleSteps],
      [JOB_KINDS.SCHEDULE_PUBLISH, SCHEDULE_PUBLISH_STEPS, SchedulePublishSteps],
      [JOB_KINDS.MAKEUP_EXAM_AUTO, MAKEUP_EXAM_STEPS, MakeupExamSteps],
    ] as const;
    for (const [descriptor, steps, english] of kindSteps) {
      for (const [key, step] of Object.entries(steps)) {
        expect(descriptor.messages[step.code], step.code).toBeDefined();
        expect(step.params).toBeNull();
        expect(english[key as keyof typeof english]).toBe(step.text);
      }
    }
    expect(AutomaticScheduleSteps).toEqual({
      LOADING: 'Loading the term',
      BUILDING: 'Building the model',
      CONSTRUCTING: 'Constructing',
      OPTIMISING: 'Optimising',
      SAVING: 'Saving the plan',
    });
  });

  it('both solver kinds share one solver.progress, whose best penalty is null before a complete solution', () => {
    expect(JOB_KINDS.AUTOMATIC_SCHEDULE.messages['solver.progress']).toBe(SHARED_JOB_MESSAGES['solver.progress']);
    expect(JOB_KINDS.MAKEUP_EXAM_AUTO.messages['solver.progress']).toBe(SHARED_JOB_MESSAGES['solver.progress']);
    const progress = (params: Parameters<typeof say<typeof AUTOMATIC_SCHEDULE_MESSAGES, 'solver.progress'>>[2]) =>
      say(AUTOMATIC_SCHEDULE_MESSAGES, 'solver.progress', params!);
    expect(progress({ bestPenalty: null, hardViolations: 0, moves: 12 })).toEqual({
      code: 'solver.progress',
      params: { bestPenalty: null, hardViolations: 0, moves: 12 },
      text: 'no complete solution yet, 12 moves',
    });
    expect(progress({ bestPenalty: 31, hardViolations: 2, moves: 900 }).text).toBe('best penalty 31, 2 hard violations, 900 moves');
    expect(say(MAKEUP_EXAM_MESSAGES, 'solver.progress', { bestPenalty: 1.25, hardViolations: 0, moves: 5, unplacedExams: 3 }).text).toBe(
      'best penalty 1.25, 3 exams unplaced, 5 moves',
    );
    const zh = SHARED_JOB_MESSAGES['solver.progress'].sentences[Locale.ZH_CN];
    expect(zh({ bestPenalty: null, hardViolations: 0, moves: 12 })).toBe('尚无完整解，已搜索 12 步');
    expect(zh({ bestPenalty: 31, hardViolations: 2, moves: 900 })).toBe('当前最优罚分 31，硬约束冲突 2 处，已搜索 900 步');
  });
});

describe('say and renderMessage', () => {
  const catalog = {
    'test.plain': message({ description: 'no parameters', example: {}, sentences: { [Locale.EN]: () => 'Plain', [Locale.ZH_CN]: () => '普通' } }),
    'test.count': message({
      description: 'one parameter',
      example: { n: 2 },
      sentences: { [Locale.EN]: (p) => `${p.n} things`, [Locale.ZH_CN]: (p) => `${p.n} 件事` },
    }),
    'test.throws': message({
      description: 'a sentence that cannot render',
      example: {},
      sentences: {
        [Locale.EN]: () => 'Fine in English',
        [Locale.ZH_CN]: () => {
          throw new Error('broken');
        },
      },
    }),
  };

  it('say gives the code, its parameters (null when none) and the English sentence', () => {
    expect(say(catalog, 'test.plain')).toEqual({ code: 'test.plain', params: null, text: 'Plain' });
    expect(say(catalog, 'test.count', { n: 3 })).toEqual({ code: 'test.count', params: { n: 3 }, text: '3 things' });
  });

  it('English is the stored sentence; Chinese is rendered from the code; anything unknown falls back to the stored sentence', () => {
    const stored = { code: 'test.count', params: { n: 4 }, text: '4 things, as written then' };
    expect(renderMessage(catalog, Locale.EN, stored)).toBe('4 things, as written then');
    expect(renderMessage(catalog, Locale.ZH_CN, stored)).toBe('4 件事');
    expect(renderMessage(catalog, Locale.ZH_CN, { code: null, params: null, text: 'from before codes' })).toBe('from before codes');
    expect(renderMessage(catalog, Locale.ZH_CN, { code: 'test.newer-than-this-server', params: null, text: 'Newer' })).toBe('Newer');
    expect(renderMessage(catalog, Locale.ZH_CN, { code: 'test.throws', params: null, text: 'Fine in English' })).toBe('Fine in English');
    expect(renderMessage(catalog, Locale.ZH_CN, { code: 'test.plain', params: ['not', 'an', 'object'], text: 'Plain' })).toBe('普通');
    expect(renderMessage(catalog, Locale.ZH_CN, { code: null, params: null, text: null })).toBeNull();
  });

  it('merging refuses a code declared twice differently or a malformed code; the same definition twice is one', () => {
    expect(Object.keys(mergeCatalogs(catalog, { 'test.plain': catalog['test.plain'] }))).toHaveLength(3);
    expect(() => mergeCatalogs(catalog, { 'test.plain': { ...catalog['test.plain'] } })).toThrow(MessageCatalogError);
    for (const bad of ['Test.plain', 'plain', 'test..x', 'test.under_score', 'test.x-', '.test']) {
      expect(() => mergeCatalogs({ [bad]: catalog['test.plain'] }), bad).toThrow(MessageCatalogError);
    }
  });

  it('the service refuses a kind that declares an engine code or redeclares another kind’s code', () => {
    const kind = (name: string, messages: JobKindDescriptor<string>['messages']) => ({ ...JOB_KINDS.SCHEDULE_PUBLISH, kind: name, messages }) as JobKindDescriptor<string>;
    expect(() => jobMessageCatalog({ A: kind('A', { 'job.mine': catalog['test.plain'] }) })).toThrow(JobKindDeclarationError);
    expect(() => jobMessageCatalog({ A: kind('A', { 'x.same': catalog['test.plain'] }), B: kind('B', { 'x.same': catalog['test.count'] }) })).toThrow(
      /x\.same is declared twice/,
    );
    expect(Object.keys(jobMessageCatalog({ A: kind('A', catalog), B: kind('B', { 'test.plain': catalog['test.plain'] }) }))).toContain('test.count');
  });
});
