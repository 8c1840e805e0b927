/**
 * Small random make-up sessions for solver tests, generated from a seed so that every run
 * sees the same instances. Loads are moderate so that a feasible arrangement exists.
 */
import { ExamCapacityMode, PeriodConstraintKind, type ExamModel, type PeriodConstraint } from '../../src/exams/model/exam-model';
import { SeededRandom } from '../../src/exams/solver/random';

export interface SessionSize {
  exams: number;
  students: number;
  /** Exams per student, 1..this. */
  maxExamsPerStudent: number;
  days: number;
  periodsPerDay: number;
  rooms: number;
  invigilators?: number;
  constraints?: number;
}

export function generateSession(seed: number, size: SessionSize): ExamModel {
  const rng = new SeededRandom(seed);
  const exams = Array.from({ length: size.exams }, (_, i) => ({
    code: `E${String(i).padStart(3, '0')}`,
    duration: [60, 90, 120][rng.nextInt(3)],
    students: [] as string[],
    roomExclusive: rng.nextFloat() < 0.05,
  }));
  for (let s = 0; s < size.students; s++) {
    const k = 1 + rng.nextInt(size.maxExamsPerStudent);
    const taken = new Set<number>();
    while (taken.size < Math.min(k, size.exams)) taken.add(rng.nextInt(size.exams));
    for (const e of taken) exams[e].students.push(`S${s}`);
  }
  const periods = [];
  for (let d = 0; d < size.days; d++) {
    for (let t = 0; t < size.periodsPerDay; t++) {
      periods.push({
        date: `2026-07-${String(d + 1).padStart(2, '0')}`,
        start: `${String(8 + 3 * t).padStart(2, '0')}:30`,
        duration: 120,
        penalty: rng.nextFloat() < 0.2 ? 1 + rng.nextInt(20) : 0,
      });
    }
  }
  const rooms = Array.from({ length: size.rooms }, (_, i) => ({ code: `R${i}`, capacity: 20 + rng.nextInt(60), penalty: rng.nextFloat() < 0.3 ? rng.nextInt(10) : 0 }));
  const constraints: PeriodConstraint[] = [];
  const kinds = [PeriodConstraintKind.SamePeriod, PeriodConstraintKind.DifferentPeriod, PeriodConstraintKind.After];
  for (let i = 0; i < (size.constraints ?? 0); i++) {
    const a = rng.nextInt(size.exams);
    const b = rng.nextInt(size.exams);
    if (a === b) continue;
    const kind = kinds[rng.nextInt(3)];
    // A coincidence between exams with common students can never hold; keep the instance feasible.
    if (kind === PeriodConstraintKind.SamePeriod && exams[a].students.some((s) => exams[b].students.includes(s))) continue;
    constraints.push({ kind, first: exams[a].code, second: exams[b].code });
  }
  const P = periods.length;
  const invigilators =
    size.invigilators === undefined
      ? undefined
      : Array.from({ length: size.invigilators }, (_, i) => ({
          code: `T${i}`,
          availablePeriods: Array.from({ length: P }, (_, p) => p).filter(() => rng.nextFloat() < 0.7),
        }));
  return {
    name: `session-${seed}`,
    capacity: ExamCapacityMode.Capacitated,
    roomSplitting: true,
    periods,
    rooms,
    exams,
    constraints,
    weightings: { twoInARow: 7, twoInADay: 5, periodSpread: 3, nonMixedDurations: 10, frontLoad: { largestExams: 5, lastPeriods: 3, weight: 5 }, proximity: 0 },
    invigilators,
  };
}
