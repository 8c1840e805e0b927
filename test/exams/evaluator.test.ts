import { describe, expect, it } from 'vitest';
import { evaluateArrangement } from '../../src/exams/evaluation/evaluator';
import { parseItc2007Exam } from '../../src/exams/formats/itc2007-exam-format';
import { parseToronto } from '../../src/exams/formats/toronto-format';
import { parseTorontoSolution } from '../../src/exams/formats/toronto-solution-format';
import { ExamCapacityMode, PeriodConstraintKind, type ExamArrangement, type ExamModel, type ExamPlacement } from '../../src/exams/model/exam-model';
import { ExamModelError } from '../../src/exams/model/exam-model-error';
import { NO_WEIGHTS } from '../../src/exams/model/weightings';
import { HAVE_TORONTO, readToronto, readTorontoText, torontoRows } from './datasets';
import { TINY_CRS, TINY_STU, TINY_EXAM } from './tiny-instances';

const NO_HARD = { unplaced: 0, conflicts: 0, roomCapacity: 0, periodDuration: 0, periodConstraints: 0, roomExclusive: 0, seating: 0, invigilation: 0, total: 0 };
const NO_SOFT = { twoInARow: 0, twoInADay: 0, periodSpread: 0, mixedDurations: 0, frontLoad: 0, roomPenalty: 0, periodPenalty: 0, proximity: 0, total: 0 };

/** `[exam, period, room, seats]` rows; the tiny exams are numbered 0..3. */
function arrangement(rows: [string, number, string | null, number?][]): ExamArrangement {
  const sizes: Record<string, number> = { '0': 3, '1': 2, '2': 1, '3': 2 };
  const placements: ExamPlacement[] = rows.map(([exam, period, room, seats]) => ({
    exam,
    period,
    rooms: room === null ? [] : [{ room, seats: seats ?? sizes[exam] }],
  }));
  return { placements, invigilation: [] };
}

