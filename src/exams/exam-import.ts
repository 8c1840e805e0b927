/**
 * Imports an ITC-2007 examination instance (`.exam`) or a Toronto instance (`.crs` +
 * `.stu` + a number of periods) as a new make-up session, all in one transaction. Exam
 * and room ids are kept as the files give them (ITC-2007: positions; Toronto: the exam
 * ids), so the session's solution text checks against the original files with any
 * third-party validator.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireCode, requireInt } from '../academic/validation';
import { badInput, conflict, takenAsConflict } from '../errors';
import { MakeupExam, MakeupExamConstraint, MakeupExamPeriod, MakeupExamRoom, MakeupExamSession, MakeupExamSessionFormat } from './entities';
import { ExamFormatError } from './formats/exam-format-error';
import { parseItc2007Exam } from './formats/itc2007-exam-format';
import { MAX_TORONTO_PERIODS, parseToronto } from './formats/toronto-format';
import { ExamCapacityMode, PeriodConstraintKind, type ExamModel } from './model/exam-model';
import { DEFAULT_PASSING_SCORE } from './model/makeup-session';
import { ensureSessionCodeFree, MAX_PERIODS_PER_SESSION } from './session-service';
import { MAX_EXAM_MINUTES, MAX_PENALTY, MAX_ROOM_CAPACITY, MAX_WEIGHT } from './session-validation';

/** The published instances are at most ~650 KB; the API's body limit is usually lower still. */
export const MAX_IMPORT_BYTES = 5 * 1024 * 1024;
/** Enrolment rows per insert statement. */
const ENROLMENT_BATCH = 20_000;

export enum ExamFormat {
  /** `text` is an ITC-2007 examination track `.exam` file. */
  ITC2007_EXAM = 'ITC2007_EXAM',
  /** `text` is a Toronto `.crs` file, `studentsText` its `.stu`, `periods` the number of periods. */
  TORONTO = 'TORONTO',
}

export interface ImportExamSessionInput {
  format: ExamFormat;
  text: string;
  studentsText?: string | null;
  periods?: number | null;
  /** The session's code; by default the format and a digest of the files (the same files give the same code). */
  code?: string | null;
}

/** What a file is called in messages: the field holding it and its usual extension. */
const FILES = {
  exam: { field: 'text', file: '.exam' },
  crs: { field: 'text', file: '.crs' },
  stu: { field: 'studentsText', file: '.stu' },
} as const;

function requireText(field: string, file: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim().length === 0) throw badInput(`${field}: the ${file} file is empty`, { field });
  if (Buffer.byteLength(value) > MAX_IMPORT_BYTES) throw badInput(`${field}: the ${file} file is larger than ${MAX_IMPORT_BYTES} bytes`, { field });
  return value;
}

function parse(input: ImportExamSessionInput): ExamModel {
  try {
    if (input.format === ExamFormat.ITC2007_EXAM) {
      if (input.studentsText != null) throw badInput('studentsText: an ITC-2007 .exam file holds its students; give only text', { field: 'studentsText' });
      if (input.periods != null) throw badInput('periods: an ITC-2007 .exam file lists its periods; give only text', { field: 'periods' });
      return parseItc2007Exam(requireText(FILES.exam.field, FILES.exam.file, input.text), { file: FILES.exam.file });
    }
    if (input.format === ExamFormat.TORONTO) {
      const courses = requireText(FILES.crs.field, FILES.crs.file, input.text);
      if (input.studentsText == null) throw badInput('studentsText: a Toronto instance needs its .stu file', { field: 'studentsText' });
      const students = requireText(FILES.stu.field, FILES.stu.file, input.studentsText);
      if (input.periods == null) throw badInput('periods: a Toronto instance needs the number of periods', { field: 'periods' });
      const periods = requireInt('periods', input.periods, 1, Math.min(MAX_TORONTO_PERIODS, MAX_PERIODS_PER_SESSION));
      return parseToronto(courses, students, periods, { coursesFile: FILES.crs.file, studentsFile: FILES.stu.file });
    }
  } catch (error) {
    if (error instanceof ExamFormatError) {
      const field = error.file === FILES.stu.file ? FILES.stu.field : FILES.exam.field;
      throw badInput(`${field}: malformed ${error.message}`, { field, file: error.file, line: error.line });
    }
    throw error;
  }
  throw badInput(`format must be one of ${Object.values(ExamFormat).join(', ')}`, { field: 'format', value: input.format });
}

