/**
 * A generated, deterministic term of realistic size for the embedded default, so a
 * newcomer can start a schedule in GraphiQL at once. The same generator makes the
 * small terms of the tests.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { AcademicTerm, Course, Curriculum, Room, Teacher, Unavailability } from '../academic/entities';
import { SeededRandom } from './ctt/random';
import { SchedulePlan, SchedulePlanStatus } from './entities';

export interface GeneratedTermSize {
  courses: number;
  rooms: number;
  curricula: number;
  teachers: number;
  days: number;
  periodsPerDay: number;
}

export const DEMO_TERM_SIZE: GeneratedTermSize = { courses: 80, rooms: 16, curricula: 60, teachers: 56, days: 5, periodsPerDay: 6 };
export const DEMO_TERM_CODE = 'DEMO-2026-AUTUMN';

const SUBJECTS = [
  'Advanced Mathematics', 'Linear Algebra', 'Probability and Statistics', 'College Physics', 'General Chemistry',
  'Programming Fundamentals', 'Data Structures', 'Algorithms', 'Operating Systems', 'Computer Networks',
  'Database Systems', 'Software Engineering', 'Discrete Mathematics', 'Circuit Analysis', 'Signals and Systems',
  'Microeconomics', 'Macroeconomics', 'Accounting Principles', 'Marketing', 'Organisational Behaviour',
  'College English', 'Academic Writing', 'Chinese Literature', 'Modern History', 'Philosophy',
  'Mechanics', 'Thermodynamics', 'Materials Science', 'Engineering Drawing', 'Control Theory',
];
const PROGRAMMES = ['Computer Science', 'Electrical Engineering', 'Mechanical Engineering', 'Economics', 'Management', 'Physics', 'Chemistry', 'Mathematics', 'Foreign Languages', 'Law', 'Civil Engineering', 'Biology'];
const SURNAMES = ['Wang', 'Li', 'Zhang', 'Liu', 'Chen', 'Yang', 'Huang', 'Zhao', 'Wu', 'Zhou', 'Xu', 'Sun', 'Ma', 'Zhu', 'Hu', 'Guo', 'He', 'Lin', 'Gao', 'Luo'];
const GIVEN = ['Wei', 'Fang', 'Min', 'Jing', 'Lei', 'Yan', 'Jun', 'Hua', 'Ping', 'Qiang', 'Xin', 'Tao', 'Li', 'Hong', 'Bo'];
const PERIOD_LABELS = ['08:00–09:35', '09:55–11:30', '13:30–15:05', '15:25–17:00', '18:30–20:05', '20:15–21:50', '21:55–22:40', '22:45–23:30'];

export interface GeneratedTerm {
  code: string;
  name: string;
  days: number;
  periodsPerDay: number;
  periodLabels: string[];
  teachers: { code: string; name: string }[];
  rooms: { code: string; name: string; capacity: number }[];
  courses: { code: string; name: string; teacher: string; lectures: number; minWorkingDays: number; students: number }[];
  curricula: { code: string; name: string; courses: string[] }[];
  courseUnavailable: { course: string; day: number; period: number }[];
  teacherUnavailable: { teacher: string; day: number; period: number }[];
}

/** Deterministic for (size, seed). Loads stay moderate so that a clash-free timetable exists. */
export function generateTerm(size: GeneratedTermSize, seed: number, code: string, name = code): GeneratedTerm {
  const rng = new SeededRandom(seed);
  const { days, periodsPerDay } = size;
  const teachers = Array.from({ length: size.teachers }, (_, i) => ({
    code: `T${String(i + 1).padStart(3, '0')}`,
    name: `${SURNAMES[i % SURNAMES.length]} ${GIVEN[(i * 7 + Math.floor(i / SURNAMES.length)) % GIVEN.length]}`,
  }));
  const rooms = Array.from({ length: size.rooms }, (_, i) => {
    const capacity = [40, 60, 80, 120, 150, 200][i % 6] + 10 * rng.nextInt(3);
    return { code: `R${String(i + 1).padStart(3, '0')}`, name: `Building ${String.fromCharCode(65 + (i % 4))} room ${101 + i}`, capacity };
  });
  const teacherLoad = new Array<number>(size.teachers).fill(0);
  const maxLoad = Math.max(4, Math.floor((days * periodsPerDay) / 3));
  const courses = Array.from({ length: size.courses }, (_, i) => {
    const lectures = 2 + rng.nextInt(Math.min(3, days * periodsPerDay - 1));
    let t = rng.nextInt(size.teachers);
    for (let k = 0; k < size.teachers && teacherLoad[t] + lectures > maxLoad; k++) t = (t + 1) % size.teachers;
    teacherLoad[t] += lectures;
    return {
      code: `C${String(i + 1).padStart(3, '0')}`,
      name: `${SUBJECTS[i % SUBJECTS.length]}${i >= SUBJECTS.length ? ` ${['II', 'III', 'IV'][Math.floor(i / SUBJECTS.length) - 1] ?? Math.floor(i / SUBJECTS.length) + 1}` : ''}`,
      teacher: teachers[t].code,
      lectures,
      minWorkingDays: Math.min(days, lectures, 2 + rng.nextInt(2)),
      students: 20 + rng.nextInt(150),
    };
  });
  const maxCurriculumLectures = Math.floor((days * periodsPerDay * 2) / 3);
  const curricula = Array.from({ length: size.curricula }, (_, q) => {
    const members = new Set<string>();
    let lectures = 0;
    const add = (c: (typeof courses)[number]) => {
      if (members.has(c.code) || lectures + c.lectures > maxCurriculumLectures) return;
      members.add(c.code);
      lectures += c.lectures;
    };
    for (let i = q; i < courses.length; i += size.curricula) add(courses[i]);
    const want = 3 + rng.nextInt(3);
    for (let tries = 0; members.size < want && tries < 20; tries++) add(courses[rng.nextInt(courses.length)]);
    const programme = PROGRAMMES[q % PROGRAMMES.length];
    const year = 1 + (Math.floor(q / PROGRAMMES.length) % 4);
    return { code: `Q${String(q + 1).padStart(3, '0')}`, name: `${programme}, year ${year}, class ${Math.floor(q / (PROGRAMMES.length * 4)) + 1}`, courses: [...members] };
  });
  const courseUnavailable = Array.from({ length: Math.max(1, Math.round(size.courses / 8)) }, () => ({
    course: courses[rng.nextInt(courses.length)].code,
    day: rng.nextInt(days),
    period: rng.nextInt(periodsPerDay),
  }));
  const teacherUnavailable = Array.from({ length: Math.max(1, Math.round(size.teachers / 12)) }, () => ({
    teacher: courses[rng.nextInt(courses.length)].teacher,
    day: rng.nextInt(days),
    period: rng.nextInt(periodsPerDay),
  }));
  const periodLabels = periodsPerDay <= PERIOD_LABELS.length ? PERIOD_LABELS.slice(0, periodsPerDay) : [];
  return { code, name, days, periodsPerDay, periodLabels, teachers, rooms, courses, curricula, courseUnavailable, teacherUnavailable };
}

