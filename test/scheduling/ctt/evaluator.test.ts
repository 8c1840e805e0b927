import { describe, expect, it } from 'vitest';
import { parseCtt, parseSolution } from '../../../src/scheduling/ctt/ctt-format';
import { evaluateTimetable } from '../../../src/scheduling/ctt/evaluator';
import { compileModel } from '../../../src/scheduling/ctt/model';
import { HAVE_CTT_DATA, readCttData } from './datasets';

describe.skipIf(!HAVE_CTT_DATA)('evaluateTimetable on the toy example of the spec', () => {
  const instance = compileModel(parseCtt(readCttData('doc/toy-example.ctt')));
  const solution = parseSolution(readCttData('doc/toy-example.sol'), instance);

  it('reproduces the validator output printed in the spec', () => {
    const ev = evaluateTimetable(instance, solution);
    expect(ev.hard).toEqual({ lectures: 0, conflicts: 3, availability: 0, roomOccupancy: 2, locked: 0, total: 5 });
    expect(ev.soft).toEqual({ roomCapacity: 8, minWorkingDays: 15, curriculumCompactness: 4, roomStability: 3, total: 30 });
    expect(ev.feasible).toBe(false);
  });

  it('counts a missing lecture and an unavailable period', () => {
    // Drop Geotec's last lecture; move ArcTec (0,1) to day 4, unavailable for it.
    const changed = solution
      .filter((a, i) => !(a.course === 'Geotec' && i === solution.length - 1))
      .map((a) => (a.course === 'ArcTec' && a.day === 0 ? { ...a, day: 4, period: 1 } : a));
    const ev = evaluateTimetable(instance, changed);
    expect(ev.hard.lectures).toBe(1);
    expect(ev.hard.availability).toBe(1);
  });

  it('skips a second entry of a course in the same period, as the official validator does', () => {
    const ev = evaluateTimetable(instance, [...solution, { course: 'SceCosC', room: 'A', day: 3, period: 0 }]);
    expect(ev.repeatedEntries).toBe(1);
    expect(ev.hard.roomOccupancy).toBe(2); // the skipped entry does not occupy room A
    expect(ev.hard.lectures).toBe(0);
  });

  it('counts a timetable that is feasible by hand as feasible', () => {
    const feasible = [
      ['SceCosC', 'B', 0, 0], ['SceCosC', 'B', 1, 0], ['SceCosC', 'B', 2, 0],
      ['ArcTec', 'B', 0, 1], ['ArcTec', 'B', 1, 1],  ['ArcTec', 'B', 2, 1],
      ['TecCos', 'B', 0, 2], ['TecCos', 'B', 1, 2], ['TecCos', 'B', 2, 2], ['TecCos', 'B', 3, 0], ['TecCos', 'B', 4, 0],
      ['Geotec', 'A', 0, 3], ['Geotec', 'A', 1, 3], ['Geotec', 'A', 2, 3], ['Geotec', 'A', 3, 1], ['Geotec', 'A', 4, 1],
    ].map(([course, room, day, period]) => ({ course, room, day, period }) as { course: string; room: string; day: number; period: number });
    const ev = evaluateTimetable(instance, feasible);
    expect(ev.hard.total).toBe(0);
    // TecCos (40) in B (50): no capacity cost; all rooms stable; every course on >= min days.
    expect(ev.soft.roomCapacity).toBe(0);
    expect(ev.soft.roomStability).toBe(0);
    expect(ev.soft.minWorkingDays).toBe(0);
    // Cur2 (TecCos, Geotec): day 3 has TecCos at 0 and Geotec at 1, day 4 likewise -> compact.
    // Cur1 days 3 and 4 hold only TecCos at period 0 -> two isolated lectures.
    expect(ev.soft.curriculumCompactness).toBe(2 * 2);
  });
});