/** Values the session's columns hold within the limits every other edit keeps. */
function checkLimits(model: ExamModel, format: ExamFormat): void {
  if (model.periods.length > MAX_PERIODS_PER_SESSION) throw badInput(`text: a session has at most ${MAX_PERIODS_PER_SESSION} periods, the file has ${model.periods.length}`, { field: 'text' });
  // A Toronto period has no length (0); an ITC-2007 period's must be one an edit of it keeps.
  const tooShort = format === ExamFormat.TORONTO ? -1 : model.periods.findIndex((p) => p.duration < 1);
  if (tooShort >= 0) throw badInput(`text: period ${tooShort} lasts ${model.periods[tooShort].duration} minutes; a period lasts at least 1`, { field: 'text' });
  const tooLong = model.periods.findIndex((p) => p.duration > MAX_EXAM_MINUTES);
  if (tooLong >= 0) throw badInput(`text: period ${tooLong} lasts ${model.periods[tooLong].duration} minutes; at most ${MAX_EXAM_MINUTES}`, { field: 'text' });
  const longExam = model.exams.find((e) => e.duration > MAX_EXAM_MINUTES);
  if (longExam) throw badInput(`text: exam ${longExam.code} lasts ${longExam.duration} minutes; at most ${MAX_EXAM_MINUTES}`, { field: 'text' });
  const emptyRoom = model.rooms.find((r) => r.capacity < 1);
  if (emptyRoom) throw badInput(`text: room ${emptyRoom.code} has no seats`, { field: 'text' });
  // The parser takes any whole number; the columns hold what an edit of the row takes (an
  // edit checks the whole row again, so a value beyond it would make the row uneditable).
  const beyond = (what: string, value: number, max: number) => {
    if (value < 0 || value > max) throw badInput(`text: ${what} is ${value}; it must be from 0 to ${max}`, { field: 'text' });
  };
  model.periods.forEach((p, i) => beyond(`the penalty of period ${i}`, p.penalty, MAX_PENALTY));
  for (const r of model.rooms) {
    beyond(`the capacity of room ${r.code}`, r.capacity, MAX_ROOM_CAPACITY);
    beyond(`the penalty of room ${r.code}`, r.penalty, MAX_PENALTY);
  }
  const w = model.weightings;
  const weights: Array<[string, number]> = [
    ['TWOINAROW', w.twoInARow],
    ['TWOINADAY', w.twoInADay],
    ['PERIODSPREAD', w.periodSpread],
    ['NONMIXEDDURATIONS', w.nonMixedDurations],
    ['FRONTLOAD (exams)', w.frontLoad.largestExams],
    ['FRONTLOAD (periods)', w.frontLoad.lastPeriods],
    ['FRONTLOAD (weight)', w.frontLoad.weight],
    ['the proximity weight', w.proximity],
  ];
  for (const [name, value] of weights) beyond(`the weighting ${name}`, value, MAX_WEIGHT);
}

function defaultCode(input: ImportExamSessionInput): string {
  const digest = createHash('sha256').update(input.format).update('\0').update(input.text).update('\0').update(input.studentsText ?? '').update('\0').update(String(input.periods ?? ''));
  return `${input.format === ExamFormat.TORONTO ? 'toronto' : 'itc2007'}-${digest.digest('hex').slice(0, 10)}`;
}

/**
 * Parses the files and writes a new session with its periods, rooms, exams, students
 * and constraints. Malformed text is a BAD_USER_INPUT naming the field, the file and the
 * line; an existing session code is a CONFLICT; nothing is written in either case.
 */
export async function importExamSession(em: EntityManager, input: ImportExamSessionInput): Promise<MakeupExamSession> {
  const code = input.code == null ? undefined : requireCode('code', input.code);
  const model = parse(input);
  checkLimits(model, input.format);
  const sessionCode = code ?? defaultCode(input);
  return takenAsConflict(
    em.transactional(async (tx) => {
      await ensureSessionCodeFree(tx, sessionCode);
      const session = tx.create(MakeupExamSession, {
        code: sessionCode,
        name: input.code == null ? `${input.format} instance` : sessionCode,
        format: input.format === ExamFormat.TORONTO ? MakeupExamSessionFormat.TORONTO : MakeupExamSessionFormat.ITC2007_EXAM,
        term: null,
        passingScore: DEFAULT_PASSING_SCORE,
        capacitated: model.capacity === ExamCapacityMode.Capacitated,
        roomSplitting: model.roomSplitting,
        weightings: model.weightings,
      });
      model.periods.forEach((p, position) =>
        tx.create(MakeupExamPeriod, { session, position, date: p.date, startTime: p.start, duration: p.duration, penalty: p.penalty }),
      );
      model.rooms.forEach((r, position) => tx.create(MakeupExamRoom, { session, position, code: r.code, name: r.code, capacity: r.capacity, penalty: r.penalty }));
      const exams = model.exams.map((e, position) =>
        tx.create(MakeupExam, { session, position, code: e.code, course: null, duration: e.duration, roomExclusive: e.roomExclusive ?? false }),
      );
      const examByCode = new Map(exams.map((e) => [e.code, e]));
      // One row per constraint: self-references and repeats of the published files say nothing more.
      const seen = new Set<string>();
      for (const c of model.constraints) {
        let [a, b] = [examByCode.get(c.first)!, examByCode.get(c.second)!];
        if (a === b) continue;
        if (c.kind !== PeriodConstraintKind.After && b.id < a.id) [a, b] = [b, a];
        const key = `${c.kind} ${a.id} ${b.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        tx.create(MakeupExamConstraint, { session, kind: c.kind, first: a, second: b });
      }
      await tx.flush();
      const rows = model.exams.flatMap((e) => [...new Set(e.students)].map((student) => ({ exam_id: examByCode.get(e.code)!.id, student_code: student })));
      for (let i = 0; i < rows.length; i += ENROLMENT_BATCH) {
        await tx.getConnection().execute(
          `insert into makeup_exam_enrolments (id, exam_id, student_code, score)
           select gen_random_uuid(), r.exam_id, r.student_code, null
           from jsonb_to_recordset(?::jsonb) as r(exam_id uuid, student_code text)`,
          [JSON.stringify(rows.slice(i, i + ENROLMENT_BATCH))],
          'run',
          tx.getTransactionContext(),
        );
      }
      return session;
    }),
    'makeup_exam_sessions_code_unique',
    () => conflict(`A make-up exam session with code ${sessionCode} already exists; give another code`, { field: 'code', value: sessionCode }),
  );
}