/** Writes a generated term (and an empty DRAFT plan) in one transaction; returns both. */
export async function createGeneratedTerm(em: EntityManager, g: GeneratedTerm, planName = 'Draft timetable'): Promise<{ term: AcademicTerm; plan: SchedulePlan }> {
  return em.transactional(async (tx) => {
    const term = tx.create(AcademicTerm, { code: g.code, name: g.name, daysPerWeek: g.days, periodsPerDay: g.periodsPerDay, periodLabels: g.periodLabels });
    const teachers = new Map(g.teachers.map((t) => [t.code, tx.create(Teacher, { term, code: t.code, name: t.name })]));
    for (const r of g.rooms) tx.create(Room, { term, ...r });
    const courses = new Map(
      g.courses.map((c) => [
        c.code,
        tx.create(Course, {
          term,
          code: c.code,
          name: c.name,
          teacher: teachers.get(c.teacher)!,
          lecturesPerWeek: c.lectures,
          minWorkingDays: c.minWorkingDays,
          students: c.students,
        }),
      ]),
    );
    for (const q of g.curricula) tx.create(Curriculum, { term, code: q.code, name: q.name }).courses.set(q.courses.map((c) => courses.get(c)!));
    const seen = new Set<string>();
    for (const u of g.courseUnavailable) {
      if (seen.has(`c ${u.course} ${u.day} ${u.period}`)) continue;
      seen.add(`c ${u.course} ${u.day} ${u.period}`);
      tx.create(Unavailability, { term, course: courses.get(u.course)!, teacher: null, day: u.day, period: u.period });
    }
    for (const u of g.teacherUnavailable) {
      if (seen.has(`t ${u.teacher} ${u.day} ${u.period}`)) continue;
      seen.add(`t ${u.teacher} ${u.day} ${u.period}`);
      tx.create(Unavailability, { term, course: null, teacher: teachers.get(u.teacher)!, day: u.day, period: u.period });
    }
    const plan = tx.create(SchedulePlan, { term, name: planName, status: SchedulePlanStatus.DRAFT });
    await tx.flush();
    return { term, plan };
  });
}

/** Arbitrary but fixed: one advisory lock so that two processes starting together load once. */
const DEMO_LOCK_KEY = 0x6a_77_64_6d; // "jwdm"

/**
 * On a first start (no term at all), creates the demo term with an empty DRAFT plan.
 * Idempotent: does nothing once any term exists. Returns the term when it created one.
 */
export async function loadDemoData(em: EntityManager, logger?: Logger): Promise<AcademicTerm | null> {
  return em.transactional(async (tx) => {
    await tx.getConnection().execute('SELECT pg_advisory_xact_lock(?)', [DEMO_LOCK_KEY], 'all', tx.getTransactionContext());
    if ((await tx.count(AcademicTerm, {})) > 0) return null;
    const generated = generateTerm(DEMO_TERM_SIZE, 2026, DEMO_TERM_CODE, 'Demo term, autumn 2026 (generated)');
    const { term, plan } = await createGeneratedTerm(tx, generated, 'Demo draft');
    logger?.info({ termId: term.id, planId: plan.id, courses: generated.courses.length, rooms: generated.rooms.length, curricula: generated.curricula.length }, 'demo term created');
    return term;
  });
}
