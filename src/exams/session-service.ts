/**
 * Make-up exam sessions and their parts: create, change and delete the session, its
 * periods, rooms, invigilators, exams, enrolments with scores and constraints. Every
 * mutation validates its whole input first (BAD_USER_INPUT naming the field), then
 * writes in one transaction that locks the session row and raises its revision, so an
 * arrangement computed meanwhile is not saved over the change. A duplicate code is a
 * CONFLICT; an unknown id is NOT_FOUND (or BAD_USER_INPUT when it is a field of an input).
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { findTerm, listCourses, listTeachers } from '../academic/academic-service';
import { keysetPage, keysetRootPage, type KeysetList, type Page } from '../academic/keyset-page';
import { requireCode, requireId, requireInt, requireName } from '../academic/validation';
import { badInput, conflict, notFound } from '../engine/errors';
import { takenAsConflict } from '../errors';
import {
  MakeupExam,
  MakeupExamConstraint,
  MakeupExamEnrolment,
  MakeupExamInvigilator,
  MakeupExamPeriod,
  MakeupExamRoom,
  MakeupExamSession,
  MakeupExamSessionFormat,
} from './entities';
import { PeriodConstraintKind } from './model/exam-model';
import type { ExamWeightings } from './model/weightings';
import { MAX_EXAM_MINUTES, MAX_PENALTY, MAX_ROOM_CAPACITY, requireDate, requireScore, requireTime, requireWeightings, type WeightingsInput } from './session-validation';

/** The weights of a new term session unless it names others (ITC-2007's usual magnitudes; no front load). */
export const DEFAULT_TERM_WEIGHTINGS: ExamWeightings = Object.freeze({
  twoInARow: 10,
  twoInADay: 5,
  periodSpread: 2,
  nonMixedDurations: 5,
  frontLoad: Object.freeze({ largestExams: 0, lastPeriods: 0, weight: 0 }),
  proximity: 0,
});
/** Most scores one `recordScores` call takes. */
export const MAX_SCORES_PER_CALL = 10_000;
/** Most periods an invigilator's availability lists. */
export const MAX_PERIODS_PER_SESSION = 1_000;

export interface CreateSessionInput {
  termId: string;
  code: string;
  name?: string | null;
  passingScore?: number | null;
  defaultExamDuration?: number | null;
  weightings?: WeightingsInput | null;
}
export interface UpdateSessionInput {
  code?: string | null;
  name?: string | null;
  passingScore?: number | null;
  defaultExamDuration?: number | null;
  weightings?: WeightingsInput | null;
}
export interface PeriodInput {
  sessionId: string;
  date?: string | null;
  startTime?: string | null;
  duration: number;
  penalty?: number | null;
}
export interface RoomInput {
  sessionId: string;
  code: string;
  name?: string | null;
  capacity: number;
  penalty?: number | null;
}
export interface InvigilatorInput {
  sessionId: string;
  teacherId: string;
  availablePeriodIds: readonly string[];
}
export interface ExamCourseInput {
  sessionId: string;
  courseId: string;
  duration?: number | null;
  roomExclusive?: boolean | null;
}
export interface ExamPatch {
  duration?: number | null;
  roomExclusive?: boolean | null;
}
export interface ScoreInput {
  courseId: string;
  studentCode: string;
  /** Null: no score recorded (not graded, withdrawn): not a failure. */
  score: number | null;
}
export interface ConstraintInput {
  sessionId: string;
  kind: PeriodConstraintKind;
  firstExamId: string;
  secondExamId: string;
}

type Patch<T> = { [K in keyof T]?: T[K] | null };

// ----- look-ups ---------------------------------------------------------------

/** Inside a transaction, `forUpdate` locks the row until commit (every edit does; the arrangement's save too). */
export async function findMakeupSession(em: EntityManager, id: string, forUpdate = false, field = 'sessionId'): Promise<MakeupExamSession> {
  const session = await em.findOne(MakeupExamSession, { id: requireId(field, id) }, forUpdate ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!session) throw notFound(`No make-up exam session with id ${id}`, { [field]: id });
  return session;
}

