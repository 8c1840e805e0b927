/**
 * Imports an ITC-2007 `.ctt` instance as a new academic term, all in one transaction.
 * The file's codes are kept as they are, so a plan's solution text checks against the
 * original file with any third-party validator.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AcademicTerm, Course, Curriculum, Room, Teacher, Unavailability } from '../academic/entities';
import {
  MAX_CODE_LENGTH,
  MAX_COURSES_PER_TERM,
  MAX_DAYS_PER_WEEK,
  MAX_NAME_LENGTH,
  MAX_PERIODS_PER_DAY,
  MAX_ROOM_CAPACITY,
  MAX_STUDENTS,
  requireCode,
} from '../academic/validation';
import { badInput, conflict, takenAsConflict } from '../errors';
import { CttFormatError, parseCtt } from './ctt/ctt-format';
import type { CttModel } from './ctt/model';

/** Generous for the largest ITC instance (~30 KB); refuses pasted binaries. */
export const MAX_IMPORT_BYTES = 5 * 1024 * 1024;

/**
 * The control characters a field of the file may hide: every C0 control and DEL but the
 * blanks and line breaks that separate fields. No code or name needs one, and PostgreSQL
 * refuses NUL in text.
 */
const CONTROL_IN_FIELD = /[\u0000-\u0008\u000e-\u001f\u007f]/;

