/**
 * The solver's working timetable with incremental cost bookkeeping.
 *
 * Local search evaluates millions of moves, so a move's cost change must be computed
 * from the few counters it touches, never by re-evaluating the whole timetable. Every
 * change goes through `insert`/`remove`, which update the counters and return the soft
 * delta (the hard delta is left in `lastHardDelta`); a move is a few removes and inserts,
 * and a rejected move is undone by the reverse sequence. All state is integer typed arrays.
 *
 * Room occupancy is structural: a (period, room) slot holds at most one lecture, and
 * every lecture is always in some slot after construction. The remaining hard
 * constraints are counted:
 *  - conflicts: per curriculum and per teacher, lectures beyond the first in a period;
 *  - availability: lectures in a period unavailable to their course.
 * This is zero exactly when the official validator's Conflicts/Availability are zero
 * (it counts conflicting course pairs instead, which weighs the same zero).
 */
import { CTT_WEIGHTS } from './evaluator';
import type { CttInstance } from './model';

const W_DAYS = CTT_WEIGHTS.minWorkingDays;
const W_COMPACT = CTT_WEIGHTS.curriculumCompactness;
const W_STABILITY = CTT_WEIGHTS.roomStability;

export class TimetableState {
  readonly P: number;
  readonly R: number;
  readonly D: number;
  readonly ppd: number;
  /** slot[p * R + r] = lecture or -1. */
  readonly slot: Int32Array;
  /** Per lecture: period and room, or -1 while unplaced. */
  readonly lecPeriod: Int32Array;
  readonly lecRoom: Int32Array;
  readonly lecCourse: Int32Array;
  readonly courseTeacher: Int32Array;
  readonly courseMinDays: Int32Array;
  readonly courseCurStart: Int32Array;
  readonly courseCur: Int32Array;
  readonly unavailable: Uint8Array;
  /** capacityPenalty[c * R + r]: students over capacity of one lecture of c in r. */
  readonly capacityPenalty: Int32Array;
  readonly dayOf: Int32Array;
  readonly slotOfDay: Int32Array;

  readonly courseRoomCount: Int32Array;
  readonly courseRoomsUsed: Int32Array;
  readonly courseDayCount: Int32Array;
  readonly courseDays: Int32Array;
  readonly curriculumPeriod: Int32Array;
  readonly teacherPeriod: Int32Array;
  readonly freeRooms: Int32Array;

  hard = 0;
  soft = 0;
  lastHardDelta = 0;

  constructor(readonly instance: CttInstance) {
    const { periods: P, roomCount: R, days: D, periodsPerDay: ppd, courseCount: C } = instance;
    this.P = P;
    this.R = R;
    this.D = D;
    this.ppd = ppd;
    this.slot = new Int32Array(P * R).fill(-1);
    this.lecPeriod = new Int32Array(instance.lectureCount).fill(-1);
    this.lecRoom = new Int32Array(instance.lectureCount).fill(-1);
    this.lecCourse = instance.lectureCourse;
    this.courseTeacher = instance.courseTeacher;
    this.courseMinDays = instance.courseMinDays;
    this.courseCurStart = instance.courseCurriculaStart;
    this.courseCur = instance.courseCurricula;
    this.unavailable = instance.unavailable;
    this.capacityPenalty = new Int32Array(C * R);
    for (let c = 0; c < C; c++) {
      for (let r = 0; r < R; r++) {
        const over = instance.courseStudents[c] - instance.roomCapacity[r];
        this.capacityPenalty[c * R + r] = over > 0 ? over * CTT_WEIGHTS.roomCapacity : 0;
      }
    }
    this.dayOf = new Int32Array(P);
    this.slotOfDay = new Int32Array(P);
    for (let p = 0; p < P; p++) {
      this.dayOf[p] = Math.floor(p / ppd);
      this.slotOfDay[p] = p % ppd;
    }
    this.courseRoomCount = new Int32Array(C * R);
    this.courseRoomsUsed = new Int32Array(C);
    this.courseDayCount = new Int32Array(C * D);
    this.courseDays = new Int32Array(C);
    this.curriculumPeriod = new Int32Array(instance.curriculumCount * P);
    this.teacherPeriod = new Int32Array(instance.teacherCount * P);
    this.freeRooms = new Int32Array(P).fill(R);
    // With no lecture placed every course misses all its working days.
    for (let c = 0; c < C; c++) this.soft += W_DAYS * instance.courseMinDays[c];
  }

