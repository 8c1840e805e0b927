import { ConflictKind, findPlanConflicts, type PlanConflicts } from './plan-conflicts';
import type { PlanLecture } from './plan-lecture';
import { buildWeekGrid, type WeekGrid, type WeekShape } from './week-grid';

/** Whose week a plan grid shows. */
export enum GridAxis {
  CURRICULUM = 'curriculum',
  TEACHER = 'teacher',
  ROOM = 'room',
}

/** A lecture in a grid cell, with the clashes it is in (anywhere in the plan). */
export interface GridLecture extends PlanLecture {
  conflicts: ConflictKind[];
}

export interface PlanGrid extends WeekGrid<GridLecture> {
  axis: GridAxis;
  resourceId: string;
  /** Lectures in this grid that clash with some lecture of the plan. */
  conflictCount: number;
  lockedCount: number;
  lectureCount: number;
}

export function lectureBelongsTo(lecture: PlanLecture, axis: GridAxis, resourceId: string): boolean {
  switch (axis) {
    case GridAxis.TEACHER:
      return lecture.teacher.id === resourceId;
    case GridAxis.ROOM:
      return lecture.room.id === resourceId;
    case GridAxis.CURRICULUM:
      return lecture.curriculumIds.includes(resourceId);
  }
}

const KIND_ORDER = [ConflictKind.TEACHER, ConflictKind.CURRICULUM, ConflictKind.ROOM];

/**
 * One curriculum's, teacher's or room's week of a plan: its lectures by (day, period),
 * ordered by course code and lecture, each marked with its clashes and lock. Pass the
 * conflicts of the whole plan when drawing several grids of it.
 */
export function buildPlanGrid(
  shape: WeekShape,
  lectures: readonly PlanLecture[],
  axis: GridAxis,
  resourceId: string,
  conflicts: PlanConflicts = findPlanConflicts(lectures),
): PlanGrid {
  const mine: GridLecture[] = lectures
    .filter((lecture) => lectureBelongsTo(lecture, axis, resourceId))
    .map((lecture) => {
      const kinds = conflicts.byAssignment.get(lecture.assignmentId);
      return { ...lecture, conflicts: kinds ? KIND_ORDER.filter((kind) => kinds.has(kind)) : [] };
    });
  const grid = buildWeekGrid(shape, mine, (a, b) => a.course.code.localeCompare(b.course.code) || a.lectureIndex - b.lectureIndex);
  return {
    ...grid,
    axis,
    resourceId,
    conflictCount: mine.filter((lecture) => lecture.conflicts.length > 0).length,
    lockedCount: mine.filter((lecture) => lecture.locked).length,
    lectureCount: mine.length,
  };
}

/** The resource to show first: the first (by code) with any lecture, else the first. */
export function defaultResource(resources: readonly { id: string; code: string }[], lectures: readonly PlanLecture[], axis: GridAxis): string | null {
  const sorted = [...resources].sort((a, b) => a.code.localeCompare(b.code));
  return sorted.find((r) => lectures.some((lecture) => lectureBelongsTo(lecture, axis, r.id)))?.id ?? sorted[0]?.id ?? null;
}