/** A control character inside a field is a BAD_USER_INPUT naming its line. */
function refuseControlCharacters(text: string): void {
  const found = CONTROL_IN_FIELD.exec(text);
  if (!found) return;
  const line = text.slice(0, found.index).split(/\r\n|\r|\n/).length;
  const code = `U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  throw badInput(`line ${line}: control character ${code}; codes and names must not contain control characters`, { field: 'text', line });
}

/** 1-based lines of the header keys and of the first token of every entry of a section. */
function lineIndex(text: string): { header: Map<string, number>; entries: Map<string, Map<string, number>> } {
  const header = new Map<string, number>();
  const entries = new Map<string, Map<string, number>>();
  let section: Map<string, number> | null = null;
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const first = raw.trim().split(/\s+/)[0];
    if (!first) return;
    if (/^[A-Za-z_]+:$/.test(first) && first.toUpperCase() === first) {
      section = new Map();
      entries.set(first, section);
    } else if (/^[A-Za-z_]+:$/.test(first)) {
      header.set(first, i + 1);
    } else if (section && !section.has(first)) {
      section.set(first, i + 1);
    }
  });
  return { header, entries };
}

function checkModel(text: string, model: CttModel): void {
  const lines = lineIndex(text);
  const at = (line: number | undefined, message: string, details: Record<string, unknown> = {}) =>
    badInput(`line ${line ?? 1}: ${message}`, { line: line ?? 1, ...details });
  // The term's name, as any edit of the term keeps it (and re-checks it on every update).
  if (model.name.length > MAX_NAME_LENGTH) throw at(lines.header.get('Name:'), `Name must be at most ${MAX_NAME_LENGTH} characters, found ${model.name.length}`);
  if (model.days > MAX_DAYS_PER_WEEK) throw at(lines.header.get('Days:'), `Days must be at most ${MAX_DAYS_PER_WEEK}, found ${model.days}`);
  if (model.periodsPerDay > MAX_PERIODS_PER_DAY) {
    throw at(lines.header.get('Periods_per_day:'), `Periods_per_day must be at most ${MAX_PERIODS_PER_DAY}, found ${model.periodsPerDay}`);
  }
  if (model.courses.length > MAX_COURSES_PER_TERM) {
    throw at(lines.header.get('Courses:'), `the file has ${model.courses.length} courses; a term has at most ${MAX_COURSES_PER_TERM}`);
  }
  const courseLines = lines.entries.get('COURSES:');
  for (const c of model.courses) {
    const line = courseLines?.get(c.code);
    if (c.code.length > MAX_CODE_LENGTH || c.teacher.length > MAX_CODE_LENGTH) throw at(line, `codes must be at most ${MAX_CODE_LENGTH} characters`);
    if (c.students > MAX_STUDENTS) throw at(line, `course ${c.code} has ${c.students} students; a course has at most ${MAX_STUDENTS}`);
    if (c.minWorkingDays > model.days) {
      throw at(line, `course ${c.code} asks for ${c.minWorkingDays} minimum working days but the week has ${model.days} days`);
    }
  }
  const roomLines = lines.entries.get('ROOMS:');
  for (const r of model.rooms) {
    const line = roomLines?.get(r.code);
    if (r.code.length > MAX_CODE_LENGTH) throw at(line, `codes must be at most ${MAX_CODE_LENGTH} characters`);
    if (r.capacity < 1) throw at(line, `room ${r.code} has capacity ${r.capacity}; a room holds at least 1 student`);
    if (r.capacity > MAX_ROOM_CAPACITY) throw at(line, `room ${r.code} has capacity ${r.capacity}; a room holds at most ${MAX_ROOM_CAPACITY} students`);
  }
  const curriculumLines = lines.entries.get('CURRICULA:');
  for (const q of model.curricula) {
    if (q.code.length > MAX_CODE_LENGTH) throw at(curriculumLines?.get(q.code), `codes must be at most ${MAX_CODE_LENGTH} characters`);
  }
}

/**
 * Parses `text` and writes a new term (code: `termCode`, else the file's `Name:`) with
 * its teachers, rooms, courses, curricula and unavailability. Malformed text is a
 * BAD_USER_INPUT naming the line; an existing term code is a CONFLICT; nothing is
 * written in either case.
 */
export async function importCurriculumTimetabling(em: EntityManager, text: string, termCode?: string | null): Promise<AcademicTerm> {
  if (typeof text !== 'string' || text.trim().length === 0) throw badInput('text: the .ctt instance text is empty', { field: 'text' });
  if (Buffer.byteLength(text) > MAX_IMPORT_BYTES) throw badInput(`text: larger than ${MAX_IMPORT_BYTES} bytes`, { field: 'text' });
  const code = termCode == null ? undefined : requireCode('termCode', termCode);
  refuseControlCharacters(text);
  let model: CttModel;
  try {
    model = parseCtt(text);
  } catch (error) {
    if (error instanceof CttFormatError) throw badInput(`Malformed .ctt text at ${error.message}`, { field: 'text', line: error.line });
    throw error;
  }
  checkModel(text, model);
  const termCodeFinal = code ?? requireCode('termCode (the Name: of the file)', model.name);
  const taken = () => conflict(`A term with code ${termCodeFinal} already exists; give another termCode`, { field: 'termCode', value: termCodeFinal });

  return takenAsConflict(
    em.transactional(async (tx) => {
      if (await tx.findOne(AcademicTerm, { code: termCodeFinal })) throw taken();
      const term = tx.create(AcademicTerm, {
        code: termCodeFinal,
        name: model.name,
        daysPerWeek: model.days,
        periodsPerDay: model.periodsPerDay,
        periodLabels: [],
      });
      const teachers = new Map<string, Teacher>();
      for (const c of model.courses) {
        if (!teachers.has(c.teacher)) teachers.set(c.teacher, tx.create(Teacher, { term, code: c.teacher, name: c.teacher }));
      }
      for (const r of model.rooms) tx.create(Room, { term, code: r.code, name: r.code, capacity: r.capacity });
      const courses = new Map<string, Course>();
      for (const c of model.courses) {
        courses.set(
          c.code,
          tx.create(Course, {
            term,
            code: c.code,
            name: c.code,
            teacher: teachers.get(c.teacher)!,
            lecturesPerWeek: c.lectures,
            minWorkingDays: c.minWorkingDays,
            students: c.students,
          }),
        );
      }
      for (const q of model.curricula) {
        const curriculum = tx.create(Curriculum, { term, code: q.code, name: q.code });
        curriculum.courses.set([...new Set(q.courses)].map((code) => courses.get(code)!));
      }
      const seen = new Set<string>();
      for (const u of model.unavailable) {
        const key = `${u.course} ${u.day} ${u.period}`;
        if (seen.has(key)) continue; // a repeated line says nothing new
        seen.add(key);
        tx.create(Unavailability, { term, course: courses.get(u.course)!, teacher: null, day: u.day, period: u.period });
      }
      await tx.flush();
      return term;
    }),
    'academic_terms_code_unique',
    taken,
  );
}
