/**
 * A session's arrangement: saving it (inside the job's completing transaction), reading it
 * back as the core's `ExamArrangement`, evaluating it against the session as it is now,
 * exporting it in the benchmark's solution format, and the views by exam, room,
 * invigilator and student.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { checkPage, type Page } from '../academic/keyset-page';
import { requireCode, requireId } from '../academic/validation';
import { badInput } from '../errors';
import { MakeupExamArrangement, MakeupExamSession, MakeupExamSessionFormat, MakeupExamSitting } from './entities';
import { evaluateArrangement, type ExamEvaluation } from './evaluation/evaluator';
import { formatItc2007Solution } from './formats/itc2007-solution-format';
import { formatTorontoSolution } from './formats/toronto-solution-format';
import type { ExamArrangement, ExamPlacement } from './model/exam-model';
import { ExamModelError } from './model/exam-model-error';
import { loadSessionModel, type SessionModel } from './session-model';
import { findMakeupSession } from './session-service';

/** Sitting rows per insert statement. */
const SITTING_BATCH = 20_000;

export interface ArrangementMeta {
  jobId: string | null;
  seed: number;
  timeUsedMs: number;
  iterations: number;
  unplacedExams: string[];
  /** Called once the old arrangement is gone and the new one's row is written, before its sittings (failure injection in tests). */
  beforeRows?: () => void | Promise<void>;
}

/**
 * Replaces the session's arrangement with `arrangement` (codes of `data`), in `tx`: the
 * old one and its sittings go, the new one and its sittings come, or (rolled back) none
 * of it. Each room an exam uses is one sitting, with the room's invigilator. `session` is
 * the session's row in `tx` (locked by the caller).
 */
export async function saveArrangement(
  tx: EntityManager,
  data: SessionModel,
  session: MakeupExamSession,
  arrangement: ExamArrangement,
  evaluation: ExamEvaluation,
  meta: ArrangementMeta,
): Promise<MakeupExamArrangement> {
  await tx.nativeDelete(MakeupExamArrangement, { session: session.id });
  const saved = tx.create(MakeupExamArrangement, {
    session,
    sessionRevision: session.revision,
    jobId: meta.jobId,
    seed: meta.seed,
    hardViolations: evaluation.hard.total,
    cost: evaluation.soft.total,
    evaluation,
    unplacedExams: meta.unplacedExams,
    timeUsedMs: meta.timeUsedMs,
    iterations: meta.iterations,
  });
  await tx.flush();
  await meta.beforeRows?.();
  const duty = new Map(arrangement.invigilation.map((d) => [`${d.period} ${d.room}`, d.invigilator]));
  const size = new Map(data.model.exams.map((e) => [e.code, new Set(e.students).size]));
  type SittingRow = { exam_id: string; period_id: string; room_id: string | null; seats: number; invigilator_id: string | null };
  const rows = arrangement.placements.flatMap((p): SittingRow[] => {
    const exam = data.examByCode.get(p.exam)!;
    const period = data.periods[p.period];
    if (p.rooms.length === 0) return [{ exam_id: exam.id, period_id: period.id, room_id: null, seats: size.get(p.exam)!, invigilator_id: null }];
    return p.rooms.map((s) => {
      const invigilator = duty.get(`${p.period} ${s.room}`);
      return {
        exam_id: exam.id,
        period_id: period.id,
        room_id: data.roomByCode.get(s.room)!.id,
        seats: s.seats,
        invigilator_id: invigilator === undefined ? null : data.invigilatorByCode.get(invigilator)!.id,
      };
    });
  });
  for (let i = 0; i < rows.length; i += SITTING_BATCH) {
    await tx.getConnection().execute(
      `insert into makeup_exam_sittings (id, arrangement_id, exam_id, period_id, room_id, seats, invigilator_id)
       select gen_random_uuid(), ?, r.exam_id, r.period_id, r.room_id, r.seats, r.invigilator_id
       from jsonb_to_recordset(?::jsonb) as r(exam_id uuid, period_id uuid, room_id uuid, seats int, invigilator_id uuid)`,
      [saved.id, JSON.stringify(rows.slice(i, i + SITTING_BATCH))],
      'run',
      tx.getTransactionContext(),
    );
  }
  return saved;
}

export const findArrangement = (em: EntityManager, sessionId: string) => em.findOne(MakeupExamArrangement, { session: requireId('sessionId', sessionId) });

/** The arrangements of several sessions (the GraphQL layer batches them). */
export const listArrangements = (em: EntityManager, sessionIds: readonly string[]) =>
  em.find(MakeupExamArrangement, { session: { $in: sessionIds.map((id) => requireId('sessionId', id)) } });