// The tiny instance (see tiny-instances.ts): exams 0 (120 min; students 1 2 3), 1 (60; 3 4),
// 2 (120; 5, room-exclusive), 3 (90; 1 5). Periods 0-2 on 1 July (lengths 120, 120, 90;
// period 1 costs 5), period 3 on 2 July. Rooms 0 (3 seats) and 1 (2 seats, costs 10).
// 0 AFTER 1; 2 EXCLUSION 3. Weights: two in a row 7, two in a day 5, spread 2, mixed 10,
// front load: the 1 largest exam (exam 0) in the last 1 period costs 5.
describe('evaluateArrangement on the hand-made ITC-2007 instance', () => {
  const model = parseItc2007Exam(TINY_EXAM, { file: 'tiny.exam' });

  it('a feasible arrangement: two in a row never overnight, spread across days', () => {
    // 1 -> p0 r0, 0 -> p1 r0, 3 -> p2 r1, 2 -> p3 r0.
    const ev = evaluateArrangement(model, arrangement([['0', 1, '0'], ['1', 0, '0'], ['2', 3, '0'], ['3', 2, '1']]));
    expect(ev.hard).toEqual(NO_HARD);
    expect(ev.feasible).toBe(true);
    // Student 1: exams 0 (p1) and 3 (p2), adjacent on 1 July: one two-in-a-row, one spread.
    // Student 3: exams 1 (p0) and 0 (p1): one two-in-a-row, one spread.
    // Student 5: exams 3 (p2) and 2 (p3): overnight, so no two-in-a-row; one spread (1 period apart).
    // Exam 3 in room 1 (10); exam 0 in period 1 (5).
    expect(ev.soft).toEqual({ ...NO_SOFT, twoInARow: 2 * 7, periodSpread: 3, roomPenalty: 10, periodPenalty: 5, total: 32 });
  });

  it('two in a day, mixed durations, an overfull room and a period too short', () => {
    // 1 -> p0 r0 and 3 -> p0 r0 (4 students in 3 seats; 60 and 90 minutes mixed),
    // 0 -> p2 (90 minutes for a 120-minute exam), 2 -> p3 r1.
    const ev = evaluateArrangement(model, arrangement([['0', 2, '0'], ['1', 0, '0'], ['2', 3, '1'], ['3', 0, '0']]));
    expect(ev.hard).toEqual({ ...NO_HARD, roomCapacity: 1, periodDuration: 1, total: 2 });
    // Students 1 (p0, p2) and 3 (p0, p2): two in a day each, 2 periods apart (spread 2 counts).
    expect(ev.soft).toEqual({ ...NO_SOFT, twoInADay: 2 * 5, periodSpread: 2, mixedDurations: 10, roomPenalty: 10, total: 32 });
  });

  it('everything in the last period: conflicts, orderings, exclusivity, capacity, front load', () => {
    const ev = evaluateArrangement(model, arrangement([['0', 3, '0'], ['1', 3, '1'], ['2', 3, '0'], ['3', 3, '1']]));
    // Students 1 (0, 3), 3 (0, 1), 5 (2, 3) each sit two exams at once; both rooms overfull;
    // 0 is not after 1; 2 and 3 are not apart; exam 2 shares room 0.
    expect(ev.hard).toEqual({ ...NO_HARD, conflicts: 3, roomCapacity: 2, periodConstraints: 2, roomExclusive: 1, total: 8 });
    // Room 1 holds 60 and 90 minutes (10); exam 0, the largest, in the last period (5); two exams in room 1 (20).
    expect(ev.soft).toEqual({ ...NO_SOFT, mixedDurations: 10, frontLoad: 5, roomPenalty: 20, total: 35 });
  });

  it('unplaced exams and bad seating', () => {
    const a: ExamArrangement = {
      placements: [
        { exam: '0', period: 1, rooms: [] },
        { exam: '1', period: 0, rooms: [{ room: '0', seats: 1 }, { room: '1', seats: 1 }] },
        { exam: '3', period: 2, rooms: [{ room: '1', seats: 1 }] },
      ],
      invigilation: [],
    };
    const ev = evaluateArrangement(model, a);
    // Exam 2 unplaced; exam 0 has no room; exam 1 is split (the ITC model forbids it); exam 3 seats 1 of 2.
    expect(ev.hard).toEqual({ ...NO_HARD, unplaced: 1, seating: 3, total: 4 });
  });

  it('counts duplicate and mirrored constraints once and ignores self-references', () => {
    const doubled: ExamModel = {
      ...model,
      constraints: [
        ...model.constraints,
        { kind: PeriodConstraintKind.DifferentPeriod, first: '3', second: '2' },
        { kind: PeriodConstraintKind.After, first: '0', second: '1' },
        { kind: PeriodConstraintKind.After, first: '2', second: '2' },
        { kind: PeriodConstraintKind.DifferentPeriod, first: '1', second: '1' },
      ],
    };
    const ev = evaluateArrangement(doubled, arrangement([['0', 3, '0'], ['1', 3, '1'], ['2', 3, '0'], ['3', 3, '1']]));
    expect(ev.hard.periodConstraints).toBe(2);
  });

  it('front load: among equally large exams the earlier one counts as larger', () => {
    // Exams 1 and 3 both have 2 students; with one "largest" exam and no size leader, exam 1 counts.
    const tied: ExamModel = {
      ...model,
      exams: model.exams.map((e) => (e.code === '0' ? { ...e, students: ['1'] } : e)),
      weightings: { ...model.weightings, frontLoad: { largestExams: 1, lastPeriods: 1, weight: 5 } },
    };
    const base: [string, number, string | null, number?][] = [['0', 1, '0', 1], ['2', 0, '0']];
    expect(evaluateArrangement(tied, arrangement([...base, ['1', 3, '0'], ['3', 2, '1']])).soft.frontLoad).toBe(5);
    expect(evaluateArrangement(tied, arrangement([...base, ['1', 2, '0'], ['3', 3, '1']])).soft.frontLoad).toBe(0);
  });

  it('throws on mistakes of the caller rather than counting them', () => {
    expect(() => evaluateArrangement(model, arrangement([['9', 0, '0']]))).toThrow(ExamModelError);
    expect(() => evaluateArrangement(model, arrangement([['0', 4, '0']]))).toThrow(ExamModelError);
    expect(() => evaluateArrangement(model, arrangement([['0', 0, 'X']]))).toThrow(ExamModelError);
    expect(() => evaluateArrangement(model, arrangement([['0', 0, '0'], ['0', 1, '0']]))).toThrow(ExamModelError);
  });
});