  /** Places lecture l in (p, r), which must be empty; returns the soft delta. */
  insert(l: number, p: number, r: number): number {
    const c = this.lecCourse[l];
    const P = this.P;
    const R = this.R;
    let soft = this.capacityPenalty[c * R + r];
    let hard = 0;
    if (this.courseRoomCount[c * R + r]++ === 0) {
      if (this.courseRoomsUsed[c]++ >= 1) soft += W_STABILITY;
    }
    const d = this.dayOf[p];
    if (this.courseDayCount[c * this.D + d]++ === 0) {
      if (this.courseDays[c]++ < this.courseMinDays[c]) soft -= W_DAYS;
    }
    const s = this.slotOfDay[p];
    const ppd = this.ppd;
    const cp = this.curriculumPeriod;
    for (let i = this.courseCurStart[c], end = this.courseCurStart[c + 1]; i < end; i++) {
      const base = this.courseCur[i] * P;
      const n = cp[base + p];
      const left = s > 0 ? cp[base + p - 1] : 0;
      const right = s < ppd - 1 ? cp[base + p + 1] : 0;
      if (n > 0) {
        hard++;
        if (left === 0 && right === 0) soft += W_COMPACT;
      } else {
        if (left === 0 && right === 0) soft += W_COMPACT;
        // A neighbour that was isolated stops being so.
        if (left > 0 && (s < 2 || cp[base + p - 2] === 0)) soft -= W_COMPACT * left;
        if (right > 0 && (s > ppd - 3 || cp[base + p + 2] === 0)) soft -= W_COMPACT * right;
      }
      cp[base + p] = n + 1;
    }
    if (this.teacherPeriod[this.courseTeacher[c] * P + p]++ > 0) hard++;
    if (this.unavailable[c * P + p] !== 0) hard++;
    this.slot[p * R + r] = l;
    this.lecPeriod[l] = p;
    this.lecRoom[l] = r;
    this.freeRooms[p]--;
    this.soft += soft;
    this.hard += hard;
    this.lastHardDelta = hard;
    return soft;
  }

  /** Takes lecture l out of its slot; returns the soft delta. */
  remove(l: number): number {
    const c = this.lecCourse[l];
    const p = this.lecPeriod[l];
    const r = this.lecRoom[l];
    const P = this.P;
    const R = this.R;
    let soft = -this.capacityPenalty[c * R + r];
    let hard = 0;
    if (--this.courseRoomCount[c * R + r] === 0) {
      if (--this.courseRoomsUsed[c] >= 1) soft -= W_STABILITY;
    }
    const d = this.dayOf[p];
    if (--this.courseDayCount[c * this.D + d] === 0) {
      if (--this.courseDays[c] < this.courseMinDays[c]) soft += W_DAYS;
    }
    const s = this.slotOfDay[p];
    const ppd = this.ppd;
    const cp = this.curriculumPeriod;
    for (let i = this.courseCurStart[c], end = this.courseCurStart[c + 1]; i < end; i++) {
      const base = this.courseCur[i] * P;
      const n = cp[base + p];
      const left = s > 0 ? cp[base + p - 1] : 0;
      const right = s < ppd - 1 ? cp[base + p + 1] : 0;
      if (n > 1) {
        hard--;
        if (left === 0 && right === 0) soft -= W_COMPACT;
      } else {
        if (left === 0 && right === 0) soft -= W_COMPACT;
        // A neighbour whose only company was this lecture becomes isolated.
        if (left > 0 && (s < 2 || cp[base + p - 2] === 0)) soft += W_COMPACT * left;
        if (right > 0 && (s > ppd - 3 || cp[base + p + 2] === 0)) soft += W_COMPACT * right;
      }
      cp[base + p] = n - 1;
    }
    if (--this.teacherPeriod[this.courseTeacher[c] * P + p] > 0) hard--;
    if (this.unavailable[c * P + p] !== 0) hard--;
    this.slot[p * R + r] = -1;
    this.lecPeriod[l] = -1;
    this.lecRoom[l] = -1;
    this.freeRooms[p]++;
    this.soft += soft;
    this.hard += hard;
    this.lastHardDelta = hard;
    return soft;
  }
}
