/**
 * What a start of AUTOMATIC_SCHEDULE checks before it enqueues: one statement of
 * aggregates over the plan and its term, so that a start costs the same few round trips
 * and the same one row whatever the size of the term, and nothing of the term is loaded
 * into the process. It refuses what aggregates can prove will fail the model's compile
 * (`compileModel`), with the same words; anything subtler (and anything that changes
 * after the start) the job finds when it builds the model, and fails permanently with
 * the reason.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { badInput, notFound } from '../errors';
import { preparedLookup } from '../prepared-query';
import { SchedulePlanStatus } from './entities';

interface StartCheckRow {
  key: string;
  name: string;
  status: SchedulePlanStatus;
  term_id: string;
  term_code: string;
  days: number;
  periods_per_day: number;
  courses: string;
  lectures: string;
  rooms: string;
  /** A course whose lectures per week are outside 1..periods, as "code lectures". */
  bad_course: string | null;
  /** An unavailability outside the term's week, as "course|teacher code day period". */
  bad_unavailability: string | null;
  /** A locked lecture outside the week or beyond its course's lectures, as "code lecture day period lectures". */
  bad_lock: string | null;
  /** Two locked lectures of one course in one period, as "code day period". */
  course_clash: string | null;
  /** Two locked lectures in one room and period, as "room day period". */
  room_clash: string | null;
}

/*
 * Every part is bounded by an index on the plan or the term: academic_courses,
 * academic_rooms and academic_unavailabilities by (term_id, …), schedule_assignments by
 * (plan_id, …). The lock clashes are also prevented when a lecture is placed by hand;
 * they are checked again because a term's week can shrink after placement.
 */
const startCheckSql = (keyMatch: string) => `
SELECT p.id AS key, p.name, p.status, t.id AS term_id, t.code AS term_code, t.days_per_week AS days, t.periods_per_day,
       c.courses, c.lectures, c.bad_course,
       (SELECT count(*) FROM academic_rooms r WHERE r.term_id = t.id) AS rooms,
       (SELECT CASE WHEN uc.code IS NULL THEN 'teacher ' || ut.code ELSE 'course ' || uc.code END || ' ' || u.day || ' ' || u.period
          FROM academic_unavailabilities u
          LEFT JOIN academic_courses uc ON uc.id = u.course_id
          LEFT JOIN academic_teachers ut ON ut.id = u.teacher_id
         WHERE u.term_id = t.id AND (u.day < 0 OR u.day >= t.days_per_week OR u.period < 0 OR u.period >= t.periods_per_day)
         LIMIT 1) AS bad_unavailability,
       (SELECT lc.code || ' ' || a.lecture_index || ' ' || a.day || ' ' || a.period || ' ' || lc.lectures_per_week
          FROM schedule_assignments a JOIN academic_courses lc ON lc.id = a.course_id
         WHERE a.plan_id = p.id AND a.locked
           AND (a.day < 0 OR a.day >= t.days_per_week OR a.period < 0 OR a.period >= t.periods_per_day
                OR a.lecture_index < 0 OR a.lecture_index >= lc.lectures_per_week)
         LIMIT 1) AS bad_lock,
       (SELECT min(cc.code) || ' ' || a.day || ' ' || a.period
          FROM schedule_assignments a JOIN academic_courses cc ON cc.id = a.course_id
         WHERE a.plan_id = p.id AND a.locked
         GROUP BY a.course_id, a.day, a.period HAVING count(*) > 1 LIMIT 1) AS course_clash,
       (SELECT min(rr.code) || ' ' || a.day || ' ' || a.period
          FROM schedule_assignments a JOIN academic_rooms rr ON rr.id = a.room_id
         WHERE a.plan_id = p.id AND a.locked
         GROUP BY a.room_id, a.day, a.period HAVING count(*) > 1 LIMIT 1) AS room_clash
  FROM schedule_plans p
  JOIN academic_terms t ON t.id = p.term_id
 CROSS JOIN LATERAL (
       SELECT count(*) AS courses,
              coalesce(sum(k.lectures_per_week), 0) AS lectures,
              min(k.code || ' ' || k.lectures_per_week)
                FILTER (WHERE k.lectures_per_week < 1 OR k.lectures_per_week > t.days_per_week * t.periods_per_day) AS bad_course
         FROM academic_courses k WHERE k.term_id = t.id) c
 WHERE ${keyMatch}`;

