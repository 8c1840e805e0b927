import { describe, expect, it } from 'vitest';
import { parseCtt } from '../../../src/scheduling/ctt/ctt-format';
import { evaluateTimetable } from '../../../src/scheduling/ctt/evaluator';
import { compileModel, CttModelError, type CttLockedAssignment, type CttModel } from '../../../src/scheduling/ctt/model';
import { solveCtt, type SolveProgress } from '../../../src/scheduling/ctt/solver';
import { HAVE_CTT_DATA, readCttData } from './datasets';
import { generateModel } from './generated-instances';

describe('solveCtt on generated instances', () => {
  const sizes = [
    { courses: 8, rooms: 2, days: 5, periodsPerDay: 4 },
    { courses: 20, rooms: 4, days: 5, periodsPerDay: 5 },
    { courses: 40, rooms: 6, days: 5, periodsPerDay: 6 },
  ];
  for (const [i, size] of sizes.entries()) {
    it(`finds a feasible timetable that the evaluator agrees with (${size.courses} courses)`, () => {
      const model = generateModel(100 + i, size);
      const instance = compileModel(model);
      const result = solveCtt(instance, { seed: 7, maxIterations: 300_000 });
      const ev = evaluateTimetable(instance, result.assignments);
      expect(result.assignments).toHaveLength(instance.lectureCount);
      expect(ev.hard.total).toBe(0);
      expect(result.hard).toBe(0);
      expect(result.penalty).toBe(ev.soft.total);
    });
  }

  it('respects teacher unavailability by expanding it to the teacher’s courses', () => {
    const model = generateModel(5, { courses: 12, rooms: 3, days: 5, periodsPerDay: 4 });
    const teacher = model.courses[0].teacher;
    const away = [0, 1, 2, 3].map((period) => ({ teacher, day: 1, period }));
    const instance = compileModel({ ...model, teacherUnavailable: away });
    const result = solveCtt(instance, { seed: 3, maxIterations: 200_000 });
    expect(evaluateTimetable(instance, result.assignments).hard.total).toBe(0);
    const ofTeacher = new Set(model.courses.filter((c) => c.teacher === teacher).map((c) => c.code));
    expect(result.assignments.filter((a) => ofTeacher.has(a.course) && a.day === 1)).toEqual([]);
  });

  it('keeps to its time limit on a term whose greedy construction alone takes far longer, and returns a complete timetable', () => {
    // About 16,000 lectures: the greedy construction weighs every course and slot for each
    // of them, more than a minute on this kind of machine.
    const instance = compileModel(generateModel(1, { courses: 6400, rooms: 640, days: 5, periodsPerDay: 8 }));
    const phases: string[] = [];
    const result = solveCtt(instance, { seed: 1, timeLimitMs: 500, onProgress: (p) => phases.push(p.phase) });
    expect(result.stopReason).toBe('time');
    expect(result.elapsedMs).toBeGreaterThanOrEqual(500);
    // Ten times the limit: a loaded machine stays well inside it, a construction that ignores the limit does not.
    expect(result.elapsedMs).toBeLessThan(5_000);
    expect(phases).toContain('optimising');
    // Every lecture has its own slot: the hurried part of the construction left none out.
    expect(result.assignments).toHaveLength(instance.lectureCount);
    const evaluation = evaluateTimetable(instance, result.assignments);
    expect(evaluation.repeatedEntries).toBe(0);
    expect(evaluation.hard.lectures).toBe(0);
    expect(evaluation.hard.roomOccupancy).toBe(0);
    expect(evaluation.hard.total).toBe(result.hard);
    expect(evaluation.soft.total).toBe(result.penalty);
  });

  it('rejects locks that clash or name unknown things', () => {
    const model = generateModel(9, { courses: 6, rooms: 2, days: 5, periodsPerDay: 4 });
    const [a, b] = model.courses;
    const clash: CttModel = {
      ...model,
      locked: [
        { course: a.code, day: 0, period: 0, room: 'R0' },
        { course: b.code, day: 0, period: 0, room: 'R0' },
      ],
    };
    expect(() => compileModel(clash)).toThrow(CttModelError);
    expect(() => compileModel({ ...model, locked: [{ course: a.code, day: 0, period: 0, room: 'R9' }] })).toThrow('unknown room R9');
    expect(() => compileModel({ ...model, locked: [{ course: a.code, lecture: a.lectures, day: 0, period: 0, room: 'R0' }] })).toThrow(CttModelError);
  });
});

