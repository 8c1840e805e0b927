import { describe, expect, it } from 'vitest';
import { ExamFormatError } from '../../src/exams/formats/exam-format-error';
import { formatItc2007Exam, parseItc2007Exam } from '../../src/exams/formats/itc2007-exam-format';
import { formatItc2007Solution, parseItc2007Solution } from '../../src/exams/formats/itc2007-solution-format';
import { ExamCapacityMode, PeriodConstraintKind } from '../../src/exams/model/exam-model';
import { ExamModelError } from '../../src/exams/model/exam-model-error';
import { HAVE_ITC_EXAM, readItcExam, readItcExamText } from './datasets';
import { TINY_EXAM } from './tiny-instances';

function formatError(fn: () => unknown): ExamFormatError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ExamFormatError) return e;
    throw e;
  }
  throw new Error('expected an ExamFormatError');
}

const parseTiny = (text: string) => parseItc2007Exam(text, { file: 'tiny.exam' });

describe('parseItc2007Exam', () => {
  it('reads exams, periods, rooms, constraints and weightings', () => {
    const m = parseTiny(TINY_EXAM);
    expect(m.name).toBe('tiny');
    expect(m.capacity).toBe(ExamCapacityMode.Capacitated);
    expect(m.roomSplitting).toBe(false);
    expect(m.exams.map((e) => [e.code, e.duration, e.students])).toEqual([
      ['0', 120, ['1', '2', '3']],
      ['1', 60, ['3', '4']],
      ['2', 120, ['5']],
      ['3', 90, ['1', '5']],
    ]);
    expect(m.exams[2].roomExclusive).toBe(true);
    expect(m.periods[1]).toEqual({ date: '2026-07-01', start: '13:00:00', duration: 120, penalty: 5 });
    expect(m.periods[3].date).toBe('2026-07-02');
    expect(m.rooms).toEqual([
      { code: '0', capacity: 3, penalty: 0 },
      { code: '1', capacity: 2, penalty: 10 },
    ]);
    expect(m.constraints).toEqual([
      { kind: PeriodConstraintKind.After, first: '0', second: '1' },
      { kind: PeriodConstraintKind.DifferentPeriod, first: '2', second: '3' },
    ]);
    expect(m.weightings).toEqual({
      twoInARow: 7,
      twoInADay: 5,
      periodSpread: 2,
      nonMixedDurations: 10,
      frontLoad: { largestExams: 1, lastPeriods: 1, weight: 5 },
      proximity: 0,
    });
  });

  it('tolerates CRLF, blank lines, trailing commas and duplicate or self-referencing constraints', () => {
    const messy = TINY_EXAM.replace('60, 3, 4', '60, 3, 4,')
      .replace('[Rooms:2]', '\n[Rooms:2]\n')
      .replace('2, EXCLUSION, 3', '2, EXCLUSION, 3\n3, EXCLUSION, 2\n1, EXAM_COINCIDENCE, 1')
      .replace(/\n/g, '\r\n');
    const m = parseTiny(messy);
    expect(m.exams[1].students).toEqual(['3', '4']);
    expect(m.constraints).toHaveLength(4);
  });

  it.each([
    ['a duration that is not a number', TINY_EXAM.replace('60, 3, 4', 'sixty, 3, 4'), 3, 'the duration of exam 1 must be a whole number, found "sixty"'],
    ['a student id that is not a number', TINY_EXAM.replace('60, 3, 4', '60, 3, x4'), 3, 'a student id of exam 1 must be a whole number, found "x4"'],
    ['an empty field', TINY_EXAM.replace('60, 3, 4', '60, , 4'), 3, 'empty field (two commas in a row?)'],
    ['fewer exams than declared', TINY_EXAM.replace('[Exams:4]', '[Exams:5]'), 1, '[Exams:5] declares 5 entries but 4 follow (up to line 6)'],
    ['more periods than declared', TINY_EXAM.replace('[Periods:4]', '[Periods:3]'), 10, 'more entries than [Periods:3] declares'],
    ['a date that does not exist', TINY_EXAM.replace('02:07:2026', '31:06:2026'), 10, '31:06:2026 is not a calendar date'],
    ['a time in the wrong form', TINY_EXAM.replace('13:00:00', '1pm'), 8, 'the time must be hh:mm:ss, found "1pm"'],
    ['periods out of time order', TINY_EXAM.replace('16:00:00', '12:00:00'), 9, 'period 2 (01:07:2026 12:00:00) is not after the period before it; periods must be in time order'],
    ['a room line with three fields', TINY_EXAM.replace('2, 10', '2, 10, 4'), 13, 'expected "capacity, penalty", found 3 fields'],
    ['an unknown period constraint', TINY_EXAM.replace('0, AFTER, 1', '0, BEFORE, 1'), 15, 'unknown period constraint "BEFORE" (EXAM_COINCIDENCE, EXCLUSION or AFTER)'],
    ['a constraint on an exam that does not exist', TINY_EXAM.replace('2, EXCLUSION, 3', '2, EXCLUSION, 4'), 16, 'exam 4 does not exist (there are 4 exams, 0..3)'],
    ['an unknown room constraint', TINY_EXAM.replace('ROOM_EXCLUSIVE', 'ROOM_SHARED'), 18, 'unknown room constraint "ROOM_SHARED" (ROOM_EXCLUSIVE)'],
    ['a front load with two values', TINY_EXAM.replace('FRONTLOAD,1,1,5', 'FRONTLOAD,1,5'), 24, 'FRONTLOAD takes 3 values, found 2'],
    ['an unknown weighting', TINY_EXAM.replace('TWOINADAY, 5', 'THREEINADAY, 5'), 21, 'unknown weighting "THREEINADAY" (TWOINAROW, TWOINADAY, PERIODSPREAD, NONMIXEDDURATIONS or FRONTLOAD)'],
    ['a weighting given twice', TINY_EXAM.replace('TWOINADAY, 5', 'TWOINAROW, 5'), 21, 'TWOINAROW is given twice'],
    ['an unknown section', TINY_EXAM.replace('[RoomHardConstraints]', '[Invigilators]'), 17, 'unknown section [Invigilators]'],
    ['sections out of order', TINY_EXAM.replace('[Rooms:2]\n3, 0\n2, 10\n', '').replace('[InstitutionalWeightings]', '[Rooms:2]\n3, 0\n2, 10\n[InstitutionalWeightings]'), 16, 'section [Rooms] must come before [RoomHardConstraints]'],
    ['a missing section', TINY_EXAM.slice(0, TINY_EXAM.indexOf('[Periods:4]')), 6, 'missing section [Periods:N]'],
    ['a count-less counted section', TINY_EXAM.replace('[Rooms:2]', '[Rooms]'), 11, 'section [Rooms] needs its count, e.g. [Rooms:10]'],
    ['text before the first section', `exams\n${TINY_EXAM}`, 1, 'expected the section header [Exams:N] first'],
  ])('names the file and line of %s', (_what, text, line, detail) => {
    const e = formatError(() => parseTiny(text));
    expect({ file: e.file, line: e.line, detail: e.detail }).toEqual({ file: 'tiny.exam', line, detail });
    expect(e.message).toBe(`tiny.exam line ${line}: ${detail}`);
  });

  it('round-trips through formatItc2007Exam', () => {
    const m = parseTiny(TINY_EXAM);
    expect(parseTiny(formatItc2007Exam(m))).toEqual(m);
  });

  it('refuses to write a period without a date', () => {
    const m = parseTiny(TINY_EXAM);
    m.periods[0] = { ...m.periods[0], date: null };
    expect(() => formatItc2007Exam(m)).toThrow(ExamModelError);
  });
});

