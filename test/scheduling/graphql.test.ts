import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { graphql, type GraphQLSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRole, type Viewer } from '../../src/api/auth/viewer';
import { buildApiSchema } from '../../src/api/graphql/build-schema';
import { createContext } from '../../src/api/graphql/context';
import { createErrorFormatter } from '../../src/api/graphql/errors';
import { JobEventHub } from '../../src/api/graphql/job-event-hub';
import type { JobEngine } from '../../src/engine/engine';
import { silentLogger } from '../../src/engine/logger';
import { createTestDb, waitForJob } from '../support/engine-harness';
import { schedulingEngine } from './scheduling-harness';

const COMP01 = join(__dirname, '../../../shared/datasets/itc2007-ctt/comp01.ctt');

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let schema: GraphQLSchema;
const format = createErrorFormatter({ production: false });

const viewer = (roles: ApiRole[]): Viewer => ({ subject: `${roles.join('-')}-1`, roles: new Set(roles), grants: new Set(), expiresAt: null });

async function run(source: string, variableValues: Record<string, unknown> = {}, roles: ApiRole[] = [ApiRole.SCHEDULER]) {
  const contextValue = createContext({ engine, hub: new JobEventHub(engine), logger: silentLogger, services: { orm: ctx.db.orm } }, viewer(roles));
  const result = await graphql({ schema, source, variableValues, contextValue });
  return {
    data: result.data as Record<string, any> | null | undefined,
    errors: result.errors?.map((e) => format(e.toJSON(), e)),
  };
}

beforeAll(async () => {
  ctx = await createTestDb('sched_graphql');
  engine = schedulingEngine(ctx.db);
  await engine.start();
  schema = await buildApiSchema();
});
afterAll(async () => {
  await engine.stop(2_000);
  await ctx.close();
});

