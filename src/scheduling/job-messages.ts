import { Locale } from '../i18n/locale';
import { message, type MessageCatalog } from '../i18n/message-catalog';
import { SHARED_JOB_MESSAGES } from '../i18n/shared-job-messages';

/**
 * What the AUTOMATIC_SCHEDULE job says: its steps (`schedule.<step>`), messages and
 * failures, each a stable code with named parameters and its sentence in every locale.
 */
export const AUTOMATIC_SCHEDULE_MESSAGES = {
  ...SHARED_JOB_MESSAGES,
  'schedule.loading-term': message({
    description: 'Step: reading the term (courses, rooms, curricula) and the plan.',
    example: {},
    sentences: { [Locale.EN]: () => 'Loading the term', [Locale.ZH_CN]: () => '加载学期数据' },
  }),
  'schedule.building-model': message({
    description: 'Step: turning the term into the timetabling model.',
    example: {},
    sentences: { [Locale.EN]: () => 'Building the model', [Locale.ZH_CN]: () => '构建排课模型' },
  }),
  'schedule.constructing': message({
    description: 'Step: the solver builds a first complete timetable.',
    example: {},
    sentences: { [Locale.EN]: () => 'Constructing', [Locale.ZH_CN]: () => '构造初始课表' },
  }),
  'schedule.optimising': message({
    description: 'Step: the solver improves the timetable until the time limit (messages: `solver.progress`).',
    example: {},
    sentences: { [Locale.EN]: () => 'Optimising', [Locale.ZH_CN]: () => '优化课表' },
  }),
  'schedule.saving': message({
    description: 'Step: saving the timetable into the plan.',
    example: {},
    sentences: { [Locale.EN]: () => 'Saving the plan', [Locale.ZH_CN]: () => '保存排课方案' },
  }),
  'schedule.model-size': message({
    description: 'The size of what is scheduled: `courses`, `rooms`, and `lockedLectures` kept where they are.',
    example: { courses: 30, rooms: 6, lockedLectures: 2 },
    sentences: {
      [Locale.EN]: (p) => `${p.courses} courses, ${p.rooms} rooms, ${p.lockedLectures} locked lectures`,
      [Locale.ZH_CN]: (p) => `${p.courses} 门课程，${p.rooms} 间教室，${p.lockedLectures} 节锁定课`,
    },
  }),
  'schedule.plan-missing': message({
    description: 'Failure: the plan `planId` was deleted before the job ran.',
    example: { planId: '0b6f7f4e-5a7e-4c55-9f3e-2b1d1c7f8a90' },
    sentences: {
      [Locale.EN]: (p) => `Schedule plan ${p.planId} no longer exists`,
      [Locale.ZH_CN]: (p) => `排课方案 ${p.planId} 已不存在`,
    },
  }),
  'schedule.plan-not-draft': message({
    description: 'Failure: plan `planName` is in status `status` (PUBLISHED or ARCHIVED); only a DRAFT can be scheduled.',
    example: { planName: 'Autumn draft', status: 'PUBLISHED' },
    sentences: {
      [Locale.EN]: (p) => `Plan "${p.planName}" is ${p.status} now; only a DRAFT can be scheduled (copy it to make a new draft)`,
      [Locale.ZH_CN]: (p) => `方案“${p.planName}”当前状态为 ${p.status}，只有草稿（DRAFT）可以排课（可复制为新草稿）`,
    },
  }),
  'schedule.term-infeasible': message({
    description: 'Failure: the data of term `termCode` cannot be timetabled; `detail` says why (in English).',
    example: { termCode: '2026-AUTUMN', detail: 'course C1 has more lectures than the week has periods' },
    sentences: {
      [Locale.EN]: (p) => `Term ${p.termCode} cannot be timetabled as it is: ${p.detail}`,
      [Locale.ZH_CN]: (p) => `学期 ${p.termCode} 的数据目前无法排课：${p.detail}`,
    },
  }),
  'schedule.plan-deleted': message({
    description: 'Failure: the plan `planId` was deleted while the solver ran; nothing was saved.',
    example: { planId: '0b6f7f4e-5a7e-4c55-9f3e-2b1d1c7f8a90' },
    sentences: {
      [Locale.EN]: (p) => `Schedule plan ${p.planId} was deleted during the solve`,
      [Locale.ZH_CN]: (p) => `排课方案 ${p.planId} 在求解期间被删除`,
    },
  }),
  'schedule.plan-status-changed': message({
    description: 'Failure: plan `planName` became `status` while the solver ran; the result was not saved.',
    example: { planName: 'Autumn draft', status: 'PUBLISHED' },
    sentences: {
      [Locale.EN]: (p) => `Plan "${p.planName}" became ${p.status} during the solve; the result was not saved`,
      [Locale.ZH_CN]: (p) => `方案“${p.planName}”在求解期间变为 ${p.status}，结果未保存`,
    },
  }),
  'schedule.locks-changed': message({
    description: 'Failure: the locked lectures of plan `planName` changed while the solver ran; start again.',
    example: { planName: 'Autumn draft' },
    sentences: {
      [Locale.EN]: (p) => `The locked lectures of plan "${p.planName}" changed during the solve; start the schedule again`,
      [Locale.ZH_CN]: (p) => `方案“${p.planName}”的锁定课在求解期间有改动，请重新开始排课`,
    },
  }),
  'schedule.term-changed': message({
    description: 'Failure: term `termCode` changed (its week, courses, rooms, curricula or unavailability) while the solver ran; the result was not saved (start again).',
    example: { termCode: '2026-AUTUMN' },
    sentences: {
      [Locale.EN]: (p) => `Term ${p.termCode} changed during the solve (its week, courses, rooms, curricula or unavailability); the result was not saved: start the schedule again`,
      [Locale.ZH_CN]: (p) => `学期 ${p.termCode} 在求解期间有改动（周课表、课程、教室、课程组或不可用时间），结果未保存，请重新开始排课`,
    },
  }),
} satisfies MessageCatalog;