/** The row and its session, locked for an edit; an unknown id is NOT_FOUND naming `field`. */
async function findPart<T extends MakeupExamPeriod | MakeupExamRoom | MakeupExamInvigilator | MakeupExam | MakeupExamEnrolment | MakeupExamConstraint>(
  tx: EntityManager,
  entity: new () => T,
  field: string,
  id: string,
  noun: string,
): Promise<{ row: T; session: MakeupExamSession }> {
  const read = async (refresh: boolean) => {
    const populate = entity === (MakeupExamEnrolment as unknown) ? ['exam'] : [];
    const row = (await tx.findOne(entity as never, { id: requireId(field, id) } as never, { populate, refresh } as never)) as T | null;
    if (!row) throw notFound(`No ${noun} with id ${id}`, { [field]: id });
    return row;
  };
  const first = await read(false);
  const sessionId = first instanceof MakeupExamEnrolment ? first.exam.session.id : (first as Exclude<T, MakeupExamEnrolment>).session.id;
  const session = await findMakeupSession(tx, sessionId, true);
  // Read again under the session's lock: an edit of the row that committed while this one
  // waited for the lock is what this edit's checks must see, and a row deleted meanwhile
  // is NOT_FOUND (an update of it would change nothing and report success).
  return { row: await read(true), session };
}

/** The edit changed the session: solutions computed before it are out of date. */
function touched(session: MakeupExamSession): void {
  session.revision += 1;
  session.updatedAt = new Date();
}

function requireTermSession(session: MakeupExamSession, what: string): void {
  if (session.format !== MakeupExamSessionFormat.TERM) {
    throw badInput(`sessionId: session ${session.code} was imported (${session.format}); ${what} belong to a term session`, { field: 'sessionId' });
  }
}

// ----- pages (the API's lists: bounded reads, see academic/keyset-page.ts) -------------

const inSession = (table: string, noun: string, order: readonly string[]): KeysetList => ({ table, noun, parent: 'x.session_id', order });

/** Sessions by code. */
export const pageSessions = (em: EntityManager, page: Page) =>
  keysetRootPage(em, MakeupExamSession, { table: 'makeup_exam_sessions', noun: 'make-up exam session', order: ['code'] }, page);
/** Periods in time order. */
export const pagePeriods = (em: EntityManager, sessionIds: string | readonly string[], page: Page) =>
  keysetPage(em, MakeupExamPeriod, inSession('makeup_exam_periods', 'period of a make-up exam session', ['position', 'id']), sessionIds, page);
export const pageRooms = (em: EntityManager, sessionIds: string | readonly string[], page: Page) =>
  keysetPage(em, MakeupExamRoom, inSession('makeup_exam_rooms', 'room of a make-up exam session', ['position', 'id']), sessionIds, page);
export const pageExams = (em: EntityManager, sessionIds: string | readonly string[], page: Page) =>
  keysetPage(em, MakeupExam, inSession('makeup_exams', 'exam of a make-up exam session', ['position', 'id']), sessionIds, page);
/** Invigilators in no particular order (stable from page to page). */
export const pageInvigilators = (em: EntityManager, sessionIds: string | readonly string[], page: Page) =>
  keysetPage(em, MakeupExamInvigilator, inSession('makeup_exam_invigilators', 'invigilator of a make-up exam session', ['teacher_id']), sessionIds, page);
export const pageConstraints = (em: EntityManager, sessionIds: string | readonly string[], page: Page) =>
  keysetPage(em, MakeupExamConstraint, inSession('makeup_exam_constraints', 'constraint of a make-up exam session', ['id']), sessionIds, page);
/** An exam's enrolments by student code. */
export const pageEnrolments = (em: EntityManager, examIds: string | readonly string[], page: Page) =>
  keysetPage(em, MakeupExamEnrolment, { table: 'makeup_exam_enrolments', noun: 'enrolment of a make-up exam', parent: 'x.exam_id', order: ['student_code'] }, examIds, page);

