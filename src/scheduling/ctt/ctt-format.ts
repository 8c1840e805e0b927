/**
 * The ITC-2007 track-3 text formats: the `.ctt` instance and the solution file
 * (`<CourseID> <RoomID> <Day> <DayPeriod>` per lecture).
 *
 * Copies of the instances circulate with spaces or tabs, so tokens are split on any run
 * of whitespace. Errors name the 1-based line, because a person fixes them in an editor.
 */
import type { CttAssignment, CttCourse, CttCurriculum, CttCourseUnavailability, CttModel, CttRoom, CttInstance } from './model';

export class CttFormatError extends Error {
  override readonly name = 'CttFormatError';
  constructor(
    /** 1-based line of the offending token (the last line when the file ends early). */
    readonly line: number,
    readonly detail: string,
  ) {
    super(`line ${line}: ${detail}`);
  }
}

interface Token {
  text: string;
  line: number;
}

function tokenize(text: string): { tokens: Token[]; lastLine: number } {
  const tokens: Token[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  lines.forEach((raw, i) => {
    for (const t of raw.split(/\s+/)) if (t.length > 0) tokens.push({ text: t, line: i + 1 });
  });
  return { tokens, lastLine: Math.max(1, lines.length) };
}

/** The largest count a file may give: the database keeps counts (students, capacities) as 32-bit integers. */
export const MAX_CTT_INTEGER = 2_147_483_647;

const SECTIONS = ['COURSES:', 'ROOMS:', 'CURRICULA:', 'UNAVAILABILITY_CONSTRAINTS:', 'END.'];
const HEADER = ['Name:', 'Courses:', 'Rooms:', 'Days:', 'Periods_per_day:', 'Curricula:', 'Constraints:'] as const;

class Reader {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly lastLine: number,
  ) {}

  get line(): number {
    return this.pos < this.tokens.length ? this.tokens[this.pos].line : this.lastLine;
  }

  peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  atEnd(): boolean {
    return this.pos >= this.tokens.length;
  }

  next(what: string): Token {
    const t = this.tokens[this.pos];
    if (!t) throw new CttFormatError(this.lastLine, `expected ${what}, but the file ends here`);
    this.pos++;
    return t;
  }

  keyword(word: string): void {
    const t = this.next(`"${word}"`);
    if (t.text !== word) throw new CttFormatError(t.line, `expected "${word}", found "${t.text}"`);
  }

  /** An identifier that must not be a section keyword (a sign of a short line). */
  id(what: string): Token {
    const t = this.next(what);
    this.rejectSection(t, what);
    return t;
  }

  private rejectSection(t: Token, what: string): void {
    if (SECTIONS.includes(t.text)) {
      // The entry before the keyword is short: point at that entry's line, not the keyword's.
      const previous = this.pos >= 2 ? this.tokens[this.pos - 2].line : t.line;
      throw new CttFormatError(previous, `expected ${what}, found section "${t.text}" (is this line incomplete?)`);
    }
  }

  int(what: string, min = 0): { value: number; line: number } {
    const t = this.next(what);
    this.rejectSection(t, what);
    if (!/^[+-]?\d+$/.test(t.text)) throw new CttFormatError(t.line, `${what} must be an integer, found "${t.text}"`);
    const value = Number(t.text);
    if (value < min) throw new CttFormatError(t.line, `${what} must be at least ${min}, found ${value}`);
    if (value > MAX_CTT_INTEGER) throw new CttFormatError(t.line, `${what} must be at most ${MAX_CTT_INTEGER}, found ${t.text.slice(0, 30)}`);
    return { value, line: t.line };
  }

  /** True when the next token starts a new section (or the file ended). */
  atSection(): boolean {
    const t = this.peek();
    return !t || SECTIONS.includes(t.text);
  }
}