/** The starts that meet in time read their rows with one statement. */
const readStartCheck = preparedLookup<StartCheckRow>({ one: startCheckSql('p.id = $1'), many: startCheckSql('p.id = ANY($1::uuid[])') });

export interface ScheduleStartTarget {
  planId: string;
  termId: string;
}

const infeasible = (termCode: string, why: string) => badInput(`planId: term ${termCode} cannot be timetabled as it is: ${why}`, { field: 'planId' });

/**
 * Refuses a start that cannot succeed (NOT_FOUND, or BAD_USER_INPUT naming `planId` and
 * the reason); otherwise returns the plan's term. Reads one row, whatever the term's size.
 */
export async function checkScheduleStart(em: EntityManager, planId: string): Promise<ScheduleStartTarget> {
  const row = await readStartCheck(em, planId);
  if (!row) throw notFound(`No schedule plan with id ${planId}`, { planId });
  if (row.status !== SchedulePlanStatus.DRAFT) {
    throw badInput(`planId: plan "${row.name}" is ${row.status}; only a DRAFT can be scheduled (copy it to make a new draft)`, {
      field: 'planId',
      status: row.status,
    });
  }
  const courses = Number(row.courses);
  const lectures = Number(row.lectures);
  const rooms = Number(row.rooms);
  const periods = row.days * row.periods_per_day;
  if (courses === 0) throw badInput(`planId: term ${row.term_code} has no courses to schedule`, { field: 'planId' });
  // The same tests, in the same order and words, as compileModel.
  if (rooms === 0 && lectures > 0) throw infeasible(row.term_code, 'there are lectures to place but no rooms');
  if (row.bad_course) {
    const [code, count] = row.bad_course.split(' ');
    throw infeasible(row.term_code, `course ${code} lectures must be an integer in [1, ${periods}], got ${count}`);
  }
  if (lectures > periods * rooms) throw infeasible(row.term_code, `${lectures} lectures cannot fit in ${periods} periods x ${rooms} rooms`);
  // A day is checked before a period, as compileModel's checkSlot does.
  const slot = (where: string, day: number, period: number) =>
    day < 0 || day >= row.days
      ? `${where}: day must be an integer in [0, ${row.days - 1}], got ${day}`
      : `${where}: period must be an integer in [0, ${row.periods_per_day - 1}], got ${period}`;
  if (row.bad_unavailability) {
    const [kind, code, day, period] = row.bad_unavailability.split(' ');
    throw infeasible(row.term_code, slot(kind === 'teacher' ? `unavailability of teacher ${code}` : `unavailability of ${code}`, Number(day), Number(period)));
  }
  if (row.bad_lock) {
    const [code, lecture, day, period, count] = row.bad_lock.split(' ').map((part, i) => (i === 0 ? part : Number(part))) as [string, number, number, number, number];
    const where = `locked assignment of ${code}`;
    const outside = day < 0 || day >= row.days || period < 0 || period >= row.periods_per_day;
    throw infeasible(row.term_code, outside ? slot(where, day, period) : `${where}: lecture must be an integer in [0, ${count - 1}], got ${lecture}`);
  }
  if (row.course_clash) {
    const [code, day, period] = row.course_clash.split(' ');
    throw infeasible(row.term_code, `locked assignment of ${code}: two lectures locked at day ${day} period ${period}`);
  }
  if (row.room_clash) {
    const [room, day, period] = row.room_clash.split(' ');
    throw infeasible(row.term_code, `locked assignment: room ${room} at day ${day} period ${period} is locked for two lectures`);
  }
  return { planId, termId: row.term_id };
}