/** The available periods of several invigilators, in time order. */
export async function availablePeriodsOf(em: EntityManager, invigilatorIds: readonly string[]): Promise<{ parent: string; row: MakeupExamPeriod }[]> {
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(
    `select p.*, ip.invigilator_id as page_parent from makeup_exam_invigilator_periods ip join makeup_exam_periods p on p.id = ip.period_id
     where ip.invigilator_id = any(string_to_array(?, ',')::uuid[]) order by p.position, p.id`,
    [invigilatorIds.map((id) => requireId('invigilatorId', id)).join(',')],
    'all',
    em.getTransactionContext(),
  );
  return rows.map(({ page_parent: parent, ...columns }) => ({ parent: String(parent), row: em.map(MakeupExamPeriod, columns as never) }));
}

// ----- sessions -----------------------------------------------------------------

export async function createMakeupSession(em: EntityManager, input: CreateSessionInput): Promise<MakeupExamSession> {
  const termId = requireId('termId', input.termId);
  const code = requireCode('code', input.code);
  const name = input.name == null ? code : requireName('name', input.name);
  const passingScore = input.passingScore == null ? undefined : requireScore('passingScore', input.passingScore);
  const defaultExamDuration = input.defaultExamDuration == null ? undefined : requireInt('defaultExamDuration', input.defaultExamDuration, 1, MAX_EXAM_MINUTES);
  const weightings = requireWeightings('weightings', input.weightings, DEFAULT_TERM_WEIGHTINGS);
  return takenAsConflict(em.transactional(async (tx) => {
    const term = await findTerm(tx, termId).catch((error: { code?: string }) => {
      if (error.code === 'NOT_FOUND') throw badInput(`termId: no academic term with id ${termId}`, { field: 'termId', value: termId });
      throw error;
    });
    await ensureSessionCodeFree(tx, code);
    const session = tx.create(MakeupExamSession, {
      code,
      name,
      format: MakeupExamSessionFormat.TERM,
      term,
      ...(passingScore === undefined ? {} : { passingScore }),
      ...(defaultExamDuration === undefined ? {} : { defaultExamDuration }),
      capacitated: true,
      roomSplitting: true,
      weightings,
    });
    await tx.flush();
    return session;
  }), SESSION_CODE_UNIQUE, () => sessionCodeTaken(code));
}

export async function ensureSessionCodeFree(em: EntityManager, code: string, exceptId?: string): Promise<void> {
  const existing = await em.findOne(MakeupExamSession, { code });
  if (existing && existing.id !== exceptId) throw sessionCodeTaken(code);
}

/** The constraint behind ensureSessionCodeFree: what an edit racing another for one code meets (see takenAsConflict). */
const SESSION_CODE_UNIQUE = 'makeup_exam_sessions_code_unique';
const sessionCodeTaken = (code: string) => conflict(`A make-up exam session with code ${code} already exists`, { field: 'code', value: code });

export async function updateMakeupSession(em: EntityManager, id: string, patch: UpdateSessionInput): Promise<MakeupExamSession> {
  requireId('id', id);
  const code = patch.code == null ? undefined : requireCode('code', patch.code);
  const name = patch.name == null ? undefined : requireName('name', patch.name);
  const passingScore = patch.passingScore == null ? undefined : requireScore('passingScore', patch.passingScore);
  const defaultExamDuration = patch.defaultExamDuration == null ? undefined : requireInt('defaultExamDuration', patch.defaultExamDuration, 1, MAX_EXAM_MINUTES);
  return takenAsConflict(em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, id, true, 'id');
    const weightings = patch.weightings == null ? undefined : requireWeightings('weightings', patch.weightings, session.weightings);
    if (code !== undefined && code !== session.code) {
      await ensureSessionCodeFree(tx, code, session.id);
      session.code = code;
    }
    if (name !== undefined) session.name = name;
    if (passingScore !== undefined) session.passingScore = passingScore;
    if (defaultExamDuration !== undefined) session.defaultExamDuration = defaultExamDuration;
    if (weightings !== undefined) session.weightings = weightings;
    touched(session);
    await tx.flush();
    return session;
  }), SESSION_CODE_UNIQUE, code === undefined ? null : () => sessionCodeTaken(code));
}

/** Deletes the session with everything in it (its arrangement too). */
export async function deleteMakeupSession(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, id, true, 'id');
    await tx.nativeDelete(MakeupExamSession, { id: session.id });
    return true;
  });
}