describe.skipIf(!HAVE_CTT_DATA)('solveCtt on comp01', () => {
  const model = parseCtt(readCttData('comp01.ctt'));
  const instance = compileModel(model);

  it('reaches 0 hard violations within 3 s and reports progress at least once a second', () => {
    const progress: { at: number; p: SolveProgress }[] = [];
    const t0 = performance.now();
    const result = solveCtt(instance, { seed: 1, timeLimitMs: 3_000, onProgress: (p) => progress.push({ at: performance.now() - t0, p }) });
    const ev = evaluateTimetable(instance, result.assignments);
    expect(ev.hard.total).toBe(0);
    expect(ev.soft.total).toBe(result.penalty);
    expect(result.penalty).toBeLessThan(40);
    expect(result.stopReason === 'time' || result.stopReason === 'optimal').toBe(true);
    expect(progress[0].p.phase).toBe('constructing');
    expect(progress.some((x) => x.p.phase === 'optimising')).toBe(true);
    const times = [0, ...progress.map((x) => x.at), performance.now() - t0];
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeLessThan(1_000);
    const last = progress[progress.length - 1].p;
    expect(last.bestHard).toBe(0);
    expect(last.bestPenalty).toBe(result.penalty);
    expect(last.fraction).toBeGreaterThan(0.9);
  });

  it('gives identical results for the same seed and iteration budget, different ones for another seed', () => {
    const a = solveCtt(instance, { seed: 42, maxIterations: 400_000 });
    const b = solveCtt(instance, { seed: 42, maxIterations: 400_000 });
    const c = solveCtt(instance, { seed: 43, maxIterations: 400_000 });
    expect(a.stopReason).toBe('iterations');
    expect(b.assignments).toEqual(a.assignments);
    expect(b.penalty).toBe(a.penalty);
    expect(c.assignments).not.toEqual(a.assignments);
  });

  it('keeps its incremental costs exact through many Kempe-chain swaps and plain moves', () => {
    for (const kempeRate of [0, 0.5]) {
      const result = solveCtt(instance, { seed: 5, maxIterations: 150_000, kempeRate });
      const ev = evaluateTimetable(instance, result.assignments);
      expect(ev.hard.total).toBe(result.hard);
      expect(ev.soft.total).toBe(result.penalty);
      expect(ev.repeatedEntries).toBe(0);
    }
  });

  it('never moves locked assignments', () => {
    // Lock 12 lectures where another seed's timetable put them (a feasible but arbitrary place).
    const donor = solveCtt(instance, { seed: 99, maxIterations: 200_000 });
    const locked: CttLockedAssignment[] = donor.assignments
      .filter((_, i) => i % 13 === 0)
      .map((a, i) => (i % 2 === 0 ? { ...a } : { ...a, lecture: 0 }));
    // Two lectures of one course locked by index must name different lectures.
    const seen = new Set<string>();
    for (const lock of locked) {
      if (lock.lecture === undefined) continue;
      if (seen.has(lock.course)) delete lock.lecture;
      seen.add(lock.course);
    }
    const lockedInstance = compileModel({ ...model, locked });
    const result = solveCtt(lockedInstance, { seed: 1, maxIterations: 600_000 });
    const ev = evaluateTimetable(lockedInstance, result.assignments);
    expect(ev.hard.locked).toBe(0);
    expect(ev.hard.total).toBe(0);
    for (const lock of locked) {
      expect(result.assignments).toContainEqual({ course: lock.course, room: lock.room, day: lock.day, period: lock.period });
    }
  });

  it('stops promptly once shouldStop turns true (not at its 30 s limit)', () => {
    const t0 = performance.now();
    const stopAt = t0 + 400;
    const result = solveCtt(instance, { seed: 1, timeLimitMs: 30_000, shouldStop: () => performance.now() >= stopAt });
    const returned = performance.now();
    expect(result.stopReason).toBe('aborted');
    // The check runs every few thousand moves (~ms); 500 ms leaves room for a loaded machine.
    expect(returned - stopAt).toBeLessThan(500);
    expect(result.assignments).toHaveLength(instance.lectureCount);
  });

  it('returns at once for an already aborted signal, with no timetable if construction never finished', () => {
    const controller = new AbortController();
    controller.abort();
    const result = solveCtt(instance, { seed: 1, signal: controller.signal });
    expect(result.stopReason).toBe('aborted');
    expect(result.assignments).toEqual([]);
    expect(result.hard).toBe(-1);
  });
});
