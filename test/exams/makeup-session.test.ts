import { describe, expect, it } from 'vitest';
import { evaluateArrangement } from '../../src/exams/evaluation/evaluator';
import { PeriodConstraintKind } from '../../src/exams/model/exam-model';
import { ExamModelError } from '../../src/exams/model/exam-model-error';
import { compileMakeupSession, type MakeupSession } from '../../src/exams/model/makeup-session';
import { NO_WEIGHTS } from '../../src/exams/model/weightings';
import { solveExams } from '../../src/exams/solver/solver';

const session: MakeupSession = {
  name: '2026-spring make-up',
  defaultExamDuration: 90,
  periods: [
    { date: '2026-08-24', start: '09:00', duration: 120, penalty: 0 },
    { date: '2026-08-24', start: '14:00', duration: 120, penalty: 0 },
  ],
  rooms: [{ code: 'A101', capacity: 2, penalty: 0 }],
  invigilators: [
    { code: 'T1', availablePeriods: [0, 1] },
    { code: 'T2', availablePeriods: [0] },
  ],
  courses: [{ code: 'MATH', examDuration: 120 }, { code: 'PHYS' }, { code: 'CHEM', roomExclusive: true }],
  enrolments: [
    { student: 's1', course: 'MATH', score: 45 },
    { student: 's2', course: 'MATH', score: 59.5 },
    { student: 's3', course: 'MATH', score: 60 },
    { student: 's1', course: 'PHYS', score: 30 },
    { student: 's2', course: 'PHYS', score: null },
    { student: 's3', course: 'CHEM', score: 88 },
  ],
  constraints: [
    { kind: PeriodConstraintKind.After, first: 'PHYS', second: 'MATH' },
    { kind: PeriodConstraintKind.DifferentPeriod, first: 'CHEM', second: 'MATH' },
  ],
  weightings: NO_WEIGHTS,
};

describe('compileMakeupSession', () => {
  it('makes one exam per course with failing students, sat by exactly those students', () => {
    const model = compileMakeupSession(session);
    // 60 passes, 59.5 fails, no score is not a failure; CHEM has nobody failing.
    expect(model.exams).toEqual([
      { code: 'MATH', duration: 120, students: ['s1', 's2'], roomExclusive: false },
      { code: 'PHYS', duration: 90, students: ['s1'], roomExclusive: false },
    ]);
    // The CHEM constraint has no exam to act on.
    expect(model.constraints).toEqual([{ kind: PeriodConstraintKind.After, first: 'PHYS', second: 'MATH' }]);
    expect(model.roomSplitting).toBe(true);
    expect(model.invigilators).toHaveLength(2);
  });

  it('honours a passing score of the session', () => {
    expect(compileMakeupSession({ ...session, passingScore: 50 }).exams.map((e) => [e.code, e.students])).toEqual([
      ['MATH', ['s1']],
      ['PHYS', ['s1']],
    ]);
  });

  it('refuses enrolments and constraints naming unknown courses', () => {
    expect(() => compileMakeupSession({ ...session, enrolments: [{ student: 's1', course: 'BIO', score: 10 }] })).toThrow(ExamModelError);
    expect(() => compileMakeupSession({ ...session, constraints: [{ kind: PeriodConstraintKind.After, first: 'BIO', second: 'MATH' }] })).toThrow(
      'a AFTER constraint names unknown course BIO',
    );
  });

  it('solves to a feasible arrangement: MATH, then PHYS, each invigilated', () => {
    const model = compileMakeupSession(session);
    const result = solveExams(model, { seed: 1, maxIterations: 1_000 });
    expect(evaluateArrangement(model, result.arrangement).hard.total).toBe(0);
    const period = Object.fromEntries(result.arrangement.placements.map((p) => [p.exam, p.period]));
    expect(period).toEqual({ MATH: 0, PHYS: 1 });
    expect(result.arrangement.invigilation).toEqual([
      { period: 0, room: 'A101', invigilator: 'T1' },
      { period: 1, room: 'A101', invigilator: 'T1' },
    ]);
  });
});
