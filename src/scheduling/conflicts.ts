/**
 * The hard violations of a timetable in words a scheduler understands, e.g.
 * "Tuesday period 3: teacher T12 teaches both C01 and C07". Counting is the
 * evaluator's job; this lists what to fix.
 */
import { slotName } from '../academic/week';
import type { TermData } from './term-data';

export interface PlacedLecture {
  courseId: string;
  lectureIndex: number;
  day: number;
  period: number;
  roomId: string;
}

export function describeConflicts(data: TermData, lectures: readonly PlacedLecture[]): string[] {
  const course = new Map(data.courses.map((c) => [c.id, c]));
  const room = new Map(data.rooms.map((r) => [r.id, r]));
  const teacher = new Map(data.teachers.map((t) => [t.id, t]));
  const out: string[] = [];
  const slot = (l: PlacedLecture) => slotName(data.term, l.day, l.period);
  const bySlot = new Map<number, PlacedLecture[]>();
  for (const l of lectures) {
    const key = l.day * data.term.periodsPerDay + l.period;
    const list = bySlot.get(key) ?? [];
    list.push(l);
    bySlot.set(key, list);
  }
  const keys = [...bySlot.keys()].sort((a, b) => a - b);
  const pairs = <T>(items: T[], f: (a: T, b: T) => void) => {
    for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) f(items[i], items[j]);
  };

  for (const key of keys) {
    const here = bySlot.get(key)!;
    const where = slot(here[0]);
    // The same course twice at once.
    const perCourse = new Map<string, number>();
    for (const l of here) perCourse.set(l.courseId, (perCourse.get(l.courseId) ?? 0) + 1);
    for (const [id, n] of perCourse) if (n > 1) out.push(`${where}: course ${course.get(id)!.code} has ${n} lectures at the same time`);
    const distinct = [...perCourse.keys()].sort((a, b) => course.get(a)!.code.localeCompare(course.get(b)!.code));
    // Teachers.
    pairs(distinct, (a, b) => {
      const ta = course.get(a)!.teacher.id;
      if (ta === course.get(b)!.teacher.id) {
        out.push(`${where}: teacher ${teacher.get(ta)!.code} teaches both ${course.get(a)!.code} and ${course.get(b)!.code}`);
      }
    });
    // Curricula (class groups).
    for (const q of data.curricula) {
      const members = distinct.filter((id) => q.courseIds.includes(id));
      pairs(members, (a, b) => out.push(`${where}: class group ${q.code} has both ${course.get(a)!.code} and ${course.get(b)!.code}`));
    }
    // Rooms.
    const perRoom = new Map<string, string[]>();
    for (const l of here) perRoom.set(l.roomId, [...(perRoom.get(l.roomId) ?? []), course.get(l.courseId)!.code]);
    for (const [id, codes] of perRoom) {
      if (codes.length > 1) out.push(`${where}: room ${room.get(id)!.code} is booked for ${codes.sort().join(' and ')}`);
    }
    // Unavailability.
    for (const id of distinct) {
      const c = course.get(id)!;
      const [day, period] = [here[0].day, here[0].period];
      if (data.courseUnavailable.some((u) => u.courseId === id && u.day === day && u.period === period)) {
        out.push(`${where}: course ${c.code} is scheduled but is unavailable then`);
      }
      if (data.teacherUnavailable.some((u) => u.teacherId === c.teacher.id && u.day === day && u.period === period)) {
        out.push(`${where}: teacher ${teacher.get(c.teacher.id)!.code} is unavailable but teaches ${c.code}`);
      }
    }
  }
  // Lectures not placed.
  for (const c of data.courses) {
    const placed = new Set(lectures.filter((l) => l.courseId === c.id).map((l) => l.day * data.term.periodsPerDay + l.period)).size;
    if (placed < c.lecturesPerWeek) out.push(`course ${c.code}: ${c.lecturesPerWeek - placed} of its ${c.lecturesPerWeek} weekly lectures are not scheduled`);
  }
  return out;
}

/** A short list for an error message: the first `max` items and how many more. */
export function summariseConflicts(items: readonly string[], max = 20): string {
  const shown = items.slice(0, max).map((s) => `- ${s}`);
  if (items.length > max) shown.push(`- … and ${items.length - max} more`);
  return shown.join('\n');
}
