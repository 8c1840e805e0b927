import { getNamedType, getNullableType, isListType, isObjectType, parse } from 'graphql';
import { buildApiSchema } from '../../src/api/graphql/build-schema';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCourses, listTeachers } from '../../src/academic/academic-service';
import type { JobEngine } from '../../src/engine/engine';
import { evaluateArrangement } from '../../src/exams/evaluation/evaluator';
import { parseItc2007Exam } from '../../src/exams/formats/itc2007-exam-format';
import { parseItc2007Solution } from '../../src/exams/formats/itc2007-solution-format';
import { parseToronto } from '../../src/exams/formats/toronto-format';
import { parseTorontoSolution } from '../../src/exams/formats/toronto-solution-format';
import { makeupExamArrangementRegistration } from '../../src/exams/makeup-exam-arrangement';
import { createGeneratedTerm, generateTerm } from '../../src/scheduling/demo-data';
import { collect, gql, startTestApiServer, wsClient, type TestApiServer } from '../api/support/api-server';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import { TINY_CRS, TINY_EXAM, TINY_STU } from './tiny-instances';

/**
 * The make-up exam vertical over the real API: HTTP for queries and mutations, graphql-ws
 * to watch the job, real PostgreSQL and engine (in-memory transport), JWT roles.
 */

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;

