import { Locale } from '../i18n/locale';
import { message, type MessageCatalog } from '../i18n/message-catalog';
import { SHARED_JOB_MESSAGES } from '../i18n/shared-job-messages';

/**
 * What the MAKEUP_EXAM_AUTO job says: its steps (`makeup.<step>`), messages and
 * failures, each a stable code with named parameters and its sentence in every locale.
 * The reasons a session cannot be arranged serve the start mutation's refusal too.
 */
export const MAKEUP_EXAM_MESSAGES = {
  ...SHARED_JOB_MESSAGES,
  'makeup.collecting': message({
    description: 'Step: reading the session and collecting failed enrolments.',
    example: {},
    sentences: { [Locale.EN]: () => 'Collecting failed enrolments', [Locale.ZH_CN]: () => '汇总不及格选课记录' },
  }),
  'makeup.building-graph': message({
    description: 'Step: building the conflict graph of exams sharing students.',
    example: {},
    sentences: { [Locale.EN]: () => 'Building the conflict graph', [Locale.ZH_CN]: () => '构建考试冲突图' },
  }),
  'makeup.assigning-periods': message({
    description: 'Step: the solver places exams into periods and rooms.',
    example: {},
    sentences: { [Locale.EN]: () => 'Assigning periods and rooms', [Locale.ZH_CN]: () => '安排考试时段与考场' },
  }),
  'makeup.optimising': message({
    description: 'Step: the solver improves the arrangement until the time limit (messages: `solver.progress`).',
    example: {},
    sentences: { [Locale.EN]: () => 'Optimising', [Locale.ZH_CN]: () => '优化考试安排' },
  }),
  'makeup.assigning-invigilators': message({
    description: 'Step: assigning invigilators to the rooms in use.',
    example: {},
    sentences: { [Locale.EN]: () => 'Assigning invigilators', [Locale.ZH_CN]: () => '安排监考教师' },
  }),
  'makeup.saving': message({
    description: 'Step: saving the arrangement.',
    example: {},
    sentences: { [Locale.EN]: () => 'Saving the arrangement', [Locale.ZH_CN]: () => '保存考试安排' },
  }),
  'makeup.model-size': message({
    description: 'The size of what is arranged: `exams`, `students`, `periods`, `rooms`.',
    example: { exams: 12, students: 140, periods: 10, rooms: 4 },
    sentences: {
      [Locale.EN]: (p) => `${p.exams} exams, ${p.students} students, ${p.periods} periods, ${p.rooms} rooms`,
      [Locale.ZH_CN]: (p) => `${p.exams} 场考试，${p.students} 名学生，${p.periods} 个时段，${p.rooms} 间考场`,
    },
  }),
  'makeup.invigilation-size': message({
    description: 'How many rooms in use need an invigilator: `rooms`.',
    example: { rooms: 7 },
    sentences: {
      [Locale.EN]: (p) => `${p.rooms} rooms in use to supervise`,
      [Locale.ZH_CN]: (p) => `需监考的考场场次 ${p.rooms} 个`,
    },
  }),
  'makeup.session-missing': message({
    description: 'Failure: the session `sessionId` was deleted before the job ran.',
    example: { sessionId: '0b6f7f4e-5a7e-4c55-9f3e-2b1d1c7f8a90' },
    sentences: {
      [Locale.EN]: (p) => `Make-up exam session ${p.sessionId} no longer exists`,
      [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionId} 已不存在`,
    },
  }),
  'makeup.no-periods': message({
    description: 'Refusal or failure: session `sessionCode` has no periods.',
    example: { sessionCode: 'MAKEUP-2026' },
    sentences: { [Locale.EN]: (p) => `session ${p.sessionCode} has no periods`, [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 没有考试时段` },
  }),
  'makeup.no-rooms': message({
    description: 'Refusal or failure: session `sessionCode` needs rooms and has none.',
    example: { sessionCode: 'MAKEUP-2026' },
    sentences: { [Locale.EN]: (p) => `session ${p.sessionCode} has no rooms`, [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 没有考场` },
  }),
  'makeup.no-failed-students': message({
    description: 'Refusal or failure: no student of session `sessionCode` scored below `passingScore`: nothing to arrange.',
    example: { sessionCode: 'MAKEUP-2026', passingScore: 60 },
    sentences: {
      [Locale.EN]: (p) => `no student of session ${p.sessionCode} scored below the passing score (${p.passingScore}): there is no make-up exam to arrange`,
      [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 没有低于及格线（${p.passingScore} 分）的学生，无需安排补考`,
    },
  }),
  'makeup.no-exams': message({
    description: 'Refusal or failure: session `sessionCode` has no exams.',
    example: { sessionCode: 'MAKEUP-2026' },
    sentences: { [Locale.EN]: (p) => `session ${p.sessionCode} has no exams`, [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 没有考试` },
  }),
  'makeup.no-invigilators': message({
    description: 'Refusal or failure: session `sessionCode` has no invigilators.',
    example: { sessionCode: 'MAKEUP-2026' },
    sentences: { [Locale.EN]: (p) => `session ${p.sessionCode} has no invigilators`, [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 没有监考教师` },
  }),
  'makeup.session-invalid': message({
    description: 'Refusal or failure: session `sessionCode` cannot be arranged as it is; `detail` says why (in English).',
    example: { sessionCode: 'MAKEUP-2026', detail: 'exam E1 needs more seats than any room has' },
    sentences: {
      [Locale.EN]: (p) => `session ${p.sessionCode} cannot be arranged as it is: ${p.detail}`,
      [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 的数据目前无法安排：${p.detail}`,
    },
  }),
  'makeup.session-deleted': message({
    description: 'Failure: session `sessionCode` was deleted during the arrangement.',
    example: { sessionCode: 'MAKEUP-2026' },
    sentences: {
      [Locale.EN]: (p) => `Make-up exam session ${p.sessionCode} was deleted during the arrangement`,
      [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 在安排期间被删除`,
    },
  }),
  'makeup.session-changed': message({
    description: 'Failure: session `sessionCode` was edited during the arrangement; the result was not saved (start it again).',
    example: { sessionCode: 'MAKEUP-2026' },
    sentences: {
      [Locale.EN]: (p) => `Make-up exam session ${p.sessionCode} changed during the arrangement; the result was not saved (start it again)`,
      [Locale.ZH_CN]: (p) => `补考场次 ${p.sessionCode} 在安排期间有改动，结果未保存（请重新开始）`,
    },
  }),
} satisfies MessageCatalog;