/**
 * The stored arrangement in the codes of `data`'s model. A sitting of an exam the model no
 * longer has (a term exam whose students all passed since) is left out.
 */
export async function readArrangement(em: EntityManager, data: SessionModel, arrangementId: string): Promise<ExamArrangement> {
  const sittings = await em.find(MakeupExamSitting, { arrangement: arrangementId }, { orderBy: { id: 'asc' } });
  const inModel = new Set(data.model.exams.map((e) => e.code));
  const examById = new Map(data.exams.map((e) => [e.id, e]));
  const periodIndex = new Map(data.periods.map((p, i) => [p.id, i]));
  const roomById = new Map(data.rooms.map((r) => [r.id, r]));
  const invigilatorById = new Map(data.invigilators.map((i) => [i.id, i]));
  const placements = new Map<string, ExamPlacement>();
  const duties = new Map<string, { period: number; room: string; invigilator: string }>();
  for (const s of sittings) {
    const exam = examById.get(s.exam.id)!;
    if (!inModel.has(exam.code)) continue;
    const period = periodIndex.get(s.period.id)!;
    let placement = placements.get(exam.code);
    if (!placement) placements.set(exam.code, (placement = { exam: exam.code, period, rooms: [] }));
    if (s.room) {
      const room = roomById.get(s.room.id)!.code;
      placement.rooms.push({ room, seats: s.seats });
      if (s.invigilator) {
        const invigilator = invigilatorById.get(s.invigilator.id)!.teacher.code;
        duties.set(`${period} ${room} ${invigilator}`, { period, room, invigilator });
      }
    }
  }
  const order = new Map(data.model.exams.map((e, i) => [e.code, i]));
  return {
    placements: [...placements.values()].sort((a, b) => order.get(a.exam)! - order.get(b.exam)!),
    invigilation: [...duties.values()],
  };
}

export interface SessionEvaluation extends ExamEvaluation {
  /** The arrangement was computed for the session as it is (no edit since). */
  current: boolean;
  /** Exams of the session's model (a term session: courses with failing students). */
  exams: number;
}

/** The independent evaluator's verdict on the stored arrangement against the session as it is now; null without one. */
export async function evaluateSession(em: EntityManager, sessionId: string): Promise<SessionEvaluation | null> {
  const stored = await findArrangement(em, sessionId);
  if (!stored) return null;
  const data = await loadSessionModel(em, sessionId);
  const arrangement = await readArrangement(em, data, stored.id);
  try {
    const evaluation = evaluateArrangement(data.model, arrangement);
    return { ...evaluation, current: stored.sessionRevision === data.session.revision, exams: data.model.exams.length };
  } catch (error) {
    // Edited since into a session no arrangement can describe (its last period deleted, say).
    if (error instanceof ExamModelError) throw badInput(`sessionId: session ${data.session.code} cannot be evaluated as it is now: ${error.message}`, { field: 'sessionId' });
    throw error;
  }
}

/**
 * The arrangement in its benchmark's solution format with the imported ids: `.sln`
 * (`period, room` per exam, in exam order) for an ITC-2007 session, `.sol` (`exam period`)
 * for a Toronto one. Null for a term session (its exams may use several rooms) or without
 * an arrangement.
 */
export async function solutionText(em: EntityManager, sessionId: string): Promise<string | null> {
  const session = await findMakeupSession(em, sessionId);
  if (session.format === MakeupExamSessionFormat.TERM) return null;
  const stored = await findArrangement(em, sessionId);
  if (!stored) return null;
  const data = await loadSessionModel(em, sessionId);
  const arrangement = await readArrangement(em, data, stored.id);
  return session.format === MakeupExamSessionFormat.ITC2007_EXAM ? formatItc2007Solution(data.model, arrangement) : formatTorontoSolution(data.model, arrangement);
}

/** Rows `evaluateSession` and `solutionText` read (the whole model and the sittings): what their cost is charged by. */
export async function sessionReadRows(em: EntityManager, sessionId: string): Promise<number> {
  const [row] = await em.getConnection().execute<{ rows: string }[]>(
    `select (select count(*) from makeup_exam_enrolments e join makeup_exams x on x.id = e.exam_id where x.session_id = ?)
          + (select count(*) from makeup_exams where session_id = ?)
          + (select count(*) from makeup_exam_periods where session_id = ?)
          + (select count(*) from makeup_exam_rooms where session_id = ?)
          + (select count(*) from makeup_exam_constraints where session_id = ?)
          + (select count(*) from makeup_exam_invigilators where session_id = ?)
          + (select count(*) from makeup_exam_invigilator_periods ip join makeup_exam_invigilators i on i.id = ip.invigilator_id where i.session_id = ?)
          + (select count(*) from makeup_exam_sittings s join makeup_exam_arrangements a on a.id = s.arrangement_id where a.session_id = ?) as rows`,
    [sessionId, sessionId, sessionId, sessionId, sessionId, sessionId, sessionId, sessionId],
    'all',
    em.getTransactionContext(),
  );
  return Number(row?.rows ?? 0);
}