beforeAll(async () => {
  ctx = await createTestDb('exam_graphql');
  engine = buildEngine({ db: ctx.db, registrations: [makeupExamArrangementRegistration({ consumers: 2 })], settings: { attemptLimit: 1 } });
  await engine.start();
  server = await startTestApiServer({ engine, services: { orm: ctx.db.orm } });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

const doc = (source: string) => parse(source) as TypedDocumentNode<Record<string, any>, Record<string, unknown>>;
type Errors = { message: string; extensions?: Record<string, unknown> }[] | undefined;

async function run(source: string, variables: Record<string, unknown> = {}, token = server.tokens.scheduler) {
  const { body } = await gql(server, doc(source), variables, token);
  return { data: body.data as Record<string, any> | null | undefined, errors: body.errors as Errors };
}

async function sessionsCount(): Promise<number> {
  const { rows } = await ctx.db.pool.query('select count(*)::int as n from makeup_exam_sessions');
  return rows[0].n;
}

const IMPORT = `mutation($format: ExamFormat!, $text: String!, $studentsText: String, $periods: Int, $code: String) {
  importExamSession(format: $format, text: $text, studentsText: $studentsText, periods: $periods, code: $code) {
    id code format capacitated roomSplitting periods { position date startTime duration } rooms { code capacity } exams { code duration roomExclusive }
  } }`;
const START = `mutation($sessionId: ID!, $seed: Int) { startMakeupExamArrangement(input: { sessionId: $sessionId, timeLimitSeconds: 1, seed: $seed }) { id kind status ... on MakeupExamAutoJob { inputData session { code } } } }`;

/** Watches the job over graphql-ws until it ends; returns the events' statuses and steps. */
async function watch(jobId: string): Promise<{ status: string; currentStep: string | null }[]> {
  const client = wsClient(server, server.tokens.scheduler);
  try {
    const sub = collect(client, doc(`subscription($jobId: ID!) { jobProgress(jobId: $jobId) { status currentStep progress message } }`), { jobId });
    await sub.done;
    return sub.results.map((r) => r.data!.jobProgress);
  } finally {
    await client.dispose();
  }
}

describe('make-up exams over GraphQL', () => {
  it('imports an ITC-2007 .exam, arranges it (watched to SUCCEEDED), and exports a .sln that re-evaluates to the same cost', async () => {
    const imported = await run(IMPORT, { format: 'ITC2007_EXAM', text: TINY_EXAM, code: 'gql-itc' });
    expect(imported.errors).toBeUndefined();
    const session = imported.data!.importExamSession;
    expect(session).toMatchObject({ code: 'gql-itc', format: 'ITC2007_EXAM', capacitated: true, roomSplitting: false });
    expect(session.periods).toHaveLength(4);
    expect(session.periods[0]).toEqual({ position: 0, date: '2026-07-01', startTime: '09:00:00', duration: 120 });
    expect(session.rooms).toEqual([{ code: '0', capacity: 3 }, { code: '1', capacity: 2 }]);
    expect(session.exams.map((e: { code: string }) => e.code)).toEqual(['0', '1', '2', '3']);

    const started = await run(START, { sessionId: session.id, seed: 4 });
    expect(started.errors).toBeUndefined();
    const job = started.data!.startMakeupExamArrangement;
    expect(job).toMatchObject({ kind: 'MAKEUP_EXAM_AUTO', status: 'QUEUED', inputData: { sessionId: session.id, timeLimitSeconds: 1, seed: 4 }, session: { code: 'gql-itc' } });
    const events = await watch(job.id);
    expect(events.at(-1)!.status).toBe('SUCCEEDED');
    expect(events.map((e) => e.currentStep)).toContain('Optimising');

    const read = await run(
      `query($id: ID!, $job: ID!) {
        makeupExamSession(id: $id) { solutionText evaluation { hardViolations cost feasible current exams students hard { total conflicts } soft { total twoInARow } }
          arrangement { jobId seed hardViolations cost }
          sittings(first: 10) { id seats exam { code } period { position } room { code } invigilator { id } } }
        job(id: $job) { ... on MakeupExamAutoJob { arrangementResult { hardViolations cost exams unplacedCount stopReason hard { total } } } } }`,
      { id: session.id, job: job.id },
      server.tokens.viewer,
    );
    expect(read.errors).toBeUndefined();
    const s = read.data!.makeupExamSession;
    expect(s.evaluation).toMatchObject({ hardViolations: 0, feasible: true, current: true, exams: 4, students: 5 });
    expect(s.arrangement).toMatchObject({ jobId: job.id, seed: 4, hardViolations: 0, cost: s.evaluation.cost });
    expect(s.sittings).toHaveLength(4);
    expect(s.sittings.every((x: { room: unknown; invigilator: unknown }) => x.room !== null && x.invigilator === null)).toBe(true);
    // The viewer did not start the job: it is not theirs to see.
    expect(read.data!.job).toBeNull();
    const mine = await run(`query($job: ID!) { job(id: $job) { ... on MakeupExamAutoJob { arrangementResult { hardViolations cost exams unplacedCount } } } }`, { job: job.id });
    expect(mine.data!.job.arrangementResult).toMatchObject({ hardViolations: 0, cost: s.evaluation.cost, exams: 4, unplacedCount: 0 });

    const model = parseItc2007Exam(TINY_EXAM);
    const again = evaluateArrangement(model, parseItc2007Solution(s.solutionText, model));
    expect(again.hard.total).toBe(0);
    expect(again.soft.total).toBe(s.evaluation.cost);
  });

  it('imports a Toronto pair, arranges it and exports a .sol that re-evaluates to the same cost', async () => {
    const imported = await run(IMPORT, { format: 'TORONTO', text: TINY_CRS, studentsText: TINY_STU, periods: 4 });
    expect(imported.errors).toBeUndefined();
    const session = imported.data!.importExamSession;
    expect(session).toMatchObject({ format: 'TORONTO', capacitated: false, rooms: [] });
    const job = (await run(START, { sessionId: session.id })).data!.startMakeupExamArrangement;
    expect((await waitForJob(engine, job.id, undefined, 20_000)).status).toBe('SUCCEEDED');
    const read = await run(`query($id: ID!) { makeupExamSession(id: $id) { solutionText evaluation { hardViolations cost } sittings { room { code } exam { code } } } }`, { id: session.id });
    const s = read.data!.makeupExamSession;
    expect(s.sittings.every((x: { room: unknown }) => x.room === null)).toBe(true);
    expect(s.solutionText.trim().split('\n').map((line: string) => line.split(' ')[0])).toEqual(['0001', '0002', '0003']);
    const model = parseToronto(TINY_CRS, TINY_STU, 4);
    const again = evaluateArrangement(model, parseTorontoSolution(s.solutionText, model));
    expect(again.hard.total).toBe(0);
    expect(again.soft.total).toBeCloseTo(s.evaluation.cost, 12);
  });

  it('malformed files are BAD_USER_INPUT naming the field, file and line; nothing is written', async () => {
    const before = await sessionsCount();
    const bad = await run(IMPORT, { format: 'ITC2007_EXAM', text: TINY_EXAM.replace('[Rooms:2]', '[Rooms:3]') });
    expect(bad.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
    expect(bad.errors![0].message).toMatch(/^text: malformed \.exam line 11: \[Rooms:3\] declares 3 entries but 2 follow/);
    const stu = await run(IMPORT, { format: 'TORONTO', text: TINY_CRS, studentsText: 'abc 0001\n', periods: 3 });
    expect(stu.errors![0]).toMatchObject({ message: 'studentsText: malformed .stu line 1: exam abc is not in .crs', extensions: { code: 'BAD_USER_INPUT' } });
    const crs = await run(IMPORT, { format: 'TORONTO', text: '0001 x\n', studentsText: TINY_STU, periods: 3 });
    expect(crs.errors![0]).toMatchObject({ message: expect.stringMatching(/^text: malformed \.crs line 1: the student count of exam 0001/), extensions: { code: 'BAD_USER_INPUT' } });
    const noPeriods = await run(IMPORT, { format: 'TORONTO', text: TINY_CRS, studentsText: TINY_STU });
    expect(noPeriods.errors![0]).toMatchObject({ message: expect.stringMatching(/^periods: a Toronto instance needs the number of periods/), extensions: { code: 'BAD_USER_INPUT' } });
    expect(await sessionsCount()).toBe(before);
  });

  it('a term session is managed, arranged and read by exam, room, invigilator and student; every mutation refuses bad input by field', async () => {
    const { term } = await createGeneratedTerm(ctx.db.orm.em.fork(), generateTerm({ courses: 4, rooms: 1, curricula: 1, teachers: 3, days: 5, periodsPerDay: 2 }, 9, 'GQL-TERM'));
    const [c0, c1, c2] = await listCourses(ctx.db.orm.em.fork(), term.id);
    const [t0, t1] = await listTeachers(ctx.db.orm.em.fork(), term.id);
    const expectRefused = async (source: string, variables: Record<string, unknown>, field: RegExp) => {
      const r = await run(source, variables);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r.errors ?? r.data)).toBe('BAD_USER_INPUT');
      expect(r.errors![0].message).toMatch(field);
    };

    const CREATE = `mutation($input: CreateMakeupExamSessionInput!) { createMakeupExamSession(input: $input) { id code format passingScore weightings { twoInARow proximity } term { code } } }`;
    await expectRefused(CREATE, { input: { termId: term.id, code: 'bad code' } }, /^code must not contain blanks/);
    await expectRefused(CREATE, { input: { termId: term.id, code: 'GQL-MU', passingScore: 1e9 } }, /^passingScore must be a number/);
    const created = await run(CREATE, { input: { termId: term.id, code: 'GQL-MU', weightings: { twoInARow: 20 } } });
    expect(created.errors).toBeUndefined();
    const session = created.data!.createMakeupExamSession;
    expect(session).toMatchObject({ code: 'GQL-MU', format: 'TERM', passingScore: 60, weightings: { twoInARow: 20, proximity: 0 }, term: { code: 'GQL-TERM' } });
    const conflict = await run(CREATE, { input: { termId: term.id, code: 'GQL-MU' } });
    expect(conflict.errors![0].extensions!.code).toBe('CONFLICT');

    const ADD_PERIOD = `mutation($input: AddMakeupExamPeriodInput!) { addMakeupExamPeriod(input: $input) { id position } }`;
    await expectRefused(ADD_PERIOD, { input: { sessionId: session.id, date: '2027-13-01', startTime: '09:00', duration: 120 } }, /^date must be a date/);
    await expectRefused(ADD_PERIOD, { input: { sessionId: session.id, date: '2027-01-11', startTime: '09:00', duration: -5 } }, /^duration must be an integer/);
    const periods = [];
    for (const [date, startTime] of [['2027-01-11', '09:00'], ['2027-01-11', '14:00'], ['2027-01-12', '09:00']]) {
      periods.push((await run(ADD_PERIOD, { input: { sessionId: session.id, date, startTime, duration: 120 } })).data!.addMakeupExamPeriod);
    }
    const ADD_ROOM = `mutation($input: AddMakeupExamRoomInput!) { addMakeupExamRoom(input: $input) { id code } }`;
    await expectRefused(ADD_ROOM, { input: { sessionId: session.id, code: 'A', capacity: 0 } }, /^capacity must be an integer/);
    const room = (await run(ADD_ROOM, { input: { sessionId: session.id, code: 'A101', capacity: 3 } })).data!.addMakeupExamRoom;
    await run(ADD_ROOM, { input: { sessionId: session.id, code: 'A102', capacity: 2 } });
    const INVIGILATOR = `mutation($input: SetMakeupExamInvigilatorInput!) { setMakeupExamInvigilator(input: $input) { id teacher { code } availablePeriods { position } } }`;
    await expectRefused(INVIGILATOR, { input: { sessionId: session.id, teacherId: t0.id, availablePeriodIds: ['nope'] } }, /^availablePeriodIds\[0\] must be an id/);
    const inv = (await run(INVIGILATOR, { input: { sessionId: session.id, teacherId: t0.id, availablePeriodIds: periods.map((p) => p.id) } })).data!.setMakeupExamInvigilator;
    expect(inv).toMatchObject({ teacher: { code: t0.code }, availablePeriods: [{ position: 0 }, { position: 1 }, { position: 2 }] });
    const PERIODS_PAGE = `query($id: ID!, $after: ID) { makeupExamSession(id: $id) { invigilators { availablePeriods(first: 1, after: $after) { position } } } }`;
    const nextPage = await run(PERIODS_PAGE, { id: session.id, after: periods[0]!.id });
    expect(nextPage.data!.makeupExamSession.invigilators[0].availablePeriods).toEqual([{ position: 1 }]);
    // An id that is not one of its periods is refused, as on every page: restarting from the first would loop a client paging to the end.
    await expectRefused(PERIODS_PAGE, { id: session.id, after: inv.id }, /^after: no period with id /);
    await run(INVIGILATOR, { input: { sessionId: session.id, teacherId: t1.id, availablePeriodIds: periods.map((p) => p.id) } });

    const SCORES = `mutation($input: RecordMakeupExamScoresInput!) { recordMakeupExamScores(input: $input) }`;
    await expectRefused(SCORES, { input: { sessionId: session.id, scores: [{ courseId: c0.id, studentCode: 'S1', score: -1 }] } }, /^scores\[0\]\.score must be a number/);
    const recorded = await run(SCORES, {
      input: {
        sessionId: session.id,
        scores: [
          { courseId: c0.id, studentCode: 'S1', score: 40 },
          { courseId: c0.id, studentCode: 'S2', score: 50 },
          { courseId: c0.id, studentCode: 'S3', score: 55 },
          { courseId: c0.id, studentCode: 'S4', score: 59 },
          { courseId: c1.id, studentCode: 'S1', score: 10 },
          { courseId: c2.id, studentCode: 'S2', score: 80 },
        ],
      },
    });
    expect(recorded.data!.recordMakeupExamScores).toBe(6);
    const COURSE = `mutation($input: SetMakeupExamCourseInput!) { setMakeupExamCourse(input: $input) { id code duration roomExclusive course { code } } }`;
    await expectRefused(COURSE, { input: { sessionId: session.id, courseId: c1.id, duration: 0 } }, /^duration must be an integer/);
    const e1 = (await run(COURSE, { input: { sessionId: session.id, courseId: c1.id, duration: 90, roomExclusive: true } })).data!.setMakeupExamCourse;
    expect(e1).toMatchObject({ code: c1.code, duration: 90, roomExclusive: true, course: { code: c1.code } });
    const exams = (await run(`query($id: ID!) { makeupExamSession(id: $id) { exams { id code enrolments { studentCode score } } } }`, { id: session.id })).data!.makeupExamSession.exams;
    expect(exams.map((e: { code: string }) => e.code)).toEqual([c0.code, c1.code, c2.code]);
    const e0 = exams[0];
    expect(e0.enrolments).toEqual([1, 2, 3, 4].map((i) => ({ studentCode: `S${i}`, score: [40, 50, 55, 59][i - 1] })));
    const CONSTRAINT = `mutation($input: AddMakeupExamConstraintInput!) { addMakeupExamConstraint(input: $input) { kind first { code } second { code } } }`;
    await expectRefused(CONSTRAINT, { input: { sessionId: session.id, kind: 'AFTER', firstExamId: e0.id, secondExamId: e0.id } }, /^secondExamId: a constraint is between two different exams/);
    expect((await run(CONSTRAINT, { input: { sessionId: session.id, kind: 'AFTER', firstExamId: e1.id, secondExamId: e0.id } })).data!.addMakeupExamConstraint).toMatchObject({
      kind: 'AFTER',
      first: { code: c1.code },
    });
    await expectRefused(`mutation($id: ID!) { updateMakeupExamSession(id: $id, input: { defaultExamDuration: 0 }) { id } }`, { id: session.id }, /^defaultExamDuration must be an integer/);
    await expectRefused(`mutation { startMakeupExamArrangement(input: { sessionId: "x" }) { id } }`, {}, /^sessionId must be an id/);

    // Four students failed c0 (rooms of 3 and 2: split over both), S1 failed c1 too: c1 after c0.
    const job = (await run(START, { sessionId: session.id })).data!.startMakeupExamArrangement;
    expect((await waitForJob(engine, job.id, undefined, 20_000)).status).toBe('SUCCEEDED');
    const views = await run(
      `query($id: ID!, $roomId: ID!, $invId: ID!, $examId: ID!) { makeupExamSession(id: $id) {
        evaluation { hardViolations exams students }
        byExam: sittings(examId: $examId) { seats room { code } period { position } }
        byRoom: sittings(roomId: $roomId) { exam { code } period { position } }
        byInvigilator: sittings(invigilatorId: $invId) { exam { code } room { code } }
        s1: studentTimetable(studentCode: "S1") { studentCode exam { code course { code } } period { date startTime } room { code } }
        s9: studentTimetable(studentCode: "S9") { studentCode } } }`,
      { id: session.id, roomId: room.id, invId: inv.id, examId: e0.id },
    );
    expect(views.errors).toBeUndefined();
    const v = views.data!.makeupExamSession;
    expect(v.evaluation).toEqual({ hardViolations: 0, exams: 2, students: 4 });
    // Four students, rooms of 3 and 2: split over both, in one period.
    expect(v.byExam.map((x: { seats: number; room: { code: string } }) => `${x.room.code}:${x.seats}`).sort()).toEqual(['A101:3', 'A102:1']);
    expect(new Set(v.byExam.map((x: { period: { position: number } }) => x.period.position)).size).toBe(1);
    expect(v.byRoom.map((x: { exam: { code: string } }) => x.exam.code)).toContain(c0.code);
    // Two rooms in use at once need both invigilators; each duty is a room in a period.
    expect(v.byInvigilator.length).toBeGreaterThanOrEqual(1);
    expect(v.byInvigilator.every((x: { room: { code: string } }) => /^A10[12]$/.test(x.room.code))).toBe(true);
    expect(v.s1.map((x: { exam: { code: string } }) => x.exam.code)).toEqual([c0.code, c1.code]);
    expect(v.s1[0]).toMatchObject({ studentCode: 'S1', exam: { course: { code: c0.code } }, room: { code: expect.stringMatching(/^A10[12]$/) } });
    expect(v.s1[0].period.date < v.s1[1].period.date || v.s1[0].period.startTime < v.s1[1].period.startTime).toBe(true);
    expect(v.s9).toEqual([]);
    const paged = await run(
      `query($id: ID!) { makeupExamSession(id: $id) { first: studentTimetable(studentCode: "S1", first: 1) { id exam { code } } } }`,
      { id: session.id },
    );
    const [firstRow] = paged.data!.makeupExamSession.first;
    expect(firstRow.exam.code).toBe(c0.code);
    const rest = await run(`query($id: ID!, $after: ID!) { makeupExamSession(id: $id) { studentTimetable(studentCode: "S1", after: $after) { exam { code } } } }`, {
      id: session.id,
      after: firstRow.id,
    });
    expect(rest.data!.makeupExamSession.studentTimetable).toEqual([{ exam: { code: c1.code } }]);
  });

  it('a second start while one runs is a CONFLICT; cancelJob stops it', async () => {
    const session = (await run(IMPORT, { format: 'ITC2007_EXAM', text: TINY_EXAM, code: 'gql-excl' })).data!.importExamSession;
    const long = `mutation($sessionId: ID!) { startMakeupExamArrangement(input: { sessionId: $sessionId, timeLimitSeconds: 60 }) { id } }`;
    const first = (await run(long, { sessionId: session.id })).data!.startMakeupExamArrangement;
    const second = await run(long, { sessionId: session.id });
    expect(second.errors![0].extensions!.code).toBe('CONFLICT');
    expect(second.errors![0].message).toContain(first.id);
    await waitForJob(engine, first.id, (j) => j.status === 'RUNNING', 10_000);
    const cancelled = await run(`mutation($id: ID!) { cancelJob(id: $id) { id } }`, { id: first.id });
    expect(cancelled.errors).toBeUndefined();
    expect((await waitForJob(engine, first.id, undefined, 10_000)).status).toBe('CANCELLED');
  });

  it('a viewer reads but cannot import, edit or start; lists are pages within the cost limit', async () => {
    const session = (await run(IMPORT, { format: 'ITC2007_EXAM', text: TINY_EXAM, code: 'gql-viewer' })).data!.importExamSession;
    for (const [source, variables] of [
      [IMPORT, { format: 'ITC2007_EXAM', text: TINY_EXAM, code: 'gql-viewer-2' }],
      [START, { sessionId: session.id }],
      [`mutation($id: ID!) { deleteMakeupExamSession(id: $id) }`, { id: session.id }],
      [`mutation($input: AddMakeupExamRoomInput!) { addMakeupExamRoom(input: $input) { id } }`, { input: { sessionId: session.id, code: 'X', capacity: 5 } }],
    ] as const) {
      const r = await run(source, variables, server.tokens.viewer);
      expect(r.errors![0].extensions!.code).toBe('FORBIDDEN');
    }
    const read = await run(`{ makeupExamSessions(first: 500) { code } }`, {}, server.tokens.viewer);
    expect(read.data!.makeupExamSessions.map((s: { code: string }) => s.code)).toContain('gql-viewer');
    const page = await run(`query($id: ID!) { makeupExamSession(id: $id) { exams(first: 2) { id code } } }`, { id: session.id }, server.tokens.viewer);
    const [, second] = page.data!.makeupExamSession.exams;
    const next = await run(`query($id: ID!, $after: ID!) { makeupExamSession(id: $id) { exams(first: 5, after: $after) { code } } }`, { id: session.id, after: second.id }, server.tokens.viewer);
    expect(next.data!.makeupExamSession.exams).toEqual([{ code: '2' }, { code: '3' }]);
    const tooBig = await run(`{ makeupExamSessions(first: 100) { exams(first: 100) { code enrolments(first: 100) { studentCode } } } }`, {}, server.tokens.viewer);
    expect(tooBig.errors![0].extensions!.code).toBe('QUERY_TOO_COMPLEX');
    const badPage = await run(`query($id: ID!) { makeupExamSession(id: $id) { rooms(first: 501) { code } } }`, { id: session.id }, server.tokens.viewer);
    expect(badPage.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
  });

  it('every list of the make-up exam API is a page (first/after)', async () => {
    const schema = await buildApiSchema();
    const lists: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || !(type.name.startsWith('MakeupExam') || type.name === 'Query')) continue;
      for (const field of Object.values(type.getFields())) {
        if (type.name === 'Query' && !field.name.startsWith('makeupExam')) continue;
        if (!isListType(getNullableType(field.type)) || !isObjectType(getNamedType(field.type))) continue;
        lists.push(`${type.name}.${field.name}`);
        expect(field.args.map((a) => a.name), `${type.name}.${field.name}`).toEqual(expect.arrayContaining(['first', 'after']));
      }
    }
    expect(lists.length).toBeGreaterThanOrEqual(10);
  });

  it('evaluation and solutionText charge the rows they read against what the query left of its limit', async () => {
    // 100 exams, 1,500 students of 4 exams each: 6,100 rows, 31 units at run time.
    const crs = Array.from({ length: 100 }, (_, e) => `${String(e + 1).padStart(4, '0')} 60\n`).join('');
    const stu = Array.from({ length: 1_500 }, (_, s) => [0, 1, 2, 3].map((k) => String(((s * 7 + k * 13) % 100) + 1).padStart(4, '0')).join(' ') + '\n').join('');
    const session = (await run(IMPORT, { format: 'TORONTO', text: crs, studentsText: stu, periods: 30, code: 'gql-cost' })).data!.importExamSession;
    const small = await startTestApiServer({ engine, services: { orm: ctx.db.orm }, settings: { maxComplexity: 40 } });
    try {
      const query = doc(`query($id: ID!) { makeupExamSession(id: $id) { code solutionText } }`);
      const refused = await gql(small, query, { id: session.id }, small.tokens.viewer);
      // The query's own cost (1 + 10) passes; the rows it would read do not.
      expect(refused.body.errors![0]).toMatchObject({ path: ['makeupExamSession', 'solutionText'], extensions: { code: 'QUERY_TOO_COMPLEX' } });
      expect(refused.body.errors![0].message).toMatch(/solution text of make-up exam session gql-cost \(\d+ rows to read\)/);
      expect(refused.body.data!.makeupExamSession.code).toBe('gql-cost');
      const allowed = await gql(server, query, { id: session.id }, server.tokens.viewer);
      expect(allowed.body.errors).toBeUndefined();
      expect(allowed.body.data!.makeupExamSession.solutionText).toBeNull(); // no arrangement yet
      // One exam and one student, but 10,000 rooms: the rooms are read too, and charged.
      const rooms = `[Rooms:10000]\n${'3, 0\n'.repeat(10_000)}`;
      const text = `[Exams:1]\n60, 1\n[Periods:1]\n01:07:2026, 09:00:00, 120, 0\n${rooms}[PeriodHardConstraints]\n[RoomHardConstraints]\n[InstitutionalWeightings]\nTWOINAROW, 7\nTWOINADAY, 5\nPERIODSPREAD, 2\nNONMIXEDDURATIONS,10\nFRONTLOAD,1,1,5\n`;
      const roomy = (await run(IMPORT, { format: 'ITC2007_EXAM', text, code: 'gql-rooms' })).data!.importExamSession;
      const evaluation = doc(`query($id: ID!) { makeupExamSession(id: $id) { code evaluation { cost } } }`);
      const overRooms = await gql(small, evaluation, { id: roomy.id }, small.tokens.viewer);
      expect(overRooms.body.errors![0]).toMatchObject({ path: ['makeupExamSession', 'evaluation'], extensions: { code: 'QUERY_TOO_COMPLEX' } });
      expect(overRooms.body.errors![0].message).toMatch(/evaluation of make-up exam session gql-rooms \(1000[0-9] rows to read\)/);
    } finally {
      await small.close();
    }
  });
});
