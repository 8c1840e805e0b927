import { describe, expect, it } from 'vitest';
import { ConflictKind, findPlanConflicts, summariseConflicts } from '../../src/web/views/timetabling/plan-conflicts';
import { buildPlanGrid, defaultResource, GridAxis } from '../../src/web/views/timetabling/plan-grid';
import { joinPlanLectures, type AssignmentRow, type TermResources } from '../../src/web/views/timetabling/plan-lecture';
import { buildWeekGrid } from '../../src/web/views/timetabling/week-grid';

const term: TermResources = {
  teachers: [
    { id: 't1', code: 'T001', name: 'Wang Wei' },
    { id: 't2', code: 'T002', name: 'Li Fang' },
  ],
  rooms: [
    { id: 'r1', code: 'R101', name: 'Room 101' },
    { id: 'r2', code: 'R102', name: 'Room 102' },
  ],
  courses: [
    { id: 'c1', code: 'C001', name: 'Linear Algebra', teacher: { id: 't1' } },
    { id: 'c2', code: 'C002', name: 'Mechanics', teacher: { id: 't1' } },
    { id: 'c3', code: 'C003', name: 'Chinese Literature', teacher: { id: 't2' } },
    { id: 'c4', code: 'C004', name: 'Marketing', teacher: { id: 't2' } },
  ],
  curricula: [
    { id: 'q1', code: 'CS-1', name: 'Computer Science 1', courseIds: ['c1', 'c3'] },
    { id: 'q2', code: 'EE-1', name: 'Electrical Engineering 1', courseIds: ['c2', 'c4'] },
  ],
};

const a = (id: string, course: string, room: string, day: number, period: number, extra: Partial<AssignmentRow> = {}): AssignmentRow => ({
  id,
  course: { id: course },
  room: { id: room },
  day,
  period,
  lectureIndex: 0,
  locked: false,
  ...extra,
});

describe('buildWeekGrid', () => {
  it('puts each item at its (day, period), keeps labels, and returns items outside the week apart', () => {
    const grid = buildWeekGrid({ daysPerWeek: 3, periodsPerDay: 2, periodLabels: ['08:00', '10:00'] }, [
      { day: 0, period: 0, n: 1 },
      { day: 2, period: 1, n: 2 },
      { day: 2, period: 1, n: 3 },
      { day: 3, period: 0, n: 4 },
      { day: 0, period: -1, n: 5 },
    ]);
    expect(grid.days).toEqual([0, 1, 2]);
    expect(grid.rows.map((r) => r.label)).toEqual(['08:00', '10:00']);
    expect(grid.rows[0]!.cells.map((c) => c.items.map((i) => i.n))).toEqual([[1], [], []]);
    expect(grid.rows[1]!.cells.map((c) => c.items.map((i) => i.n))).toEqual([[], [], [2, 3]]);
    expect(grid.outside.map((i) => i.n)).toEqual([4, 5]);
  });

  it('labels periods without a label as empty and refuses an empty week', () => {
    expect(buildWeekGrid({ daysPerWeek: 1, periodsPerDay: 2, periodLabels: ['x'] }, []).rows.map((r) => r.label)).toEqual(['x', '']);
    expect(() => buildWeekGrid({ daysPerWeek: 0, periodsPerDay: 2 }, [])).toThrow(RangeError);
  });
});

describe('joinPlanLectures', () => {
  it('joins course, teacher, room and curricula, and names an unknown reference by its id', () => {
    const [known, lost] = joinPlanLectures([a('x1', 'c1', 'r2', 1, 2, { lectureIndex: 3, locked: true }), a('x2', 'c9', 'r9', 0, 0)], term);
    expect(known).toEqual({
      assignmentId: 'x1',
      day: 1,
      period: 2,
      lectureIndex: 3,
      locked: true,
      course: { id: 'c1', code: 'C001', name: 'Linear Algebra' },
      teacher: { id: 't1', code: 'T001', name: 'Wang Wei' },
      room: { id: 'r2', code: 'R102', name: 'Room 102' },
      curriculumIds: ['q1'],
    });
    expect(lost!.course.code).toBe('#c9');
    expect(lost!.room.code).toBe('#r9');
    expect(lost!.curriculumIds).toEqual([]);
  });
});