// ----- periods ------------------------------------------------------------------

function periodFields(input: Omit<PeriodInput, 'sessionId'>, toronto: boolean) {
  const date = input.date == null ? null : requireDate('date', input.date);
  const startTime = input.startTime == null ? null : requireTime('startTime', input.startTime);
  if (!toronto && (date === null || startTime === null)) {
    throw badInput(`${date === null ? 'date' : 'startTime'}: a period needs a date and a start time`, { field: date === null ? 'date' : 'startTime' });
  }
  if (toronto && (date !== null || startTime !== null)) {
    throw badInput(`${date !== null ? 'date' : 'startTime'}: the periods of a Toronto session have no date or time`, { field: date !== null ? 'date' : 'startTime' });
  }
  return {
    date,
    startTime,
    duration: requireInt('duration', input.duration, toronto ? 0 : 1, MAX_EXAM_MINUTES),
    penalty: input.penalty == null ? 0 : requireInt('penalty', input.penalty, 0, MAX_PENALTY),
  };
}

/** Periods stay in time order: after a change they are numbered again by date and start time. */
async function renumberPeriods(tx: EntityManager, session: MakeupExamSession): Promise<void> {
  const periods = await tx.find(MakeupExamPeriod, { session }, { orderBy: { position: 'asc', id: 'asc' } });
  const ordered = [...periods].sort(
    (a, b) => (a.date ?? '\uffff').localeCompare(b.date ?? '\uffff') || (a.startTime ?? '\uffff').localeCompare(b.startTime ?? '\uffff') || a.position - b.position,
  );
  ordered.forEach((p, i) => (p.position = i));
}

async function ensurePeriodFree(tx: EntityManager, session: MakeupExamSession, date: string | null, startTime: string | null, exceptId?: string): Promise<void> {
  if (date === null) return;
  const same = await tx.findOne(MakeupExamPeriod, { session, date, startTime, ...(exceptId ? { id: { $ne: exceptId } } : {}) });
  if (same) throw conflict(`The session already has a period on ${date} at ${startTime}`, { field: 'startTime', value: startTime });
}

export async function addPeriod(em: EntityManager, input: PeriodInput): Promise<MakeupExamPeriod> {
  requireId('sessionId', input.sessionId);
  return em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, input.sessionId, true);
    const fields = periodFields(input, session.format === MakeupExamSessionFormat.TORONTO);
    await ensurePeriodFree(tx, session, fields.date, fields.startTime);
    const count = await tx.count(MakeupExamPeriod, { session });
    if (count >= MAX_PERIODS_PER_SESSION) throw badInput(`sessionId: a session has at most ${MAX_PERIODS_PER_SESSION} periods`, { field: 'sessionId' });
    const period = tx.create(MakeupExamPeriod, { session, position: count, ...fields });
    await tx.flush();
    await renumberPeriods(tx, session);
    touched(session);
    await tx.flush();
    return period;
  });
}

export async function updatePeriod(em: EntityManager, id: string, patch: Patch<Omit<PeriodInput, 'sessionId'>>): Promise<MakeupExamPeriod> {
  requireId('id', id);
  return em.transactional(async (tx) => {
    const { row: period, session } = await findPart(tx, MakeupExamPeriod, 'id', id, 'make-up exam period');
    const fields = periodFields(
      {
        date: patch.date ?? period.date,
        startTime: patch.startTime ?? period.startTime,
        duration: patch.duration ?? period.duration,
        penalty: patch.penalty ?? period.penalty,
      },
      session.format === MakeupExamSessionFormat.TORONTO,
    );
    await ensurePeriodFree(tx, session, fields.date, fields.startTime, period.id);
    Object.assign(period, fields);
    await tx.flush();
    await renumberPeriods(tx, session);
    touched(session);
    await tx.flush();
    return period;
  });
}

export async function deletePeriod(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const { row: period, session } = await findPart(tx, MakeupExamPeriod, 'id', id, 'make-up exam period');
    tx.remove(period);
    await tx.flush();
    await renumberPeriods(tx, session);
    touched(session);
    await tx.flush();
    return true;
  });
}

