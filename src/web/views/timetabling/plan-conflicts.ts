import type { PlanLecture } from './plan-lecture';

/** What two lectures at one (day, period) share: a teacher, a class group or a room. */
export enum ConflictKind {
  TEACHER = 'teacher',
  CURRICULUM = 'curriculum',
  ROOM = 'room',
}

/** Lectures that share one teacher, curriculum or room at one slot (two or more). */
export interface SlotConflict {
  kind: ConflictKind;
  /** The teacher's, curriculum's or room's id. */
  resourceId: string;
  day: number;
  period: number;
  assignmentIds: string[];
}

export interface PlanConflicts {
  list: SlotConflict[];
  /** For each lecture in a conflict, the kinds of conflict it is in. */
  byAssignment: Map<string, Set<ConflictKind>>;
}

/**
 * Every clash of the whole plan, whichever grid is on screen: a teacher's grid must
 * show that their lecture's room is double-booked by someone else. Linear in the
 * lectures (one bucket per resource and slot).
 */
export function findPlanConflicts(lectures: readonly PlanLecture[]): PlanConflicts {
  const buckets = new Map<string, { kind: ConflictKind; resourceId: string; day: number; period: number; assignmentIds: string[] }>();
  const add = (kind: ConflictKind, resourceId: string, lecture: PlanLecture) => {
    const key = `${kind}\u0000${resourceId}\u0000${lecture.day}\u0000${lecture.period}`;
    const bucket = buckets.get(key);
    if (bucket) bucket.assignmentIds.push(lecture.assignmentId);
    else buckets.set(key, { kind, resourceId, day: lecture.day, period: lecture.period, assignmentIds: [lecture.assignmentId] });
  };
  for (const lecture of lectures) {
    add(ConflictKind.TEACHER, lecture.teacher.id, lecture);
    add(ConflictKind.ROOM, lecture.room.id, lecture);
    for (const curriculumId of new Set(lecture.curriculumIds)) add(ConflictKind.CURRICULUM, curriculumId, lecture);
  }
  const list: SlotConflict[] = [];
  const byAssignment = new Map<string, Set<ConflictKind>>();
  for (const bucket of buckets.values()) {
    if (bucket.assignmentIds.length < 2) continue;
    list.push(bucket);
    for (const id of bucket.assignmentIds) {
      const kinds = byAssignment.get(id) ?? new Set<ConflictKind>();
      kinds.add(bucket.kind);
      byAssignment.set(id, kinds);
    }
  }
  list.sort((a, b) => a.day - b.day || a.period - b.period || a.kind.localeCompare(b.kind) || a.resourceId.localeCompare(b.resourceId));
  return { list, byAssignment };
}

/** A clash as the page words it: where, whose, and the courses that meet there. */
export interface ConflictSummary {
  kind: ConflictKind;
  resourceId: string;
  /** The teacher's, class group's or room's code (`#id` when the term's pages did not hold it). */
  resourceCode: string;
  day: number;
  period: number;
  /** The clashing lectures' course codes, sorted (a course twice appears twice). */
  courseCodes: string[];
}

/** Names each clash's resource and courses, in the order of `conflicts.list`. */
export function summariseConflicts(
  conflicts: PlanConflicts,
  lectures: readonly PlanLecture[],
  resources: { teachers: readonly { id: string; code: string }[]; rooms: readonly { id: string; code: string }[]; curricula: readonly { id: string; code: string }[] },
): ConflictSummary[] {
  const byId = new Map(lectures.map((l) => [l.assignmentId, l]));
  const codes = {
    [ConflictKind.TEACHER]: new Map(resources.teachers.map((r) => [r.id, r.code])),
    [ConflictKind.ROOM]: new Map(resources.rooms.map((r) => [r.id, r.code])),
    [ConflictKind.CURRICULUM]: new Map(resources.curricula.map((r) => [r.id, r.code])),
  };
  return conflicts.list.map((c) => ({
    kind: c.kind,
    resourceId: c.resourceId,
    resourceCode: codes[c.kind].get(c.resourceId) ?? `#${c.resourceId}`,
    day: c.day,
    period: c.period,
    courseCodes: c.assignmentIds.map((id) => byId.get(id)?.course.code ?? `#${id}`).sort(),
  }));
}