describe('findPlanConflicts', () => {
  it('finds a teacher, a class group and a room used twice at one slot, and nothing else', () => {
    const lectures = joinPlanLectures(
      [
        a('teach1', 'c1', 'r1', 0, 0), // t1, q1
        a('teach2', 'c2', 'r2', 0, 0), // t1, q2: teacher clash only
        a('cur1', 'c3', 'r1', 1, 0), // t2, q1
        a('cur2', 'c1', 'r2', 1, 0), // t1, q1: curriculum clash only
        a('room1', 'c1', 'r1', 2, 3), // t1, q1
        a('room2', 'c4', 'r1', 2, 3), // t2, q2: room clash only
        a('free1', 'c1', 'r1', 3, 0),
        a('free2', 'c4', 'r2', 3, 0), // different teacher, class group and room
      ],
      term,
    );
    const { list, byAssignment } = findPlanConflicts(lectures);
    expect(list).toEqual([
      { kind: ConflictKind.TEACHER, resourceId: 't1', day: 0, period: 0, assignmentIds: ['teach1', 'teach2'] },
      { kind: ConflictKind.CURRICULUM, resourceId: 'q1', day: 1, period: 0, assignmentIds: ['cur1', 'cur2'] },
      { kind: ConflictKind.ROOM, resourceId: 'r1', day: 2, period: 3, assignmentIds: ['room1', 'room2'] },
    ]);
    expect([...byAssignment.keys()].sort()).toEqual(['cur1', 'cur2', 'room1', 'room2', 'teach1', 'teach2']);
    expect(byAssignment.has('free1')).toBe(false);
  });

  it('counts a course in a curriculum twice only once for that curriculum', () => {
    const doubled: TermResources = { ...term, curricula: [{ id: 'q1', code: 'CS-1', name: '', courseIds: ['c1', 'c1'] }] };
    expect(findPlanConflicts(joinPlanLectures([a('x', 'c1', 'r1', 0, 0)], doubled)).list).toEqual([]);
  });
});

describe('buildPlanGrid', () => {
  const shape = { daysPerWeek: 5, periodsPerDay: 4, periodLabels: ['08:00–09:35'] };
  const lectures = joinPlanLectures(
    [
      a('l1', 'c1', 'r1', 0, 0, { locked: true }),
      a('l2', 'c2', 'r2', 0, 0), // same teacher t1 as l1
      a('l3', 'c3', 'r1', 4, 3, { lectureIndex: 1 }),
      a('l4', 'c3', 'r2', 4, 3, { lectureIndex: 0 }), // same course twice: teacher and class-group clash
    ],
    term,
  );

  it("shows a teacher's week with clashes and locks marked", () => {
    const grid = buildPlanGrid(shape, lectures, GridAxis.TEACHER, 't1');
    expect(grid.lectureCount).toBe(2);
    expect(grid.lockedCount).toBe(1);
    expect(grid.conflictCount).toBe(2);
    const cell = grid.rows[0]!.cells[0]!;
    expect(cell.items.map((l) => [l.assignmentId, l.locked, l.conflicts])).toEqual([
      ['l1', true, [ConflictKind.TEACHER]],
      ['l2', false, [ConflictKind.TEACHER]],
    ]);
    expect(grid.rows[0]!.label).toBe('08:00–09:35');
    expect(grid.rows[3]!.label).toBe('');
  });

  it("shows a room's week with a clash made elsewhere, ordered by course and lecture", () => {
    const room2 = buildPlanGrid(shape, lectures, GridAxis.ROOM, 'r2');
    expect(room2.rows[0]!.cells[0]!.items.map((l) => l.assignmentId)).toEqual(['l2']);
    expect(room2.rows[0]!.cells[0]!.items[0]!.conflicts).toEqual([ConflictKind.TEACHER]);
    const q1 = buildPlanGrid(shape, lectures, GridAxis.CURRICULUM, 'q1');
    const friday = q1.rows[3]!.cells[4]!.items;
    expect(friday.map((l) => [l.assignmentId, l.lectureIndex])).toEqual([
      ['l4', 0],
      ['l3', 1],
    ]);
    expect(friday[0]!.conflicts).toEqual([ConflictKind.TEACHER, ConflictKind.CURRICULUM]);
    expect(q1.lectureCount).toBe(3);
  });

  it('picks the first resource by code that has lectures', () => {
    const rooms = [
      { id: 'r9', code: 'A000' },
      { id: 'r2', code: 'R102' },
      { id: 'r1', code: 'R101' },
    ];
    expect(defaultResource(rooms, lectures, GridAxis.ROOM)).toBe('r1');
    expect(defaultResource(rooms, [], GridAxis.ROOM)).toBe('r9');
    expect(defaultResource([], lectures, GridAxis.ROOM)).toBeNull();
  });
});

describe('summariseConflicts', () => {
  it("names each clash's teacher, class group or room and its courses", () => {
    const lectures = joinPlanLectures([a('x1', 'c2', 'r1', 2, 1), a('x2', 'c1', 'r2', 2, 1), a('x3', 'c9', 'r2', 4, 0), a('x4', 'c3', 'r2', 4, 0)], term);
    expect(summariseConflicts(findPlanConflicts(lectures), lectures, term)).toEqual([
      { kind: ConflictKind.TEACHER, resourceId: 't1', resourceCode: 'T001', day: 2, period: 1, courseCodes: ['C001', 'C002'] },
      { kind: ConflictKind.ROOM, resourceId: 'r2', resourceCode: 'R102', day: 4, period: 0, courseCodes: ['#c9', 'C003'] },
    ]);
  });
});