// ----- rooms --------------------------------------------------------------------

function roomFields(input: Omit<RoomInput, 'sessionId'>) {
  const code = requireCode('code', input.code);
  return {
    code,
    name: input.name == null ? code : requireName('name', input.name),
    capacity: requireInt('capacity', input.capacity, 1, MAX_ROOM_CAPACITY),
    penalty: input.penalty == null ? 0 : requireInt('penalty', input.penalty, 0, MAX_PENALTY),
  };
}

async function ensureRoomCodeFree(tx: EntityManager, session: MakeupExamSession, code: string, exceptId?: string): Promise<void> {
  const same = await tx.findOne(MakeupExamRoom, { session, code });
  if (same && same.id !== exceptId) throw conflict(`The session already has a room with code ${code}`, { field: 'code', value: code });
}

export async function addRoom(em: EntityManager, input: RoomInput): Promise<MakeupExamRoom> {
  requireId('sessionId', input.sessionId);
  const fields = roomFields(input);
  return em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, input.sessionId, true);
    if (!session.capacitated) throw badInput(`sessionId: session ${session.code} is uncapacitated (Toronto): it has no rooms`, { field: 'sessionId' });
    await ensureRoomCodeFree(tx, session, fields.code);
    const last = await tx.findOne(MakeupExamRoom, { session }, { orderBy: { position: 'desc' } });
    const room = tx.create(MakeupExamRoom, { session, position: (last?.position ?? -1) + 1, ...fields });
    touched(session);
    await tx.flush();
    return room;
  });
}

export async function updateRoom(em: EntityManager, id: string, patch: Patch<Omit<RoomInput, 'sessionId'>>): Promise<MakeupExamRoom> {
  requireId('id', id);
  return em.transactional(async (tx) => {
    const { row: room, session } = await findPart(tx, MakeupExamRoom, 'id', id, 'make-up exam room');
    const fields = roomFields({ code: patch.code ?? room.code, name: patch.name ?? room.name, capacity: patch.capacity ?? room.capacity, penalty: patch.penalty ?? room.penalty });
    await ensureRoomCodeFree(tx, session, fields.code, room.id);
    Object.assign(room, fields);
    touched(session);
    await tx.flush();
    return room;
  });
}

export async function deleteRoom(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const { row, session } = await findPart(tx, MakeupExamRoom, 'id', id, 'make-up exam room');
    tx.remove(row);
    touched(session);
    await tx.flush();
    return true;
  });
}

// ----- invigilators ---------------------------------------------------------------

/** Adds a teacher of the session's term as an invigilator, or sets the periods of one already there. */
export async function setInvigilator(em: EntityManager, input: InvigilatorInput): Promise<MakeupExamInvigilator> {
  requireId('sessionId', input.sessionId);
  const teacherId = requireId('teacherId', input.teacherId);
  if (!Array.isArray(input.availablePeriodIds) || input.availablePeriodIds.length > MAX_PERIODS_PER_SESSION) {
    throw badInput(`availablePeriodIds must be a list of at most ${MAX_PERIODS_PER_SESSION} period ids`, { field: 'availablePeriodIds' });
  }
  const periodIds = [...new Set(input.availablePeriodIds.map((p, i) => requireId(`availablePeriodIds[${i}]`, p)))];
  return em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, input.sessionId, true);
    requireTermSession(session, 'invigilators');
    const teacher = (await listTeachers(tx, session.term!.id)).find((t) => t.id === teacherId);
    if (!teacher) throw badInput(`teacherId: no teacher with id ${teacherId} in the session's term`, { field: 'teacherId', value: teacherId });
    const periods = periodIds.length === 0 ? [] : await tx.find(MakeupExamPeriod, { id: { $in: periodIds }, session });
    const missing = periodIds.find((id) => !periods.some((p) => p.id === id));
    if (missing) throw badInput(`availablePeriodIds: no period with id ${missing} in this session`, { field: 'availablePeriodIds', value: missing });
    const invigilator: MakeupExamInvigilator =
      (await tx.findOne(MakeupExamInvigilator, { session, teacher }, { populate: ['availablePeriods'] })) ?? tx.create(MakeupExamInvigilator, { session, teacher });
    invigilator.availablePeriods.set(periods);
    touched(session);
    await tx.flush();
    return invigilator;
  });
}

