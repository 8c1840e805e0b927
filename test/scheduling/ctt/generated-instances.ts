/**
 * Small random CB-CTT models for solver tests, generated from a seed so that every run
 * sees the same instances. Loads are kept moderate so that a feasible timetable exists.
 */
import type { CttModel } from '../../../src/scheduling/ctt/model';
import { SeededRandom } from '../../../src/scheduling/ctt/random';

export function generateModel(seed: number, size: { courses: number; rooms: number; days: number; periodsPerDay: number }): CttModel {
  const rng = new SeededRandom(seed);
  const { courses: nCourses, rooms: nRooms, days, periodsPerDay } = size;
  const teachers = Math.max(2, Math.round(nCourses * 0.8));
  const courses = Array.from({ length: nCourses }, (_, i) => {
    const lectures = 1 + rng.nextInt(4);
    return {
      code: `C${String(i).padStart(3, '0')}`,
      teacher: `T${rng.nextInt(teachers)}`,
      lectures,
      minWorkingDays: 1 + rng.nextInt(Math.min(lectures, days)),
      students: 10 + rng.nextInt(90),
    };
  });
  const rooms = Array.from({ length: nRooms }, (_, i) => ({ code: `R${i}`, capacity: 20 + rng.nextInt(100) }));
  const curricula = Array.from({ length: Math.ceil(nCourses / 3) }, (_, q) => {
    const members = new Set<string>();
    const want = 2 + rng.nextInt(3);
    while (members.size < want) members.add(courses[rng.nextInt(nCourses)].code);
    return { code: `Q${q}`, courses: [...members] };
  });
  const unavailable = [];
  for (let i = 0; i < nCourses; i++) {
    if (rng.nextFloat() < 0.5) unavailable.push({ course: courses[i].code, day: rng.nextInt(days), period: rng.nextInt(periodsPerDay) });
  }
  return { name: `generated-${seed}`, days, periodsPerDay, courses, rooms, curricula, unavailable };
}
