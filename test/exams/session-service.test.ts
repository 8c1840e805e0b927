import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCourses, listTeachers } from '../../src/academic/academic-service';
import { MakeupExam, MakeupExamEnrolment, MakeupExamSession, MakeupExamSessionFormat } from '../../src/exams/entities';
import { ExamFormat, importExamSession } from '../../src/exams/exam-import';
import { PeriodConstraintKind } from '../../src/exams/model/exam-model';
import { loadSessionModel } from '../../src/exams/session-model';
import * as sessions from '../../src/exams/session-service';
import { createGeneratedTerm, generateTerm } from '../../src/scheduling/demo-data';
import { createTestDb, untilWaitingOnTransaction } from '../support/engine-harness';
import { refused } from '../support/refused';
import { TINY_CRS, TINY_EXAM, TINY_STU } from './tiny-instances';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
const em = () => ctx.db.orm.em.fork();

beforeAll(async () => {
  ctx = await createTestDb('exam_sessions');
});
afterAll(async () => {
  await ctx.close();
});

async function counts(): Promise<Record<string, number>> {
  const { rows } = await ctx.db.pool.query(
    `select (select count(*) from makeup_exam_sessions)::int as sessions, (select count(*) from makeup_exams)::int as exams,
            (select count(*) from makeup_exam_enrolments)::int as enrolments, (select count(*) from makeup_exam_periods)::int as periods`,
  );
  return rows[0];
}