/** What the SCHEDULE_PUBLISH job says (codes `publish.*`). */
export const SCHEDULE_PUBLISH_MESSAGES = {
  'publish.validating': message({
    description: 'Step: checking the plan has no hard violation.',
    example: {},
    sentences: { [Locale.EN]: () => 'Validating the plan', [Locale.ZH_CN]: () => '校验方案' },
  }),
  'publish.publishing': message({
    description: 'Step: archiving the previous plan, publishing this one and building the published timetable, in one transaction.',
    example: {},
    sentences: { [Locale.EN]: () => 'Publishing the plan', [Locale.ZH_CN]: () => '发布方案' },
  }),
  'publish.publishing-detail': message({
    description: 'What the publishing step does.',
    example: {},
    sentences: {
      [Locale.EN]: () => 'archiving the previous plan, publishing this one, building the published timetable',
      [Locale.ZH_CN]: () => '归档原发布方案，发布本方案，生成发布课表',
    },
  }),
  'publish.plan-missing': message({
    description: 'Failure: the plan `planId` was deleted before the job ran.',
    example: { planId: '0b6f7f4e-5a7e-4c55-9f3e-2b1d1c7f8a90' },
    sentences: {
      [Locale.EN]: (p) => `Schedule plan ${p.planId} no longer exists`,
      [Locale.ZH_CN]: (p) => `排课方案 ${p.planId} 已不存在`,
    },
  }),
  'publish.plan-infeasible': message({
    description: 'Failure: plan `planName` has `hardViolations` hard violations (the English message lists them); fix them first.',
    example: { planName: 'Autumn draft', hardViolations: 2 },
    sentences: {
      [Locale.EN]: (p) => `Plan "${p.planName}" cannot be published: it has ${p.hardViolations} hard violation(s)`,
      [Locale.ZH_CN]: (p) => `方案“${p.planName}”有 ${p.hardViolations} 处硬约束冲突，不能发布，请先修正`,
    },
  }),
  'publish.plan-deleted': message({
    description: 'Failure: the plan `planId` was deleted while it was being published.',
    example: { planId: '0b6f7f4e-5a7e-4c55-9f3e-2b1d1c7f8a90' },
    sentences: {
      [Locale.EN]: (p) => `Schedule plan ${p.planId} was deleted`,
      [Locale.ZH_CN]: (p) => `排课方案 ${p.planId} 已被删除`,
    },
  }),
  'publish.already-published': message({
    description: 'Failure: plan `planName` was already published.',
    example: { planName: 'Autumn draft' },
    sentences: {
      [Locale.EN]: (p) => `Plan "${p.planName}" is already published`,
      [Locale.ZH_CN]: (p) => `方案“${p.planName}”已经发布`,
    },
  }),
} satisfies MessageCatalog;