/** Parses a `.ctt` instance. Throws `CttFormatError` (with the line) on malformed input. */
export function parseCtt(text: string): CttModel {
  const { tokens, lastLine } = tokenize(text);
  const r = new Reader(tokens, lastLine);

  const header: Record<string, number> = {};
  const headerLine: Record<string, number> = {};
  let name = '';
  for (const key of HEADER) {
    headerLine[key] = r.line;
    r.keyword(key);
    if (key === 'Name:') name = r.id('the instance name').text;
    else header[key] = r.int(`the value of ${key}`, key === 'Days:' || key === 'Periods_per_day:' ? 1 : 0).value;
  }
  const days = header['Days:'];
  const periodsPerDay = header['Periods_per_day:'];

  // Each section is read to its end, then its size is compared with the header, so a
  // missing or extra line is reported as a count mismatch rather than as a confusing token error.
  const section = <T>(keyword: string, declared: number, noun: string, headerKey: string, entry: () => T): T[] => {
    r.keyword(keyword);
    const items: T[] = [];
    while (!r.atSection()) items.push(entry());
    if (items.length !== declared) {
      throw new CttFormatError(headerLine[headerKey], `the header declares ${headerKey} ${declared} but section ${keyword} has ${items.length} ${noun}`);
    }
    return items;
  };

  const courseCodes = new Set<string>();
  const courses = section<CttCourse>('COURSES:', header['Courses:'], 'courses', 'Courses:', () => {
    const id = r.id('a course ID');
    if (courseCodes.has(id.text)) throw new CttFormatError(id.line, `course ${id.text} is declared twice`);
    courseCodes.add(id.text);
    const teacher = r.id(`the teacher of course ${id.text}`).text;
    const lectures = r.int(`the number of lectures of course ${id.text}`);
    if (lectures.value < 1) throw new CttFormatError(lectures.line, `course ${id.text} declares ${lectures.value} lectures`);
    if (lectures.value > days * periodsPerDay) {
      throw new CttFormatError(lectures.line, `course ${id.text} declares ${lectures.value} lectures but there are only ${days * periodsPerDay} periods`);
    }
    const minWorkingDays = r.int(`the minimum working days of course ${id.text}`).value;
    const students = r.int(`the number of students of course ${id.text}`).value;
    return { code: id.text, teacher, lectures: lectures.value, minWorkingDays, students };
  });

  const roomCodes = new Set<string>();
  const rooms = section<CttRoom>('ROOMS:', header['Rooms:'], 'rooms', 'Rooms:', () => {
    const id = r.id('a room ID');
    if (roomCodes.has(id.text)) throw new CttFormatError(id.line, `room ${id.text} is declared twice`);
    roomCodes.add(id.text);
    return { code: id.text, capacity: r.int(`the capacity of room ${id.text}`).value };
  });

  const curriculumCodes = new Set<string>();
  const curricula = section<CttCurriculum>('CURRICULA:', header['Curricula:'], 'curricula', 'Curricula:', () => {
    const id = r.id('a curriculum ID');
    if (curriculumCodes.has(id.text)) throw new CttFormatError(id.line, `curriculum ${id.text} is declared twice`);
    curriculumCodes.add(id.text);
    const n = r.int(`the number of courses of curriculum ${id.text}`).value;
    const members: string[] = [];
    for (let i = 0; i < n; i++) {
      const c = r.id(`course ${i + 1} of ${n} of curriculum ${id.text}`);
      if (!courseCodes.has(c.text)) throw new CttFormatError(c.line, `curriculum ${id.text} lists unknown course ${c.text}`);
      members.push(c.text);
    }
    return { code: id.text, courses: members };
  });

  const unavailable = section<CttCourseUnavailability>(
    'UNAVAILABILITY_CONSTRAINTS:',
    header['Constraints:'],
    'constraints',
    'Constraints:',
    () => {
      const c = r.id('a course ID');
      if (!courseCodes.has(c.text)) throw new CttFormatError(c.line, `unavailability constraint names unknown course ${c.text}`);
      const day = r.int(`the day of the constraint on ${c.text}`);
      if (day.value >= days) throw new CttFormatError(day.line, `day ${day.value} is out of range (Days: ${days})`);
      const period = r.int(`the period of the constraint on ${c.text}`);
      if (period.value >= periodsPerDay) {
        throw new CttFormatError(period.line, `period ${period.value} is out of range (Periods_per_day: ${periodsPerDay})`);
      }
      return { course: c.text, day: day.value, period: period.value };
    },
  );

  if (r.atEnd()) throw new CttFormatError(lastLine, 'missing "END." at the end of the file');
  r.keyword('END.');
  if (!r.atEnd()) {
    const t = r.peek()!;
    throw new CttFormatError(t.line, `unexpected "${t.text}" after "END."`);
  }
  return { name, days, periodsPerDay, courses, rooms, curricula, unavailable };
}

/** The competition's solution format: one `course room day period` line per lecture. */
export function formatSolution(assignments: readonly CttAssignment[]): string {
  return assignments.map((a) => `${a.course} ${a.room} ${a.day} ${a.period}\n`).join('');
}

/**
 * Parses a solution file against its instance. Unlike the official validator, which
 * skips bad lines with a warning, this throws: a silently dropped lecture hides a bug.
 */
export function parseSolution(text: string, instance: Pick<CttInstance, 'courseIndex' | 'roomIndex' | 'days' | 'periodsPerDay'>): CttAssignment[] {
  const out: CttAssignment[] = [];
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = i + 1;
    const parts = raw.split(/\s+/).filter((t) => t.length > 0);
    if (parts.length === 0) return;
    if (parts.length !== 4) throw new CttFormatError(line, `expected "course room day period", found ${parts.length} fields`);
    const [course, room, dayText, periodText] = parts;
    if (!instance.courseIndex.has(course)) throw new CttFormatError(line, `unknown course ${course}`);
    if (!instance.roomIndex.has(room)) throw new CttFormatError(line, `unknown room ${room}`);
    if (!/^\d+$/.test(dayText) || Number(dayText) >= instance.days) {
      throw new CttFormatError(line, `day "${dayText}" is not in 0..${instance.days - 1}`);
    }
    if (!/^\d+$/.test(periodText) || Number(periodText) >= instance.periodsPerDay) {
      throw new CttFormatError(line, `period "${periodText}" is not in 0..${instance.periodsPerDay - 1}`);
    }
    out.push({ course, room, day: Number(dayText), period: Number(periodText) });
  });
  return out;
}