describe('importing a session', () => {
  it('an ITC-2007 .exam file becomes a session with its periods, rooms, exams, students, constraints and weights', async () => {
    const session = await importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: TINY_EXAM, code: 'tiny-itc' });
    expect(session).toMatchObject({ code: 'tiny-itc', format: MakeupExamSessionFormat.ITC2007_EXAM, capacitated: true, roomSplitting: false });
    const data = await loadSessionModel(em(), session.id);
    expect(data.model.periods).toHaveLength(4);
    expect(data.model.periods[1]).toEqual({ date: '2026-07-01', start: '13:00:00', duration: 120, penalty: 5 });
    expect(data.model.rooms).toEqual([
      { code: '0', capacity: 3, penalty: 0 },
      { code: '1', capacity: 2, penalty: 10 },
    ]);
    expect(data.model.exams.map((e) => [e.code, e.duration, [...e.students].sort(), e.roomExclusive])).toEqual([
      ['0', 120, ['1', '2', '3'], false],
      ['1', 60, ['3', '4'], false],
      ['2', 120, ['5'], true],
      ['3', 90, ['1', '5'], false],
    ]);
    expect(data.model.constraints.map((c) => `${c.first} ${c.kind} ${c.second}`).sort()).toEqual(['0 AFTER 1', expect.stringMatching(/^(2 DIFFERENT_PERIOD 3|3 DIFFERENT_PERIOD 2)$/)].sort());
    expect(data.model.weightings).toEqual({ twoInARow: 7, twoInADay: 5, periodSpread: 2, nonMixedDurations: 10, frontLoad: { largestExams: 1, lastPeriods: 1, weight: 5 }, proximity: 0 });
  });

  it('a Toronto pair becomes an uncapacitated session with the given number of periods; the same files twice are a CONFLICT', async () => {
    const session = await importExamSession(em(), { format: ExamFormat.TORONTO, text: TINY_CRS, studentsText: TINY_STU, periods: 3 });
    expect(session.code).toMatch(/^toronto-[0-9a-f]{10}$/);
    const data = await loadSessionModel(em(), session.id);
    expect(data.model.capacity).toBe('UNCAPACITATED');
    expect(data.model.periods).toHaveLength(3);
    expect(data.model.exams.map((e) => e.code)).toEqual(['0001', '0002', '0003']);
    expect(data.model.weightings.proximity).toBe(1);
    await refused(importExamSession(em(), { format: ExamFormat.TORONTO, text: TINY_CRS, studentsText: TINY_STU, periods: 3 }), 'CONFLICT', /already exists/);
  });

  it('malformed files are BAD_USER_INPUT naming the field, file and line, and nothing is written', async () => {
    const before = await counts();
    await refused(importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: TINY_EXAM.replace('60, 3, 4', '60, 3, x') }), 'BAD_USER_INPUT', /^text: malformed \.exam line 3: a student id of exam 1 must be a whole number/);
    await refused(importExamSession(em(), { format: ExamFormat.TORONTO, text: TINY_CRS, studentsText: `${TINY_STU}0009\n`, periods: 3 }), 'BAD_USER_INPUT', /^studentsText: malformed \.stu line 5: exam 0009 is not in \.crs/);
    await refused(importExamSession(em(), { format: ExamFormat.TORONTO, text: TINY_CRS, studentsText: TINY_STU }), 'BAD_USER_INPUT', /periods: a Toronto instance needs the number of periods/);
    await refused(importExamSession(em(), { format: ExamFormat.TORONTO, text: TINY_CRS, periods: 3 }), 'BAD_USER_INPUT', /studentsText/);
    await refused(importExamSession(em(), { format: ExamFormat.TORONTO, text: TINY_CRS, studentsText: TINY_STU, periods: 0 }), 'BAD_USER_INPUT', /periods must be an integer from 1/);
    await refused(importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: '  ' }), 'BAD_USER_INPUT', /text: the \.exam file is empty/);
    await refused(importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: TINY_EXAM, code: 'has blank' }), 'BAD_USER_INPUT', /code must not contain blanks/);
    await refused(importExamSession(em(), { format: 'XLS' as ExamFormat, text: TINY_EXAM }), 'BAD_USER_INPUT', /format must be one of/);
    // Whole numbers beyond what an edit of the row takes: past an int column, or stored and then refused by every later edit of the row.
    const beyond: Array<[string, RegExp]> = [
      [TINY_EXAM.replace('[Rooms:2]\n3, 0', '[Rooms:2]\n3000000000, 0'), /^text: the capacity of room 0 is 3000000000; it must be from 0 to 1000000$/],
      [TINY_EXAM.replace('[Rooms:2]\n3, 0', '[Rooms:2]\n2000000, 0'), /^text: the capacity of room 0 is 2000000/],
      [TINY_EXAM.replace('2, 10\n[PeriodHard', '2, 5000000\n[PeriodHard'), /^text: the penalty of room 1 is 5000000; it must be from 0 to 1000000$/],
      [TINY_EXAM.replace('13:00:00, 120, 5', '13:00:00, 120, 5000000'), /^text: the penalty of period 1 is 5000000/],
      [TINY_EXAM.replace('13:00:00, 120, 5', '13:00:00, 0, 5'), /^text: period 1 lasts 0 minutes; a period lasts at least 1$/],
      [TINY_EXAM.replace('TWOINAROW, 7', 'TWOINAROW, 3000000000'), /^text: the weighting TWOINAROW is 3000000000/],
    ];
    for (const [text, message] of beyond) await refused(importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text }), 'BAD_USER_INPUT', message);
    expect(await counts()).toEqual(before);
  });
});

