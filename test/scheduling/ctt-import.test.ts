import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCourses, listCurricula, listRooms, listTeachers, listTerms, listUnavailability } from '../../src/academic/academic-service';
import { importCurriculumTimetabling } from '../../src/scheduling/ctt-import';
import { AcademicTerm } from '../../src/academic/entities';
import { createTestDb } from '../support/engine-harness';
import { refused } from '../support/refused';

const DATASETS = join(__dirname, '../../../shared/datasets/itc2007-ctt');
const comp01 = () => readFileSync(join(DATASETS, 'comp01.ctt'), 'utf8');

let ctx: Awaited<ReturnType<typeof createTestDb>>;
beforeAll(async () => {
  ctx = await createTestDb('academic_import');
});
afterAll(async () => {
  await ctx.close();
});

const em = () => ctx.db.orm.em.fork();


describe('importCurriculumTimetabling', () => {
  it('imports comp01 as a term with all its data and codes', async () => {
    const term = await importCurriculumTimetabling(em(), comp01(), 'COMP01-IMPORT');
    expect(term).toMatchObject({ code: 'COMP01-IMPORT', name: 'Fis0506-1', daysPerWeek: 5, periodsPerDay: 6 });
    const [teachers, rooms, courses, curricula, unavailable] = await Promise.all([
      listTeachers(em(), term.id),
      listRooms(em(), term.id),
      listCourses(em(), term.id),
      listCurricula(em(), term.id),
      listUnavailability(em(), term.id),
    ]);
    expect(courses).toHaveLength(30);
    expect(rooms).toHaveLength(6);
    expect(teachers).toHaveLength(24);
    expect(curricula).toHaveLength(14);
    expect(unavailable).toHaveLength(53);
    expect(courses.find((c) => c.code === 'c0001')).toMatchObject({ lecturesPerWeek: 6, minWorkingDays: 4, students: 130 });
    expect(courses.find((c) => c.code === 'c0001')!.teacher.code).toBe('t000');
    expect(rooms.map((r) => r.code)).toContain('rB');
  });

  it('uses the file name as the term code when none is given, and a second import of it is a CONFLICT', async () => {
    const term = await importCurriculumTimetabling(em(), comp01());
    expect(term.code).toBe('Fis0506-1');
    await refused(importCurriculumTimetabling(em(), comp01()), 'CONFLICT', /Fis0506-1 already exists/);
  });

  /** A well-formed instance of `count` one-lecture courses (one teacher, one room, a week of 7 × 24 periods). */
  const manyCourses = (count: number) =>
    [
      'Name: Many',
      `Courses: ${count}`,
      'Rooms: 1',
      'Days: 7',
      'Periods_per_day: 24',
      'Curricula: 0',
      'Constraints: 0',
      '',
      'COURSES:',
      ...Array.from({ length: count }, (_, i) => `c${i} t0 1 1 1`),
      '',
      'ROOMS:',
      'r0 10',
      '',
      'CURRICULA:',
      '',
      'UNAVAILABILITY_CONSTRAINTS:',
      '',
      'END.',
      '',
    ].join('\n');

  it('refuses malformed text with BAD_USER_INPUT naming the line, and writes nothing', async () => {
    const before = (await listTerms(em())).length;
    const lines = comp01().split('\n');
    const cases: [string, string, RegExp][] = [
      ['a non-numeric lecture count', lines.map((l, i) => (i === 11 ? 'c0004 t002 six 3 117' : l)).join('\n'), /line 12: .*must be an integer, found "six"/],
      ['a room of capacity 0', comp01().replace(/^rB\s+\d+/m, 'rB 0'), /line \d+: room rB has capacity 0/],
      ['a curriculum naming an unknown course', comp01().replace(/^(q000\s+\d+\s+)\S+/m, '$1nosuch'), /line \d+: curriculum q000 lists unknown course nosuch/],
      ['a missing END.', comp01().replace('END.', ''), /missing "END\."/],
      ['a header that lies about the course count', comp01().replace('Courses: 30', 'Courses: 31'), /line 2: the header declares Courses: 31/],
      // With a termCode the name is not the code, but it is still the term's name, which every later edit re-checks.
      ['a name longer than a term name may be', comp01().replace(/^Name:\s*\S+/m, `Name: ${'n'.repeat(201)}`), /line 1: Name must be at most 200 characters, found 201/],
      // Far above any lecture hall; such figures would make a plan's penalties overflow the API's 32-bit integers.
      ['a course of 2,000,000,000 students', comp01().replace('c0004 t002 7 3 117', 'c0004 t002 7 3 2000000000'), /^line 12: course c0004 has 2000000000 students; a course has at most 100000/],
      ['a room of 100,001 seats', comp01().replace(/^rB\s+\d+/m, 'rB 100001'), /^line \d+: room rB has capacity 100001; a room holds at most 100000 students/],
      // PostgreSQL refuses NUL in text; no code or name needs a control character.
      ['a NUL in a course code', comp01().replace('c0004 t002', 'c00\u000004 t002'), /^line 12: control character U\+0000; codes and names must not contain control characters/],
      ['a NUL in the name', comp01().replace('Name: Fis0506-1', 'Name: Fis\u00000506-1'), /^line 1: control character U\+0000/],
      ['a control character in a teacher code', comp01().replace('c0004 t002', 'c0004 t\u0001002'), /^line 12: control character U\+0001/],
      ['a control character between fields', comp01().replace('c0004 t002', 'c0004\u001ft002'), /^line 12: control character U\+001F/],
      // Compiling a term's model weighs every pair of its courses.
      ['10,001 courses', manyCourses(10_001), /^line 2: the file has 10001 courses; a term has at most 10000/],
    ];
    for (const [what, text, message] of cases) await refused(importCurriculumTimetabling(em(), text, `BAD-${what.length}`), 'BAD_USER_INPUT', message);
    await refused(importCurriculumTimetabling(em(), '   '), 'BAD_USER_INPUT', /empty/);
    await refused(importCurriculumTimetabling(em(), comp01(), 'has blank'), 'BAD_USER_INPUT', /termCode must not contain blanks/);
    expect((await listTerms(em())).length).toBe(before);
    expect(await em().count(AcademicTerm, { code: { $like: 'BAD-%' } })).toBe(0);
  });
});
