import { describe, expect, it } from 'vitest';
import { evaluateArrangement } from '../../src/exams/evaluation/evaluator';
import { ExamCapacityMode, type ExamModel } from '../../src/exams/model/exam-model';
import { NO_WEIGHTS } from '../../src/exams/model/weightings';
import { solveExams, type ExamSolveProgress } from '../../src/exams/solver/solver';
import { HAVE_ITC_EXAM, HAVE_TORONTO, readItcExam, readToronto } from './datasets';
import { generateSession } from './generated-sessions';

const SESSION = { exams: 40, students: 300, maxExamsPerStudent: 4, days: 5, periodsPerDay: 3, rooms: 6, invigilators: 8, constraints: 8 };
const LARGER = { exams: 100, students: 1000, rooms: 8, periodsPerDay: 4, invigilators: 12 };

/** The solver's own figures must be the evaluator's. */
function checkAgainstEvaluator(model: ExamModel, result: ReturnType<typeof solveExams>) {
  const ev = evaluateArrangement(model, result.arrangement);
  expect(ev.hard.total).toBe(result.hard);
  expect(ev.soft.total).toBeCloseTo(result.cost, 9);
  return ev;
}

describe('solveExams on generated make-up sessions', () => {
  it.each([1, 2, 3])('session %i: every exam placed, no hard violation, figures match the evaluator', (seed) => {
    const model = generateSession(seed, SESSION);
    const result = solveExams(model, { seed: 1, maxIterations: 20_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(result.unplacedExams).toEqual([]);
    expect(ev.hard).toMatchObject({ total: 0 });
    expect(result.arrangement.placements).toHaveLength(model.exams.length);
    // Every room in use has its invigilator (the generated sessions model them).
    expect(result.arrangement.invigilation.length).toBeGreaterThan(0);
    expect(result.stopReason).toBe('iterations');
  });

  it('the search improves on the construction', () => {
    const model = generateSession(4, SESSION);
    const constructed = solveExams(model, { seed: 1, maxIterations: 1 });
    const searched = solveExams(model, { seed: 1, maxIterations: 30_000 });
    expect(searched.hard).toBe(0);
    expect(searched.cost).toBeLessThan(constructed.cost);
  });

  it('keeps clear of periods too short for an exam (chains that would move one there are refused whole)', () => {
    const model = generateSession(12, SESSION);
    // Every third period lasts 60 minutes: only the 60-minute exams may go there.
    model.periods = model.periods.map((p, i) => (i % 3 === 2 ? { ...p, duration: 60 } : p));
    const result = solveExams(model, { seed: 1, maxIterations: 30_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(ev.hard.total).toBe(0);
  });

  it('splits an exam larger than every room over several rooms of one period, each invigilated', () => {
    const model = generateSession(5, { ...SESSION, invigilators: 12 });
    model.exams[0] = { ...model.exams[0], roomExclusive: false, students: Array.from({ length: 150 }, (_, i) => `big${i}`) };
    const capacities = model.rooms.map((r) => r.capacity).sort((a, b) => b - a);
    expect(150).toBeGreaterThan(capacities[0]);
    // As few rooms as the largest ones need: the first k whose seats reach 150.
    let needed = 0;
    for (let seats = 0; seats < 150; needed++) seats += capacities[needed];
    const result = solveExams(model, { seed: 1, maxIterations: 10_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(ev.hard.total).toBe(0);
    const big = result.arrangement.placements.find((p) => p.exam === model.exams[0].code)!;
    expect(big.rooms.length).toBe(needed);
    expect(big.rooms.reduce((n, s) => n + s.seats, 0)).toBe(150);
    for (const s of big.rooms) expect(s.seats).toBeLessThanOrEqual(model.rooms.find((r) => r.code === s.room)!.capacity);
  });

  it('never uses more rooms in a period than there are invigilators available', () => {
    const model = generateSession(6, { ...SESSION, exams: 20, students: 100 });
    // One invigilator, available everywhere: one room per period at most.
    model.invigilators = [{ code: 'ONLY', availablePeriods: model.periods.map((_, p) => p) }];
    model.rooms = model.rooms.map((r) => ({ ...r, capacity: 400 }));
    const result = solveExams(model, { seed: 1, maxIterations: 5_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(ev.hard.total).toBe(0);
    const roomsPerPeriod = new Map<number, Set<string>>();
    for (const p of result.arrangement.placements) for (const s of p.rooms) roomsPerPeriod.set(p.period, (roomsPerPeriod.get(p.period) ?? new Set()).add(s.room));
    for (const rooms of roomsPerPeriod.values()) expect(rooms.size).toBe(1);
  });

  it('leaves an exam that fits no period unplaced and says so', () => {
    const model = generateSession(7, SESSION);
    model.exams[3] = { ...model.exams[3], duration: 500 };
    // Exam 3 must share a period with exam 34 in this session; without that, it goes alone.
    model.constraints = model.constraints.filter((c) => c.first !== 'E003' && c.second !== 'E003');
    const result = solveExams(model, { seed: 1, maxIterations: 2_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(result.unplacedExams).toEqual([model.exams[3].code]);
    expect(ev.hard).toMatchObject({ unplaced: 1, total: 1 });
  });

  it('is deterministic for a seed and an iteration budget', () => {
    const model = generateSession(8, SESSION);
    const a = solveExams(model, { seed: 42, maxIterations: 15_000 });
    const b = solveExams(model, { seed: 42, maxIterations: 15_000 });
    const c = solveExams(model, { seed: 43, maxIterations: 15_000 });
    expect(b.arrangement).toEqual(a.arrangement);
    expect(b.cost).toBe(a.cost);
    expect(c.arrangement).not.toEqual(a.arrangement);
  });

  it('stops promptly when its signal is aborted, returning the best arrangement so far', () => {
    const model = generateSession(9, { ...SESSION, ...LARGER });
    const controller = new AbortController();
    let abortedAt = 0;
    const result = solveExams(model, {
      seed: 1,
      timeLimitMs: 30_000,
      signal: controller.signal,
      progressIntervalMs: 50,
      onProgress: (p) => {
        if (p.phase === 'optimising' && p.iterations > 0 && abortedAt === 0) {
          abortedAt = performance.now();
          controller.abort();
        }
      },
    });
    const took = performance.now() - abortedAt;
    expect(abortedAt).toBeGreaterThan(0);
    expect(result.stopReason).toBe('aborted');
    // Checked between units of work (every few hundred moves): far below the 1 s a worker gets.
    expect(took).toBeLessThan(500);
    expect(checkAgainstEvaluator(model, result).hard.total).toBe(0);
  });

  it('reports progress at least once a second, in phase order', () => {
    const model = generateSession(10, { ...SESSION, ...LARGER });
    const progress: ExamSolveProgress[] = [];
    solveExams(model, { seed: 1, timeLimitMs: 2_500, onProgress: (p) => progress.push(p) });
    expect(progress[0].phase).toBe('constructing');
    expect(progress[progress.length - 1].phase).toBe('optimising');
    expect(progress[progress.length - 1].fraction).toBe(1);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i].elapsedMs - progress[i - 1].elapsedMs).toBeLessThan(1_000);
      expect(progress[i].bestCost).toBeLessThanOrEqual(progress[i - 1].bestCost);
    }
    expect(progress.length).toBeGreaterThanOrEqual(4);
  });

  it('solves an uncapacitated model without rooms', () => {
    const model: ExamModel = {
      ...generateSession(11, { ...SESSION, invigilators: undefined }),
      capacity: ExamCapacityMode.Uncapacitated,
      rooms: [],
      weightings: { ...NO_WEIGHTS, proximity: 1 },
    };
    const result = solveExams(model, { seed: 1, maxIterations: 10_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(ev.hard.total).toBe(0);
    expect(result.arrangement.placements.every((p) => p.rooms.length === 0)).toBe(true);
  });
});

describe.skipIf(!HAVE_TORONTO)('solveExams on a Toronto instance (short run)', () => {
  it('hec-s-92 with its 18 periods: clash-free, within twice the best known cost', () => {
    const model = readToronto('hec-s-92', 18);
    const result = solveExams(model, { seed: 1, timeLimitMs: 3_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(ev.hard.total).toBe(0);
    expect(result.cost).toBeLessThan(2 * 10.03);
  });
});

describe.skipIf(!HAVE_ITC_EXAM)('solveExams on an ITC-2007 set (short run)', () => {
  it('set 4 (one room of 1,200 seats for 21,740 enrolments over 21 periods): feasible', () => {
    const model = readItcExam(4);
    const result = solveExams(model, { seed: 1, timeLimitMs: 4_000 });
    const ev = checkAgainstEvaluator(model, result);
    expect(ev.hard.total).toBe(0);
  });
});