describe('academic and scheduling GraphQL', () => {
  it('imports, schedules, evaluates, exports and publishes through the API', async () => {
    const imported = await run(`mutation($text: String!) { importCurriculumTimetabling(text: $text, termCode: "gql-comp01") { id code name daysPerWeek periodsPerDay } }`, {
      text: readFileSync(COMP01, 'utf8'),
    });
    expect(imported.errors).toBeUndefined();
    const term = imported.data!.importCurriculumTimetabling;
    expect(term).toMatchObject({ code: 'gql-comp01', name: 'Fis0506-1', daysPerWeek: 5, periodsPerDay: 6 });

    const listed = await run(`{ terms { code courses(first: 100) { code teacher { code } } rooms { code capacity } curricula { code courses { code } } } }`, {}, [ApiRole.VIEWER]);
    expect(listed.errors).toBeUndefined();
    const t = listed.data!.terms.find((x: { code: string }) => x.code === 'gql-comp01');
    expect(t.courses).toHaveLength(30);
    expect(t.courses[0]).toEqual({ code: 'c0001', teacher: { code: 't000' } });
    expect(t.curricula[0].courses.length).toBeGreaterThan(0);

    const created = await run(`mutation($termId: ID!) { createSchedulePlan(input: { termId: $termId, name: "API plan" }) { id status term { code } } }`, { termId: term.id });
    expect(created.errors).toBeUndefined();
    const plan = created.data!.createSchedulePlan;
    expect(plan).toMatchObject({ status: 'DRAFT', term: { code: 'gql-comp01' } });

    const started = await run(
      `mutation($planId: ID!) { startAutomaticSchedule(input: { planId: $planId, timeLimitSeconds: 2, seed: 4 }) { id kind status ... on AutomaticScheduleJob { inputData } } }`,
      { planId: plan.id },
    );
    expect(started.errors).toBeUndefined();
    expect(started.data!.startAutomaticSchedule).toMatchObject({ kind: 'AUTOMATIC_SCHEDULE', status: 'QUEUED', inputData: { planId: plan.id, timeLimitSeconds: 2, seed: 4 } });
    expect((await waitForJob(engine, started.data!.startAutomaticSchedule.id, undefined, 30_000)).status).toBe('SUCCEEDED');
    const typed = await run(
      `query($id: ID!) { job(id: $id) { ... on AutomaticScheduleJob { plan { id } scheduleResult { hardViolations penalty seed breakdown { roomCapacity } } } } }`,
      { id: started.data!.startAutomaticSchedule.id },
    );
    expect(typed.errors).toBeUndefined();
    expect(typed.data!.job).toMatchObject({ plan: { id: plan.id }, scheduleResult: { hardViolations: 0, seed: 4 } });

    const read = await run(
      `query($id: ID!) { schedulePlan(id: $id) { solutionText evaluation { hardViolations penalty feasible conflicts breakdown { lectures conflicts roomCapacity minWorkingDays curriculumCompactness roomStability } } assignments(first: 500) { day period locked course { code } room { code } } } }`,
      { id: plan.id },
      [ApiRole.VIEWER],
    );
    expect(read.errors).toBeUndefined();
    const p = read.data!.schedulePlan;
    expect(p.evaluation).toMatchObject({ hardViolations: 0, feasible: true, conflicts: [] });
    expect(p.solutionText.trim().split('\n')).toHaveLength(160);
    expect(p.assignments).toHaveLength(160);

    const published = await run(`mutation($id: ID!) { publishSchedulePlan(planId: $id) { id kind status } }`, { id: plan.id });
    expect(published.errors).toBeUndefined();
    expect((await waitForJob(engine, published.data!.publishSchedulePlan.id)).status).toBe('SUCCEEDED');
    const publishJob = await run(`query($id: ID!) { job(id: $id) { ... on SchedulePublishJob { plan { status } publishResult { entries previousPlanId } } } }`, {
      id: published.data!.publishSchedulePlan.id,
    });
    expect(publishJob.data!.job).toEqual({ plan: { status: 'PUBLISHED' }, publishResult: { entries: 160, previousPlanId: null } });
    const byRoom = await run(`query($termId: ID!) { term(id: $termId) { publishedPlan { id status } rooms { id code } } }`, { termId: term.id });
    expect(byRoom.data!.term.publishedPlan).toEqual({ id: plan.id, status: 'PUBLISHED' });
    const room = byRoom.data!.term.rooms[0];
    const entries = await run(`query($termId: ID!, $roomId: ID!) { publishedTimetableByRoom(termId: $termId, roomId: $roomId) { dayName periodLabel courseCode roomCode teacherCode curriculumCodes } }`, {
      termId: term.id,
      roomId: room.id,
    });
    expect(entries.errors).toBeUndefined();
    expect(entries.data!.publishedTimetableByRoom.length).toBeGreaterThan(0);
    expect(entries.data!.publishedTimetableByRoom.every((e: { roomCode: string }) => e.roomCode === room.code)).toBe(true);
    expect((await run(`{ schedulePlan(id: "00000000-0000-4000-8000-000000000000") { id } }`)).data!.schedulePlan).toBeNull();
  });

  it('answers bad input with BAD_USER_INPUT, duplicates with CONFLICT, and viewers with FORBIDDEN', async () => {
    const malformed = await run(`mutation { importCurriculumTimetabling(text: "Name: x\\nCourses: two\\n") { id } }`);
    expect(malformed.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/line 2/) });

    const term = (await run(`mutation { createTerm(input: { code: "GQL-T", name: "GraphQL term", daysPerWeek: 5, periodsPerDay: 4 }) { id } }`)).data!.createTerm;
    const dup = await run(`mutation { createTerm(input: { code: "GQL-T", name: "again", daysPerWeek: 5, periodsPerDay: 4 }) { id } }`);
    expect(dup.errors?.[0].extensions?.code).toBe('CONFLICT');

    const zeroRoom = await run(`mutation($t: ID!) { createRoom(input: { termId: $t, code: "R0", capacity: 0 }) { id } }`, { t: term.id });
    expect(zeroRoom.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/capacity/) });

    const teacher = (await run(`mutation($t: ID!) { createTeacher(input: { termId: $t, code: "T1" }) { id } }`, { t: term.id })).data!.createTeacher;
    const tooMany = await run(`mutation($t: ID!, $teacher: ID!) { createCourse(input: { termId: $t, code: "C1", teacherId: $teacher, lecturesPerWeek: 21, minWorkingDays: 1, students: 5 }) { id } }`, {
      t: term.id,
      teacher: teacher.id,
    });
    expect(tooMany.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/lecturesPerWeek .* 20 periods/) });

    const plan = (await run(`mutation($t: ID!) { createSchedulePlan(input: { termId: $t, name: "p" }) { id } }`, { t: term.id })).data!.createSchedulePlan;
    const badLimit = await run(`mutation($p: ID!) { startAutomaticSchedule(input: { planId: $p, timeLimitSeconds: 0 }) { id } }`, { p: plan.id });
    expect(badLimit.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const noCourses = await run(`mutation($p: ID!) { startAutomaticSchedule(input: { planId: $p, timeLimitSeconds: 5 }) { id } }`, { p: plan.id });
    expect(noCourses.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringMatching(/no courses/) });
    const badId = await run(`mutation { copySchedulePlan(planId: "nope") { id } }`);
    expect(badId.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');

    const forbidden = await run(`mutation($t: ID!) { createRoom(input: { termId: $t, code: "R1", capacity: 10 }) { id } }`, { t: term.id }, [ApiRole.VIEWER]);
    expect(forbidden.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('refuses what PostgreSQL or a 32-bit penalty could not hold — a NUL in a text, a count of billions — as BAD_USER_INPUT naming the field', async () => {
    const refusal = (field: string, message: RegExp) => ({ extensions: { code: 'BAD_USER_INPUT', field }, message: expect.stringMatching(message) });
    const nulTerm = await run(`mutation($name: String!) { createTerm(input: { code: "GQL-NUL", name: $name, daysPerWeek: 5, periodsPerDay: 4 }) { id } }`, { name: 'Autumn\u0000' });
    expect(nulTerm.errors?.[0]).toMatchObject(refusal('name', /^name must not contain control characters \(found U\+0000\)/));
    const nulImport = await run(`mutation($text: String!) { importCurriculumTimetabling(text: $text, termCode: "gql-nul") { id } }`, {
      text: readFileSync(COMP01, 'utf8').replace('c0004 t002', 'c0004 t\u0000002'),
    });
    expect(nulImport.errors?.[0]).toMatchObject(refusal('text', /^line 12: control character U\+0000/));

    const term = (await run(`mutation { createTerm(input: { code: "GQL-BIG", name: "Big numbers", daysPerWeek: 5, periodsPerDay: 4 }) { id } }`)).data!.createTerm;
    const nulPlan = await run(`mutation($t: ID!, $name: String!) { createSchedulePlan(input: { termId: $t, name: $name }) { id } }`, { t: term.id, name: 'Draft\u0000' });
    expect(nulPlan.errors?.[0]).toMatchObject(refusal('name', /^name must not contain control characters/));
    const teacher = (await run(`mutation($t: ID!) { createTeacher(input: { termId: $t, code: "T1" }) { id } }`, { t: term.id })).data!.createTeacher;
    const crowd = await run(`mutation($t: ID!, $teacher: ID!) { createCourse(input: { termId: $t, code: "C1", teacherId: $teacher, lecturesPerWeek: 2, minWorkingDays: 1, students: 2000000000 }) { id } }`, {
      t: term.id,
      teacher: teacher.id,
    });
    expect(crowd.errors?.[0]).toMatchObject(refusal('students', /students must not be greater than 100000/));
    const stadium = await run(`mutation($t: ID!) { createRoom(input: { termId: $t, code: "R1", capacity: 2000000000 }) { id } }`, { t: term.id });
    expect(stadium.errors?.[0]).toMatchObject(refusal('capacity', /capacity must be at most 100000/));
    const listed = await run(`query($t: ID!) { term(id: $t) { courses(first: 10) { code } rooms { code } plans { id } } }`, { t: term.id });
    expect(listed.data!.term).toEqual({ courses: [], rooms: [], plans: [] });
  });
});
