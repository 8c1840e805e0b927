import { describe, expect, it } from 'vitest';
import { CttFormatError, formatSolution, parseCtt, parseSolution } from '../../../src/scheduling/ctt/ctt-format';
import { compileModel } from '../../../src/scheduling/ctt/model';
import { HAVE_CTT_DATA, readCttData } from './datasets';

const TOY = `Name: ToyExample
Courses: 4
Rooms: 2
Days: 5
Periods_per_day: 4
Curricula: 2
Constraints: 8

COURSES:
SceCosC Ocra 3 3 30
ArcTec Indaco 3 2 42
TecCos Rosa 5 4 40
Geotec Scarlatti 5 4 18

ROOMS:
A 32
B 50

CURRICULA:
Cur1 3 SceCosC ArcTec TecCos
Cur2 2 TecCos Geotec

UNAVAILABILITY_CONSTRAINTS:
TecCos 2 0
TecCos 2 1
TecCos 3 2
TecCos 3 3
ArcTec 4 0
ArcTec 4 1
ArcTec 4 2
ArcTec 4 3

END.
`;

function formatError(text: string): CttFormatError {
  try {
    parseCtt(text);
  } catch (e) {
    if (e instanceof CttFormatError) return e;
    throw e;
  }
  throw new Error('expected a CttFormatError');
}

describe('parseCtt', () => {
  it('reads the toy example of the spec', () => {
    const m = parseCtt(TOY);
    expect(m.name).toBe('ToyExample');
    expect(m.days).toBe(5);
    expect(m.periodsPerDay).toBe(4);
    expect(m.courses.map((c) => c.code)).toEqual(['SceCosC', 'ArcTec', 'TecCos', 'Geotec']);
    expect(m.courses[2]).toEqual({ code: 'TecCos', teacher: 'Rosa', lectures: 5, minWorkingDays: 4, students: 40 });
    expect(m.rooms).toEqual([
      { code: 'A', capacity: 32 },
      { code: 'B', capacity: 50 },
    ]);
    expect(m.curricula[1]).toEqual({ code: 'Cur2', courses: ['TecCos', 'Geotec'] });
    expect(m.unavailable).toHaveLength(8);
    expect(m.unavailable[7]).toEqual({ course: 'ArcTec', day: 4, period: 3 });
  });

  it('splits on any run of whitespace (tabs, CRLF, several spaces)', () => {
    const messy = TOY.replace(/ /g, ' \t ').replace(/\n/g, '\r\n');
    expect(parseCtt(messy)).toEqual(parseCtt(TOY));
  });

  it('reports a course with zero lectures with its line number', () => {
    const e = formatError(TOY.replace('ArcTec Indaco 3 2 42', 'ArcTec Indaco 0 2 42'));
    expect(e.line).toBe(11);
    expect(e.message).toBe('line 11: course ArcTec declares 0 lectures');
  });

  it('reports an unknown course in a curriculum', () => {
    const e = formatError(TOY.replace('Cur2 2 TecCos Geotec', 'Cur2 2 TecCos Geotek'));
    expect(e.line).toBe(21);
    expect(e.message).toContain('curriculum Cur2 lists unknown course Geotek');
  });

  it('reports a section whose size does not match the header', () => {
    const e = formatError(TOY.replace('Courses: 4', 'Courses: 5'));
    expect(e.message).toContain('the header declares Courses: 5 but section COURSES: has 4 courses');
    expect(e.line).toBe(2); // the header line that disagrees
    const u = formatError(TOY.replace('Constraints: 8', 'Constraints: 7'));
    expect(u.message).toContain('Constraints: 7');
    expect(u.message).toContain('has 8 constraints');
  });

  it('reports a missing END.', () => {
    const e = formatError(TOY.replace('END.', ''));
    expect(e.message).toContain('missing "END."');
  });

  it('reports non-numbers, out-of-range periods and a truncated line', () => {
    expect(formatError(TOY.replace('A 32', 'A big')).message).toBe('line 16: the capacity of room A must be an integer, found "big"');
    expect(formatError(TOY.replace('TecCos 3 3', 'TecCos 3 4')).message).toBe('line 27: period 4 is out of range (Periods_per_day: 4)');
    const e = formatError(TOY.replace('Geotec Scarlatti 5 4 18', 'Geotec Scarlatti 5 4'));
    expect(e.line).toBe(13);
    expect(e.message).toContain('found section "ROOMS:"');
  });

  it.skipIf(!HAVE_CTT_DATA)('reads all fourteen competition instances with the sizes of the README', () => {
    const expected: Record<string, [number, number, number]> = { comp01: [30, 160, 6], comp05: [54, 152, 9], comp07: [131, 434, 20], comp12: [88, 218, 11] };
    for (const [name, [courses, lectures, rooms]] of Object.entries(expected)) {
      const inst = compileModel(parseCtt(readCttData(`${name}.ctt`)));
      expect([inst.courseCount, inst.lectureCount, inst.roomCount]).toEqual([courses, lectures, rooms]);
    }
    for (let i = 1; i <= 14; i++) expect(() => parseCtt(readCttData(`comp${String(i).padStart(2, '0')}.ctt`))).not.toThrow();
  });
});

describe('solution format', () => {
  const instance = compileModel(parseCtt(TOY));

  it('round-trips through formatSolution and parseSolution', () => {
    const text = 'SceCosC B 3 0\nArcTec\tA  0 1\r\n\nTecCos B 4 3\n';
    const parsed = parseSolution(text, instance);
    expect(parsed).toEqual([
      { course: 'SceCosC', room: 'B', day: 3, period: 0 },
      { course: 'ArcTec', room: 'A', day: 0, period: 1 },
      { course: 'TecCos', room: 'B', day: 4, period: 3 },
    ]);
    expect(formatSolution(parsed)).toBe('SceCosC B 3 0\nArcTec A 0 1\nTecCos B 4 3\n');
    expect(parseSolution(formatSolution(parsed), instance)).toEqual(parsed);
  });

  it('rejects unknown courses and rooms and out-of-range slots with the line', () => {
    expect(() => parseSolution('SceCosC B 3 0\nNope B 3 0\n', instance)).toThrow('line 2: unknown course Nope');
    expect(() => parseSolution('SceCosC Z 3 0\n', instance)).toThrow('line 1: unknown room Z');
    expect(() => parseSolution('SceCosC B 5 0\n', instance)).toThrow('line 1: day "5" is not in 0..4');
    expect(() => parseSolution('SceCosC B 3\n', instance)).toThrow(CttFormatError);
  });
});