// ----- views ------------------------------------------------------------------------

export interface SittingFilter {
  examId?: string | null;
  roomId?: string | null;
  invigilatorId?: string | null;
  periodId?: string | null;
}

/**
 * The sittings of a session's arrangement in time order (period, room, exam), at most
 * `first` after the sitting `after`, optionally of one exam, room, invigilator or period.
 */
export async function pageSittings(em: EntityManager, sessionId: string, filter: SittingFilter, page: Page): Promise<MakeupExamSitting[]> {
  const session = requireId('sessionId', sessionId);
  const { first, after } = checkPage(page);
  const conditions = ['a.session_id = ?'];
  const params: unknown[] = [session];
  for (const [field, column] of [
    ['examId', 's.exam_id'],
    ['roomId', 's.room_id'],
    ['invigilatorId', 's.invigilator_id'],
    ['periodId', 's.period_id'],
  ] as const) {
    const value = filter[field];
    if (value == null) continue;
    conditions.push(`${column} = ?`);
    params.push(requireId(field, value));
  }
  const key = `p.position, coalesce(r.position, -1), x.position, s.id`;
  const from = `makeup_exam_sittings s join makeup_exam_arrangements a on a.id = s.arrangement_id
    join makeup_exam_periods p on p.id = s.period_id join makeup_exams x on x.id = s.exam_id
    left join makeup_exam_rooms r on r.id = s.room_id`;
  if (after) {
    const found = await em.getConnection().execute<unknown[]>(`select 1 from ${from} where s.id = ? and a.session_id = ?`, [after, session], 'all', em.getTransactionContext());
    if (found.length === 0) throw badInput(`after: no sitting with id ${after} in this session's arrangement`, { field: 'after', value: after });
    conditions.push(`(${key}) > (select ${key} from ${from} where s.id = ?)`);
    params.push(after);
  }
  const rows = await em
    .getConnection()
    .execute<Record<string, unknown>[]>(`select s.* from ${from} where ${conditions.join(' and ')} order by ${key} limit ?`, [...params, first], 'all', em.getTransactionContext());
  return rows.map((row) => em.map(MakeupExamSitting, row as never));
}

export interface StudentSitting {
  studentCode: string;
  sitting: MakeupExamSitting;
}

/**
 * A student's own make-up timetable: the exams they sit, each with its period and the
 * room they sit in. The students of an exam split over several rooms fill the rooms in
 * the order of their codes, as many as each room's seats.
 */
export async function studentTimetable(em: EntityManager, sessionId: string, studentCode: string): Promise<StudentSitting[]> {
  const code = requireCode('studentCode', studentCode);
  const stored = await findArrangement(em, sessionId);
  if (!stored) return [];
  const data = await loadSessionModel(em, sessionId);
  const mine = data.model.exams.filter((e) => e.students.includes(code));
  if (mine.length === 0) return [];
  const sittings = await em.find(
    MakeupExamSitting,
    { arrangement: stored, exam: { $in: mine.map((e) => data.examByCode.get(e.code)!.id) } },
    { orderBy: { id: 'asc' } },
  );
  const roomPosition = new Map(data.rooms.map((r) => [r.id, r.position]));
  const out: StudentSitting[] = [];
  for (const exam of mine) {
    const examId = data.examByCode.get(exam.code)!.id;
    const rooms = sittings.filter((s) => s.exam.id === examId).sort((a, b) => (roomPosition.get(a.room?.id ?? '') ?? -1) - (roomPosition.get(b.room?.id ?? '') ?? -1));
    if (rooms.length === 0) continue;
    const rank = [...new Set(exam.students)].sort().indexOf(code);
    let seatsBefore = 0;
    const chosen = rooms.find((s) => (seatsBefore += s.seats) > rank) ?? rooms[rooms.length - 1];
    out.push({ studentCode: code, sitting: chosen });
  }
  const periodPosition = new Map(data.periods.map((p) => [p.id, p.position]));
  return out.sort((a, b) => periodPosition.get(a.sitting.period.id)! - periodPosition.get(b.sitting.period.id)!);
}