export async function removeInvigilator(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const { row, session } = await findPart(tx, MakeupExamInvigilator, 'id', id, 'make-up exam invigilator');
    tx.remove(row);
    touched(session);
    await tx.flush();
    return true;
  });
}

// ----- exams, enrolments and scores ---------------------------------------------------

function examFields(patch: ExamPatch) {
  return {
    ...(patch.duration == null ? {} : { duration: requireInt('duration', patch.duration, 1, MAX_EXAM_MINUTES) }),
    ...(patch.roomExclusive == null ? {} : { roomExclusive: patch.roomExclusive === true }),
  };
}

async function nextExamPosition(tx: EntityManager, session: MakeupExamSession): Promise<number> {
  const last = await tx.findOne(MakeupExam, { session }, { orderBy: { position: 'desc' } });
  return (last?.position ?? -1) + 1;
}

/** The make-up exam of each course given (created when missing), for a term session. */
async function examsOfCourses(tx: EntityManager, session: MakeupExamSession, courseIds: readonly string[], field: string): Promise<Map<string, MakeupExam>> {
  const courses = new Map((await listCourses(tx, session.term!.id)).map((c) => [c.id, c]));
  const exams = new Map<string, MakeupExam>();
  for (const exam of await tx.find(MakeupExam, { session, course: { $in: [...new Set(courseIds)] } })) exams.set(exam.course!.id, exam);
  let position = await nextExamPosition(tx, session);
  for (const courseId of courseIds) {
    if (exams.has(courseId)) continue;
    const course = courses.get(courseId);
    if (!course) throw badInput(`${field}: no course with id ${courseId} in the session's term`, { field, value: courseId });
    const clash = await tx.findOne(MakeupExam, { session, code: course.code });
    if (clash) throw conflict(`The session already has an exam with code ${course.code}`, { field, value: courseId });
    exams.set(courseId, tx.create(MakeupExam, { session, position: position++, code: course.code, course }));
  }
  return exams;
}

/** Sets the make-up exam of a course of the term (its length, whether it needs a room to itself). */
export async function setExamCourse(em: EntityManager, input: ExamCourseInput): Promise<MakeupExam> {
  requireId('sessionId', input.sessionId);
  const courseId = requireId('courseId', input.courseId);
  const fields = examFields(input);
  return em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, input.sessionId, true);
    requireTermSession(session, 'course exams');
    const exam = (await examsOfCourses(tx, session, [courseId], 'courseId')).get(courseId)!;
    Object.assign(exam, fields);
    touched(session);
    await tx.flush();
    return exam;
  });
}

/** Changes an exam's length (null keeps it; a term exam without one uses the session's default) or room exclusivity. */
export async function updateExam(em: EntityManager, id: string, patch: ExamPatch): Promise<MakeupExam> {
  requireId('id', id);
  const fields = examFields(patch);
  return em.transactional(async (tx) => {
    const { row: exam, session } = await findPart(tx, MakeupExam, 'id', id, 'make-up exam');
    Object.assign(exam, fields);
    touched(session);
    await tx.flush();
    return exam;
  });
}

export async function deleteExam(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const { row, session } = await findPart(tx, MakeupExam, 'id', id, 'make-up exam');
    tx.remove(row);
    touched(session);
    await tx.flush();
    return true;
  });
}

/**
 * Records students' scores in courses of the term (a student's score in a course replaces
 * the one recorded before). Those below the session's passing score sit the course's
 * make-up exam. Returns how many were recorded.
 */