describe('a term session', () => {
  it('is built from the term: periods, rooms, invigilators, scores and constraints compile to a model of its failed courses', async () => {
    const { term } = await createGeneratedTerm(em(), generateTerm({ courses: 6, rooms: 2, curricula: 2, teachers: 4, days: 5, periodsPerDay: 4 }, 3, 'EXAM-TERM-1'));
    const courses = await listCourses(em(), term.id);
    const teachers = await listTeachers(em(), term.id);
    const session = await sessions.createMakeupSession(em(), { termId: term.id, code: 'MU-1', passingScore: 50 });
    expect(session).toMatchObject({ format: 'TERM', passingScore: 50, defaultExamDuration: 120, capacitated: true, roomSplitting: true });
    // Added out of order; they are kept in time order.
    const late = await sessions.addPeriod(em(), { sessionId: session.id, date: '2027-01-11', startTime: '14:00', duration: 120 });
    const early = await sessions.addPeriod(em(), { sessionId: session.id, date: '2027-01-11', startTime: '09:00', duration: 90, penalty: 3 });
    await sessions.addRoom(em(), { sessionId: session.id, code: 'A101', capacity: 30 });
    const invigilator = await sessions.setInvigilator(em(), { sessionId: session.id, teacherId: teachers[0].id, availablePeriodIds: [late.id] });
    await sessions.setExamCourse(em(), { sessionId: session.id, courseId: courses[1].id, duration: 60 });
    expect(await sessions.recordScores(em(), session.id, [
      { courseId: courses[0].id, studentCode: 'S1', score: 40 },
      { courseId: courses[0].id, studentCode: 'S2', score: 70 },
      { courseId: courses[1].id, studentCode: 'S1', score: 49.5 },
      { courseId: courses[2].id, studentCode: 'S3', score: null },
    ])).toBe(4);
    // A second score for the same enrolment replaces the first.
    await sessions.recordScores(em(), session.id, [{ courseId: courses[0].id, studentCode: 'S2', score: 10 }]);
    const data = await loadSessionModel(em(), session.id);
    expect(data.periods.map((p) => [p.id, p.position])).toEqual([
      [early.id, 0],
      [late.id, 1],
    ]);
    expect(data.model.exams.map((e) => [e.code, e.duration, [...e.students].sort()])).toEqual([
      [courses[1].code, 60, ['S1']],
      [courses[0].code, 120, ['S1', 'S2']],
    ]);
    expect(data.model.invigilators).toEqual([{ code: teachers[0].code, availablePeriods: [1] }]);
    const [e0, e1] = [data.examByCode.get(courses[0].code)!, data.examByCode.get(courses[1].code)!];
    await sessions.addConstraint(em(), { sessionId: session.id, kind: PeriodConstraintKind.DifferentPeriod, firstExamId: e0.id, secondExamId: e1.id });
    await refused(
      sessions.addConstraint(em(), { sessionId: session.id, kind: PeriodConstraintKind.DifferentPeriod, firstExamId: e1.id, secondExamId: e0.id }),
      'CONFLICT',
      /already has this DIFFERENT_PERIOD constraint/,
    );
    expect((await loadSessionModel(em(), session.id)).model.constraints).toHaveLength(1);
    // Every edit raised the revision.
    const revision = (await em().findOneOrFail(MakeupExamSession, session.id)).revision;
    await sessions.removeInvigilator(em(), invigilator.id);
    expect((await em().findOneOrFail(MakeupExamSession, session.id)).revision).toBe(revision + 1);
    expect(await em().count(MakeupExamEnrolment, { exam: { session: session.id } })).toBe(4);
    expect(await em().count(MakeupExam, { session: session.id })).toBe(3);

    // The parts change and go, each raising the revision once.
    const before = (await em().findOneOrFail(MakeupExamSession, session.id)).revision;
    const moved = await sessions.updatePeriod(em(), early.id, { date: '2027-01-12' });
    expect((await loadSessionModel(em(), session.id)).periods.map((p) => p.id)).toEqual([late.id, moved.id]);
    await sessions.updateExam(em(), e1.id, { roomExclusive: true });
    const [enrolment] = await em().find(MakeupExamEnrolment, { exam: e0.id, studentCode: 'S2' });
    await sessions.deleteEnrolment(em(), enrolment.id);
    const [constraint] = (await sessions.pageConstraints(em(), session.id, { first: 5 })).map((r) => r.row);
    await sessions.deleteConstraint(em(), constraint.id);
    await sessions.deletePeriod(em(), late.id);
    const after = await loadSessionModel(em(), session.id);
    expect(after.periods.map((p) => [p.id, p.position])).toEqual([[moved.id, 0]]);
    expect(after.model.exams.find((e) => e.code === e0.code)!.students).toEqual(['S1']);
    expect(after.model.exams.find((e) => e.code === e1.code)!.roomExclusive).toBe(true);
    expect(after.model.constraints).toEqual([]);
    expect(after.session.revision).toBe(before + 5);
  });

  it('bad input is BAD_USER_INPUT naming the field, unknown ids NOT_FOUND, duplicates CONFLICT; nothing is written', async () => {
    const { term } = await createGeneratedTerm(em(), generateTerm({ courses: 3, rooms: 1, curricula: 1, teachers: 2, days: 5, periodsPerDay: 2 }, 4, 'EXAM-TERM-2'));
    const otherTerm = (await createGeneratedTerm(em(), generateTerm({ courses: 1, rooms: 1, curricula: 1, teachers: 1, days: 5, periodsPerDay: 2 }, 5, 'EXAM-TERM-3'))).term;
    const [other] = await listCourses(em(), otherTerm.id);
    const session = await sessions.createMakeupSession(em(), { termId: term.id, code: 'MU-2' });
    const imported = await importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: TINY_EXAM, code: 'tiny-itc-2' });
    const before = await counts();
    const missing = '00000000-0000-4000-8000-000000000000';
    await refused(sessions.createMakeupSession(em(), { termId: term.id, code: 'MU-2' }), 'CONFLICT', /code MU-2 already exists/);
    await refused(sessions.createMakeupSession(em(), { termId: missing, code: 'MU-X' }), 'BAD_USER_INPUT', /termId: no academic term/);
    await refused(sessions.createMakeupSession(em(), { termId: term.id, code: 'MU-X', passingScore: -1 }), 'BAD_USER_INPUT', /passingScore must be a number from 0/);
    await refused(sessions.createMakeupSession(em(), { termId: term.id, code: 'MU-X', weightings: { twoInARow: -2 } }), 'BAD_USER_INPUT', /weightings.twoInARow must be an integer/);
    await refused(sessions.addPeriod(em(), { sessionId: session.id, date: '2027-02-30', startTime: '09:00', duration: 60 }), 'BAD_USER_INPUT', /date must be a date YYYY-MM-DD/);
    await refused(sessions.addPeriod(em(), { sessionId: session.id, date: '2027-02-03', startTime: '25:00', duration: 60 }), 'BAD_USER_INPUT', /startTime must be a time/);
    await refused(sessions.addPeriod(em(), { sessionId: session.id, startTime: '09:00', duration: 60 }), 'BAD_USER_INPUT', /date: a period needs a date and a start time/);
    await refused(sessions.addPeriod(em(), { sessionId: session.id, date: '2027-02-03', startTime: '09:00', duration: 0 }), 'BAD_USER_INPUT', /duration must be an integer from 1/);
    await refused(sessions.addPeriod(em(), { sessionId: missing, date: '2027-02-03', startTime: '09:00', duration: 60 }), 'NOT_FOUND', /No make-up exam session/);
    await refused(sessions.addRoom(em(), { sessionId: session.id, code: 'R1', capacity: 0 }), 'BAD_USER_INPUT', /capacity must be an integer from 1/);
    await refused(sessions.setInvigilator(em(), { sessionId: session.id, teacherId: missing, availablePeriodIds: [] }), 'BAD_USER_INPUT', /teacherId: no teacher/);
    await refused(sessions.setInvigilator(em(), { sessionId: imported.id, teacherId: missing, availablePeriodIds: [] }), 'BAD_USER_INPUT', /was imported \(ITC2007_EXAM\); invigilators belong to a term session/);
    await refused(sessions.recordScores(em(), session.id, []), 'BAD_USER_INPUT', /scores must list 1–/);
    await refused(sessions.recordScores(em(), session.id, [{ courseId: other.id, studentCode: 'S1', score: 1 }]), 'BAD_USER_INPUT', /scores\[0\]\.courseId: no course/);
    await refused(sessions.recordScores(em(), session.id, [{ courseId: missing, studentCode: 'S 1', score: 1 }]), 'BAD_USER_INPUT', /scores\[0\]\.studentCode must not contain blanks/);
    await refused(sessions.recordScores(em(), session.id, [{ courseId: missing, studentCode: 'S1', score: 1001 }]), 'BAD_USER_INPUT', /scores\[0\]\.score must be a number/);
    await refused(sessions.addConstraint(em(), { sessionId: session.id, kind: 'SOON' as PeriodConstraintKind, firstExamId: missing, secondExamId: missing }), 'BAD_USER_INPUT', /kind must be one of/);
    await refused(sessions.updateExam(em(), missing, { duration: 30 }), 'NOT_FOUND', /No make-up exam with id/);
    await refused(sessions.deleteRoom(em(), 'nope'), 'BAD_USER_INPUT', /id must be an id/);
    expect(await counts()).toEqual(before);
  });
});

