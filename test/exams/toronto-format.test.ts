import { describe, expect, it } from 'vitest';
import { ExamFormatError } from '../../src/exams/formats/exam-format-error';
import { formatTorontoCourses, formatTorontoStudents, parseToronto } from '../../src/exams/formats/toronto-format';
import { formatTorontoSolution, parseTorontoSolution } from '../../src/exams/formats/toronto-solution-format';
import { ExamCapacityMode } from '../../src/exams/model/exam-model';
import { ExamModelError } from '../../src/exams/model/exam-model-error';
import { TORONTO_WEIGHTS } from '../../src/exams/model/weightings';
import { HAVE_TORONTO, readToronto, readTorontoText, torontoRows } from './datasets';
import { TINY_CRS, TINY_STU } from './tiny-instances';

function formatError(fn: () => unknown): ExamFormatError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ExamFormatError) return e;
    throw e;
  }
  throw new Error('expected an ExamFormatError');
}

const files = { coursesFile: 'tiny.crs', studentsFile: 'tiny.stu' };

describe('parseToronto', () => {
  it('builds an uncapacitated model scored by the proximity cost alone', () => {
    const m = parseToronto(TINY_CRS, TINY_STU, 6, files);
    expect(m.name).toBe('tiny');
    expect(m.capacity).toBe(ExamCapacityMode.Uncapacitated);
    expect(m.rooms).toEqual([]);
    expect(m.periods).toHaveLength(6);
    expect(m.periods[0]).toEqual({ date: null, start: null, duration: 0, penalty: 0 });
    expect(m.weightings).toEqual(TORONTO_WEIGHTS);
    // The empty line of the .stu is not a student: three students, numbered in file order.
    expect(m.exams.map((e) => [e.code, e.students])).toEqual([
      ['0001', ['1', '2']],
      ['0002', ['1', '3']],
      ['0003', ['2', '3']],
    ]);
  });

  it.each([
    ['an unknown exam in the .stu', TINY_CRS, TINY_STU.replace('0001 0003', '0001 0004'), 'tiny.stu', 2, 'exam 0004 is not in tiny.crs'],
    ['a .crs line with one field', TINY_CRS.replace('0002 2', '0002'), TINY_STU, 'tiny.crs', 2, 'expected "<examId> <students>", found 1 fields'],
    ['a count that is not a number', TINY_CRS.replace('0003 2', '0003 two'), TINY_STU, 'tiny.crs', 3, 'the student count of exam 0003 must be a whole number, found "two"'],
    ['an exam listed twice', `${TINY_CRS}0002 5\n`, TINY_STU, 'tiny.crs', 4, 'exam 0002 is listed twice (first on line 2)'],
    ['an empty .crs', '\n\n', TINY_STU, 'tiny.crs', 1, 'no exams: expected one "<examId> <students>" line per exam'],
  ])('names the file and line of %s', (_what, crs, stu, file, line, detail) => {
    const e = formatError(() => parseToronto(crs, stu, 6, files));
    expect({ file: e.file, line: e.line, detail: e.detail }).toEqual({ file, line, detail });
    expect(e.message).toBe(`${file} line ${line}: ${detail}`);
  });

  it.each([0, -1, 2.5, Number.NaN, 1001])('refuses %s periods', (periods) => {
    expect(() => parseToronto(TINY_CRS, TINY_STU, periods, files)).toThrow(ExamModelError);
  });

  it('round-trips through the .crs and .stu writers', () => {
    const m = parseToronto(TINY_CRS, TINY_STU, 6, files);
    expect(formatTorontoCourses(m)).toBe(TINY_CRS);
    expect(parseToronto(formatTorontoCourses(m), formatTorontoStudents(m), 6, files)).toEqual(m);
  });
});

describe('.sol solutions', () => {
  const model = parseToronto(TINY_CRS, TINY_STU, 6, files);

  it('writes `exam period` lines with the imported ids and reads them back', () => {
    const arrangement = {
      placements: [
        { exam: '0001', period: 0, rooms: [] },
        { exam: '0002', period: 1, rooms: [] },
        { exam: '0003', period: 5, rooms: [] },
      ],
      invigilation: [],
    };
    const sol = formatTorontoSolution(model, arrangement);
    expect(sol).toBe('0001 0\n0002 1\n0003 5\n');
    expect(parseTorontoSolution(sol, model)).toEqual(arrangement);
  });

  it('matches ids without their leading zeros, as published solutions write them', () => {
    expect(parseTorontoSolution('3 2\n1 0\n', model).placements).toEqual([
      { exam: '0003', period: 2, rooms: [] },
      { exam: '0001', period: 0, rooms: [] },
    ]);
  });

  it.each([
    ['an unknown exam', '0001 0\n0009 1\n', 2, 'exam 0009 is not in the instance'],
    ['an exam placed twice', '0001 0\n1 1\n', 2, 'exam 1 is placed twice (first on line 1)'],
    ['a period out of range', '0001 6\n', 1, 'period "6" is not in 0..5'],
    ['a line with three fields', '0001 0 1\n', 1, 'expected "<examId> <period>", found 3 fields'],
  ])('names the file and line of %s', (_what, text, line, detail) => {
    const e = formatError(() => parseTorontoSolution(text, model, 'tiny.sol'));
    expect({ file: e.file, line: e.line, detail: e.detail }).toEqual({ file: 'tiny.sol', line, detail });
  });
});

describe.skipIf(!HAVE_TORONTO)('the published Toronto instances', () => {
  it('reads every instance with the sizes of the dataset README', () => {
    const sizes: Record<string, [number, number, number]> = {
      car91: [682, 16925, 56877],
      ear83: [190, 1125, 8109],
      hec92: [81, 2823, 10632],
      kfu93: [461, 5349, 25113],
      lse91: [381, 2726, 10918],
      pur93: [2419, 30029, 120681],
      sta83: [139, 611, 5751],
      tre92: [261, 4360, 14901],
      uta92: [622, 21266, 58979],
      ute92: [184, 2749, 11793],
    };
    const rows = torontoRows();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const m = readToronto(row.stem, row.periods);
      const enrolments = m.exams.reduce((n, e) => n + e.students.length, 0);
      expect([m.exams.length, new Set(m.exams.flatMap((e) => e.students)).size, enrolments], row.instance).toEqual(sizes[row.instance]);
    }
  });

  it('hec-s-92 round-trips through the writers byte for byte (.crs) and model for model (.stu)', () => {
    const m = readToronto('hec-s-92', 18);
    expect(formatTorontoCourses(m)).toBe(readTorontoText('hec-s-92.crs'));
    expect(parseToronto(formatTorontoCourses(m), formatTorontoStudents(m), 18, { coursesFile: 'hec-s-92.crs', studentsFile: 'hec-s-92.stu' })).toEqual(m);
  });

  it('reads a published solution and writes it back with the imported ids', () => {
    const m = readToronto('sta-f-83', 13);
    const published = readTorontoText('reference-solutions/sta-f-83.sol');
    const arrangement = parseTorontoSolution(published, m, 'sta-f-83.sol');
    expect(arrangement.placements).toHaveLength(m.exams.length);
    const written = formatTorontoSolution(m, arrangement);
    expect(written.split('\n')[0]).toMatch(/^0\d{3} \d+$/);
    expect(parseTorontoSolution(written, m)).toEqual({ placements: [...arrangement.placements].sort((a, b) => a.exam.localeCompare(b.exam)), invigilation: [] });
  });
});