describe('.sln solutions', () => {
  const model = parseTiny(TINY_EXAM);

  it('reads and writes `period, room` per exam, -1 for an unplaced exam', () => {
    const sln = '1, 0\n0, 0\n-1, -1\n2, 1\n';
    const arrangement = parseItc2007Solution(sln, model, 'tiny.sln');
    expect(arrangement.placements).toEqual([
      { exam: '0', period: 1, rooms: [{ room: '0', seats: 3 }] },
      { exam: '1', period: 0, rooms: [{ room: '0', seats: 2 }] },
      { exam: '3', period: 2, rooms: [{ room: '1', seats: 2 }] },
    ]);
    expect(formatItc2007Solution(model, arrangement)).toBe(sln);
  });

  it.each([
    ['a missing line', '1, 0\n0, 0\n2, 1\n', 4, '3 lines for 4 exams: every exam needs a line'],
    ['an extra line', '1, 0\n0, 0\n3, 0\n2, 1\n0, 0\n', 5, 'more lines than the 4 exams of the instance'],
    ['a period out of range', '1, 0\n0, 0\n4, 0\n2, 1\n', 3, 'period 4 is not in 0..3'],
    ['a room out of range', '1, 0\n0, 2\n3, 0\n2, 1\n', 2, 'room 2 is not in 0..1'],
    ['a line that is not two numbers', '1, 0\n0 0\n3, 0\n2, 1\n', 2, 'expected "period, room", found "0 0"'],
  ])('names the file and line of %s', (_what, text, line, detail) => {
    const e = formatError(() => parseItc2007Solution(text, model, 'tiny.sln'));
    expect({ file: e.file, line: e.line, detail: e.detail }).toEqual({ file: 'tiny.sln', line, detail });
  });

  it('refuses to write an exam split over two rooms (the format has one room per exam)', () => {
    const arrangement = { placements: [{ exam: '0', period: 1, rooms: [{ room: '0', seats: 2 }, { room: '1', seats: 1 }] }], invigilation: [] };
    expect(() => formatItc2007Solution(model, arrangement)).toThrow(ExamModelError);
  });
});

