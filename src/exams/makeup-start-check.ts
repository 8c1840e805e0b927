/**
 * What a start of MAKEUP_EXAM_AUTO checks before it enqueues: one statement of counts
 * and an existence test over the session, so that a start costs the same one row
 * whatever the session's size, and nothing of it is loaded into the process. It refuses
 * what `arrangeable` (the job's check) would refuse for missing parts, with the same
 * words; the model's structural checks (`validateModel`) run in the job, which fails
 * permanently with the reason.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { badInput, notFound } from '../errors';
import { preparedLookup } from '../prepared-query';
import { MakeupExamSessionFormat } from './entities';

interface StartCheckRow {
  key: string;
  code: string;
  format: MakeupExamSessionFormat;
  capacitated: boolean;
  passing_score: number;
  has_period: boolean;
  has_room: boolean;
  has_exam: boolean;
  /** Some enrolment of the session scored below the passing score (a term session's exams). */
  has_failing: boolean;
  has_invigilator: boolean;
}

/*
 * Existence tests, each stopping at its first row: periods, rooms, exams and
 * invigilators by their session index; a failing enrolment through the session's exams
 * and the (exam, student) unique index.
 */
const startCheckSql = (keyMatch: string) => `
SELECT s.id AS key, s.code, s.format, s.capacitated, s.passing_score,
       EXISTS (SELECT 1 FROM makeup_exam_periods p WHERE p.session_id = s.id) AS has_period,
       EXISTS (SELECT 1 FROM makeup_exam_rooms r WHERE r.session_id = s.id) AS has_room,
       EXISTS (SELECT 1 FROM makeup_exams x WHERE x.session_id = s.id) AS has_exam,
       EXISTS (SELECT 1 FROM makeup_exams x JOIN makeup_exam_enrolments e ON e.exam_id = x.id
                WHERE x.session_id = s.id AND e.score < s.passing_score) AS has_failing,
       EXISTS (SELECT 1 FROM makeup_exam_invigilators i WHERE i.session_id = s.id) AS has_invigilator
  FROM makeup_exam_sessions s
 WHERE ${keyMatch}`;

/** The starts that meet in time read their rows with one statement. */
const readStartCheck = preparedLookup<StartCheckRow>({ one: startCheckSql('s.id = $1'), many: startCheckSql('s.id = ANY($1::uuid[])') });

/**
 * Refuses a start that cannot succeed (NOT_FOUND, or BAD_USER_INPUT naming `sessionId`
 * and the reason). Reads one row, whatever the session's size.
 */
export async function checkMakeupStart(em: EntityManager, sessionId: string): Promise<void> {
  const row = await readStartCheck(em, sessionId);
  if (!row) throw notFound(`No make-up exam session with id ${sessionId}`, { sessionId });
  const refuse = (why: string) => badInput(`sessionId: ${why}`, { field: 'sessionId' });
  const term = row.format === MakeupExamSessionFormat.TERM;
  // The same tests, in the same order and words, as arrangeable().
  if (!row.has_period) throw refuse(`session ${row.code} has no periods`);
  if (row.capacitated && !row.has_room) throw refuse(`session ${row.code} has no rooms`);
  if (term ? !row.has_failing : !row.has_exam) {
    throw refuse(
      term
        ? `no student of session ${row.code} scored below the passing score (${Number(row.passing_score)}): there is no make-up exam to arrange`
        : `session ${row.code} has no exams`,
    );
  }
  if (term && !row.has_invigilator) throw refuse(`session ${row.code} has no invigilators`);
}