export async function recordScores(em: EntityManager, sessionId: string, scores: readonly ScoreInput[]): Promise<number> {
  requireId('sessionId', sessionId);
  if (!Array.isArray(scores) || scores.length === 0 || scores.length > MAX_SCORES_PER_CALL) {
    throw badInput(`scores must list 1–${MAX_SCORES_PER_CALL} scores`, { field: 'scores' });
  }
  const valid = scores.map((s, i) => ({
    courseId: requireId(`scores[${i}].courseId`, s.courseId),
    studentCode: requireCode(`scores[${i}].studentCode`, s.studentCode),
    score: s.score == null ? null : requireScore(`scores[${i}].score`, s.score),
  }));
  const seen = new Map<string, number>();
  valid.forEach((s, i) => {
    const key = `${s.courseId} ${s.studentCode}`;
    if (seen.has(key)) throw badInput(`scores[${i}]: student ${s.studentCode} is given twice for one course (first at scores[${seen.get(key)}])`, { field: `scores[${i}]` });
    seen.set(key, i);
  });
  return em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, sessionId, true);
    requireTermSession(session, 'scores');
    const courseIds = [...new Set(valid.map((s) => s.courseId))];
    const courses = new Set((await listCourses(tx, session.term!.id)).map((c) => c.id));
    const unknown = valid.findIndex((s) => !courses.has(s.courseId));
    if (unknown >= 0) throw badInput(`scores[${unknown}].courseId: no course with id ${valid[unknown].courseId} in the session's term`, { field: `scores[${unknown}].courseId` });
    const exams = await examsOfCourses(tx, session, courseIds, 'courseId');
    await tx.flush();
    const rows = valid.map((s) => ({ exam_id: exams.get(s.courseId)!.id, student_code: s.studentCode, score: s.score }));
    await tx.getConnection().execute(
      `insert into makeup_exam_enrolments (id, exam_id, student_code, score)
       select gen_random_uuid(), r.exam_id, r.student_code, r.score
       from jsonb_to_recordset(?::jsonb) as r(exam_id uuid, student_code text, score double precision)
       on conflict (exam_id, student_code) do update set score = excluded.score`,
      [JSON.stringify(rows)],
      'run',
      tx.getTransactionContext(),
    );
    touched(session);
    await tx.flush();
    return rows.length;
  });
}

export async function deleteEnrolment(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const { row, session } = await findPart(tx, MakeupExamEnrolment, 'id', id, 'make-up exam enrolment');
    tx.remove(row);
    touched(session);
    await tx.flush();
    return true;
  });
}

// ----- constraints --------------------------------------------------------------------

export async function addConstraint(em: EntityManager, input: ConstraintInput): Promise<MakeupExamConstraint> {
  requireId('sessionId', input.sessionId);
  if (!Object.values(PeriodConstraintKind).includes(input.kind)) {
    throw badInput(`kind must be one of ${Object.values(PeriodConstraintKind).join(', ')}`, { field: 'kind', value: input.kind });
  }
  const firstId = requireId('firstExamId', input.firstExamId);
  const secondId = requireId('secondExamId', input.secondExamId);
  if (firstId === secondId) throw badInput('secondExamId: a constraint is between two different exams', { field: 'secondExamId' });
  return em.transactional(async (tx) => {
    const session = await findMakeupSession(tx, input.sessionId, true);
    const exams = await tx.find(MakeupExam, { id: { $in: [firstId, secondId] }, session });
    for (const [field, id] of [['firstExamId', firstId], ['secondExamId', secondId]] as const) {
      if (!exams.some((e) => e.id === id)) throw badInput(`${field}: no exam with id ${id} in this session`, { field, value: id });
    }
    // Symmetric kinds are one row per pair, the smaller id first.
    const [a, b] = input.kind === PeriodConstraintKind.After || firstId < secondId ? [firstId, secondId] : [secondId, firstId];
    if (await tx.findOne(MakeupExamConstraint, { first: a, second: b, kind: input.kind })) {
      throw conflict(`The session already has this ${input.kind} constraint`, { field: 'kind' });
    }
    const constraint = tx.create(MakeupExamConstraint, { session, kind: input.kind, first: tx.getReference(MakeupExam, a), second: tx.getReference(MakeupExam, b) });
    touched(session);
    await tx.flush();
    return constraint;
  });
}

export async function deleteConstraint(em: EntityManager, id: string): Promise<boolean> {
  return em.transactional(async (tx) => {
    const { row, session } = await findPart(tx, MakeupExamConstraint, 'id', id, 'make-up exam constraint');
    tx.remove(row);
    touched(session);
    await tx.flush();
    return true;
  });
}