describe('two edits racing for one session code', () => {
  it('the one that commits second gets CONFLICT, as when the code was taken before it looked', async () => {
    const session = await importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: TINY_EXAM, code: 'race-mine' });
    // The first edit: a copy of the session under the code, written and not yet committed.
    // The second's check does not see it; its update waits on the unique index until the first commits.
    const first = new pg.Client({ connectionString: ctx.db.url });
    await first.connect();
    try {
      await first.query('BEGIN');
      await first.query(
        `INSERT INTO makeup_exam_sessions
         SELECT (jsonb_populate_record(NULL::makeup_exam_sessions, to_jsonb(s) || jsonb_build_object('id', gen_random_uuid(), 'code', 'race-same'))).*
         FROM makeup_exam_sessions s WHERE s.id = $1`,
        [session.id],
      );
      const second = sessions.updateMakeupSession(em(), session.id, { code: 'race-same' });
      second.catch(() => undefined); // judged below; not an unhandled rejection should the wait fail first
      await untilWaitingOnTransaction(ctx.db.pool, 'the second edit waiting on the first');
      await first.query('COMMIT');
      await refused(second, 'CONFLICT', /^A make-up exam session with code race-same already exists$/);
    } finally {
      await first.end();
    }
    expect((await em().findOneOrFail(MakeupExamSession, session.id)).code).toBe('race-mine');
  });
});

