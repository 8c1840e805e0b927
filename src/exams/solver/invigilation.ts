/**
 * Invigilator duties for a finished arrangement: one invigilator per room in use, from
 * those available in the period, never two rooms at once. The solver already kept the
 * rooms in use per period within the number of invigilators available, so a duty exists
 * for every room; among the candidates the one with the fewest duties so far takes it,
 * which spreads the load (ties: declaration order).
 */
import type { ExamModel, ExamPlacement, InvigilatorDuty } from '../model/exam-model';

export function assignInvigilators(model: ExamModel, placements: readonly ExamPlacement[]): InvigilatorDuty[] {
  const invigilators = model.invigilators;
  if (invigilators === undefined) return [];
  const roomOrder = new Map(model.rooms.map((r, i) => [r.code, i]));
  const roomsByPeriod: Set<string>[] = model.periods.map(() => new Set());
  for (const p of placements) for (const s of p.rooms) roomsByPeriod[p.period].add(s.room);
  const available = invigilators.map((inv) => new Set(inv.availablePeriods));
  const load = new Int32Array(invigilators.length);
  const duties: InvigilatorDuty[] = [];
  roomsByPeriod.forEach((rooms, period) => {
    const candidates = invigilators.map((_, i) => i).filter((i) => available[i].has(period));
    const sortedRooms = [...rooms].sort((a, b) => roomOrder.get(a)! - roomOrder.get(b)!);
    candidates.sort((a, b) => load[a] - load[b] || a - b);
    sortedRooms.forEach((room, k) => {
      if (k >= candidates.length) return; // not enough invigilators: the evaluator counts the uncovered room
      const i = candidates[k];
      load[i]++;
      duties.push({ period, room, invigilator: invigilators[i].code });
    });
  });
  return duties;
}