describe.skipIf(!HAVE_ITC_EXAM)('the published ITC-2007 exam sets', () => {
  // Sizes from the dataset README (computed there from the same files).
  it.each([
    [1, 607, 7883, 32380, 54, 7, 12, 0],
    [2, 870, 12484, 37379, 40, 49, 12, 2],
    [3, 934, 16365, 61150, 36, 48, 170, 15],
    [4, 273, 4421, 21740, 21, 1, 40, 0],
  ])('set %i: %i exams, %i students, %i enrolments, %i periods, %i rooms', (set, exams, students, enrolments, periods, rooms, periodHc, roomHc) => {
    const m = readItcExam(set);
    expect(m.exams).toHaveLength(exams);
    expect(new Set(m.exams.flatMap((e) => e.students)).size).toBe(students);
    expect(m.exams.reduce((n, e) => n + e.students.length, 0)).toBe(enrolments);
    expect(m.periods).toHaveLength(periods);
    expect(m.rooms).toHaveLength(rooms);
    expect(m.constraints).toHaveLength(periodHc);
    expect(m.exams.filter((e) => e.roomExclusive)).toHaveLength(roomHc);
  });

  it('set 1 round-trips through the writer', () => {
    const m = readItcExam(1);
    expect(parseItc2007Exam(formatItc2007Exam(m), { file: 'exam_comp_set1.exam' })).toEqual(m);
    // The writer spaces the weightings uniformly; everything else is byte for byte.
    const original = readItcExamText(1).trimEnd().split('\n');
    const written = formatItc2007Exam(m).trimEnd().split('\n');
    const upTo = original.indexOf('[InstitutionalWeightings]');
    expect(written.slice(0, upTo)).toEqual(original.slice(0, upTo));
  });
});
