/**
 * A make-up session's arrangement as the office reads it: each sitting (an exam in a
 * period and a room) joined with the exam, period, room and invigilator it names, and
 * grouped by period in time order. The API sends sittings with ids only; the session's
 * pages supply the rest.
 */
export interface ExamPart {
  id: string;
  code: string;
  position: number;
  duration: number | null;
  roomExclusive: boolean;
  course: { id: string; code: string; name: string } | null;
}

export interface PeriodPart {
  id: string;
  position: number;
  /** YYYY-MM-DD; null in a Toronto session. */
  date: string | null;
  /** HH:MM:SS; null in a Toronto session. */
  startTime: string | null;
  duration: number;
}

export interface RoomPart {
  id: string;
  code: string;
  name: string;
  capacity: number;
  position: number;
}

export interface InvigilatorPart {
  id: string;
  teacher: { id: string; code: string; name: string };
}

export interface SessionParts {
  exams: readonly ExamPart[];
  periods: readonly PeriodPart[];
  rooms: readonly RoomPart[];
  invigilators: readonly InvigilatorPart[];
}

export interface SittingRow {
  id: string;
  seats?: number;
  exam: { id: string };
  period: { id: string };
  room: { id: string } | null;
  invigilator?: { id: string } | null;
}

export interface ArrangedSitting {
  id: string;
  seats: number | null;
  exam: ExamPart;
  period: PeriodPart;
  room: RoomPart | null;
  invigilator: InvigilatorPart | null;
}

export interface PeriodGroup {
  period: PeriodPart;
  sittings: ArrangedSitting[];
}

/** Joins sittings with the session's parts; a part the pages did not hold shows as `#id`. */
export function joinSittings(sittings: readonly SittingRow[], parts: SessionParts): ArrangedSitting[] {
  const exams = new Map(parts.exams.map((e) => [e.id, e]));
  const periods = new Map(parts.periods.map((p) => [p.id, p]));
  const rooms = new Map(parts.rooms.map((r) => [r.id, r]));
  const invigilators = new Map(parts.invigilators.map((i) => [i.id, i]));
  return sittings.map((s) => ({
    id: s.id,
    seats: s.seats ?? null,
    exam: exams.get(s.exam.id) ?? { id: s.exam.id, code: `#${s.exam.id}`, position: Number.MAX_SAFE_INTEGER, duration: null, roomExclusive: false, course: null },
    period: periods.get(s.period.id) ?? { id: s.period.id, position: Number.MAX_SAFE_INTEGER, date: null, startTime: null, duration: 0 },
    room: s.room ? (rooms.get(s.room.id) ?? { id: s.room.id, code: `#${s.room.id}`, name: '', capacity: 0, position: Number.MAX_SAFE_INTEGER }) : null,
    invigilator: s.invigilator ? (invigilators.get(s.invigilator.id) ?? { id: s.invigilator.id, teacher: { id: '', code: `#${s.invigilator.id}`, name: '' } }) : null,
  }));
}

/** Sittings grouped by period (time order), each group by room then exam. */
export function groupByPeriod(sittings: readonly ArrangedSitting[]): PeriodGroup[] {
  const groups = new Map<string, PeriodGroup>();
  for (const sitting of sittings) {
    const group = groups.get(sitting.period.id) ?? { period: sitting.period, sittings: [] };
    group.sittings.push(sitting);
    groups.set(sitting.period.id, group);
  }
  const byRoomThenExam = (a: ArrangedSitting, b: ArrangedSitting) =>
    (a.room?.position ?? -1) - (b.room?.position ?? -1) || a.exam.position - b.exam.position || a.id.localeCompare(b.id);
  return [...groups.values()]
    .sort((a, b) => a.period.position - b.period.position)
    .map((group) => ({ period: group.period, sittings: group.sittings.sort(byRoomThenExam) }));
}

/** "2026-01-12 09:00, 120 min" (or "#3, 120 min" for a period with no date). */
export function periodText(period: PeriodPart, minutes: (n: number) => string, numbered: (n: number) => string): string {
  const when = period.date ? `${period.date}${period.startTime ? ` ${period.startTime.slice(0, 5)}` : ''}` : numbered(period.position + 1);
  return `${when}, ${minutes(period.duration)}`;
}

/** What the arrangement views can be filtered by. */
export enum ArrangementAxis {
  ALL = 'all',
  EXAM = 'exam',
  ROOM = 'room',
  INVIGILATOR = 'invigilator',
  STUDENT = 'student',
}

/** A student code as typed, trimmed; null when blank or with blanks inside (the server checks the rest). */
export function normaliseStudentCode(input: string): string | null {
  const code = input.trim();
  return code.length > 0 && !/\s/.test(code) ? code : null;
}