describe('evaluateArrangement: invigilation and split exams', () => {
  const model: ExamModel = {
    name: 'invigilated',
    capacity: ExamCapacityMode.Capacitated,
    roomSplitting: true,
    periods: [
      { date: '2026-07-01', start: '09:00', duration: 120, penalty: 0 },
      { date: '2026-07-01', start: '14:00', duration: 120, penalty: 0 },
    ],
    rooms: [
      { code: 'A', capacity: 2, penalty: 0 },
      { code: 'B', capacity: 2, penalty: 0 },
    ],
    exams: [
      { code: 'BIG', duration: 60, students: ['s1', 's2', 's3'] },
      { code: 'SMALL', duration: 60, students: ['s4'] },
    ],
    constraints: [],
    weightings: NO_WEIGHTS,
    invigilators: [
      { code: 'T0', availablePeriods: [0] },
      { code: 'T1', availablePeriods: [0, 1] },
    ],
  };
  // BIG (3 students) is split over A and B in period 0; SMALL sits in A in period 1.
  const placements: ExamPlacement[] = [
    { exam: 'BIG', period: 0, rooms: [{ room: 'A', seats: 2 }, { room: 'B', seats: 1 }] },
    { exam: 'SMALL', period: 1, rooms: [{ room: 'A', seats: 1 }] },
  ];

  it('a split exam with an invigilator in every room is feasible', () => {
    const ev = evaluateArrangement(model, {
      placements,
      invigilation: [
        { period: 0, room: 'A', invigilator: 'T0' },
        { period: 0, room: 'B', invigilator: 'T1' },
        { period: 1, room: 'A', invigilator: 'T1' },
      ],
    });
    expect(ev.hard).toEqual(NO_HARD);
  });

  it('counts an uncovered room, an unavailable invigilator and one in two rooms at once', () => {
    const ev = evaluateArrangement(model, {
      placements,
      invigilation: [
        { period: 0, room: 'A', invigilator: 'T1' },
        { period: 0, room: 'B', invigilator: 'T1' },
        { period: 1, room: 'A', invigilator: 'T0' },
      ],
    });
    // T1 in A and B at once (1); T0 is not available in period 1 (1).
    expect(ev.hard).toEqual({ ...NO_HARD, invigilation: 2, total: 2 });
    const uncovered = evaluateArrangement(model, { placements, invigilation: [{ period: 0, room: 'A', invigilator: 'T0' }] });
    // B in period 0 and A in period 1 have nobody.
    expect(uncovered.hard.invigilation).toBe(2);
  });

  it('a split exam whose seats do not add up is badly seated', () => {
    const short: ExamPlacement[] = [{ ...placements[0], rooms: [{ room: 'A', seats: 2 }] }, placements[1]];
    expect(evaluateArrangement(model, { placements: short, invigilation: [] }).hard.seating).toBe(1);
  });
});

describe('evaluateArrangement: Carter proximity cost', () => {
  it('16/8/4/2/1 for 1..5 periods apart, per student, divided by the students', () => {
    const model = parseToronto(TINY_CRS, TINY_STU, 6);
    // 0001 in p0, 0002 in p1, 0003 in p5: student 1 (0001, 0002) 1 apart = 16; student 2
    // (0001, 0003) 5 apart = 1; student 3 (0002, 0003) 4 apart = 2.
    const ev = evaluateArrangement(model, parseTorontoSolution('0001 0\n0002 1\n0003 5\n', model));
    expect(ev.hard).toEqual(NO_HARD);
    expect(ev.proximityRaw).toBe(19);
    expect(ev.students).toBe(3);
    expect(ev.soft).toEqual({ ...NO_SOFT, proximity: 19 / 3, total: 19 / 3 });
    // Six or more periods apart costs nothing; the same period is a conflict.
    const far = parseToronto(TINY_CRS, TINY_STU, 13);
    expect(evaluateArrangement(far, parseTorontoSolution('0001 0\n0002 6\n0003 12\n', far)).proximityRaw).toBe(0);
    expect(evaluateArrangement(model, parseTorontoSolution('0001 0\n0002 0\n0003 5\n', model)).hard.conflicts).toBe(1);
  });
});

describe.skipIf(!HAVE_TORONTO)('evaluateArrangement on the published Toronto reference solutions', () => {
  it.each(HAVE_TORONTO ? torontoRows().map((r) => [r.instance, r] as const) : [])('%s reproduces the published total exactly', (_name, row) => {
    const model = readToronto(row.stem, row.periods);
    const ev = evaluateArrangement(model, parseTorontoSolution(readTorontoText(`reference-solutions/${row.stem}.sol`), model));
    expect(ev.hard.total).toBe(0);
    expect(ev.proximityRaw).toBe(row.referenceRaw);
    expect(ev.soft.total.toFixed(6)).toBe(row.referenceCost.toFixed(6));
  });
});