describe('an edit that waited for the session while another edit of its row committed', () => {
  it("checks the row as the other left it: moving a period onto another's time is a CONFLICT; a row deleted meanwhile is NOT_FOUND", async () => {
    const session = await importExamSession(em(), { format: ExamFormat.ITC2007_EXAM, text: TINY_EXAM, code: 'race-rows' });
    const periods = (await sessions.pagePeriods(em(), session.id, { first: 10, after: null })).map(({ row }) => row);
    // TINY_EXAM: period 0 on 01:07:2026 at 09:00, period 3 on 02:07:2026 at 09:00.
    const [moved, , , taken] = periods;
    expect([moved!.date, moved!.startTime, taken!.date, taken!.startTime]).toEqual(['2026-07-01', '09:00:00', '2026-07-02', '09:00:00']);
    // The first edit holds the session (as every edit does) and moves period 0 to 2 July at 13:00.
    const first = new pg.Client({ connectionString: ctx.db.url });
    await first.connect();
    try {
      await first.query('BEGIN');
      await first.query('SELECT 1 FROM makeup_exam_sessions WHERE id = $1 FOR UPDATE', [session.id]);
      await first.query(`UPDATE makeup_exam_periods SET date = '2026-07-02', start_time = '13:00' WHERE id = $1`, [moved!.id]);
      // The second sets its start to 09:00: on 2 July, where period 3 is.
      const second = sessions.updatePeriod(em(), moved!.id, { startTime: '09:00' });
      second.catch(() => undefined);
      await untilWaitingOnTransaction(ctx.db.pool, 'the second edit waiting for the session');
      await first.query('COMMIT');
      await refused(second, 'CONFLICT', /^The session already has a period on 2026-07-02 at 09:00/);
    } finally {
      await first.end();
    }
    const gone = new pg.Client({ connectionString: ctx.db.url });
    await gone.connect();
    try {
      await gone.query('BEGIN');
      await gone.query('SELECT 1 FROM makeup_exam_sessions WHERE id = $1 FOR UPDATE', [session.id]);
      await gone.query('DELETE FROM makeup_exam_periods WHERE id = $1', [moved!.id]);
      const edit = sessions.updatePeriod(em(), moved!.id, { penalty: 7 });
      edit.catch(() => undefined);
      await untilWaitingOnTransaction(ctx.db.pool, 'the edit waiting for the session');
      await gone.query('COMMIT');
      await refused(edit, 'NOT_FOUND', /^No make-up exam period with id/);
    } finally {
      await gone.end();
    }
  });
});
