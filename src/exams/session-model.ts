/**
 * Reads a make-up session in a few set-based queries and turns it into the solver's
 * `ExamModel` (by codes), with the look-ups from codes back to rows.
 *
 * Codes: an exam is its code; a room its code; a period its position (the model's index);
 * an invigilator its teacher's code. A term session compiles through
 * `compileMakeupSession` (one exam per course with failing students); an imported one
 * lists every exam with all its students.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { MakeupExam, MakeupExamConstraint, MakeupExamInvigilator, MakeupExamPeriod, MakeupExamRoom, MakeupExamSession, MakeupExamSessionFormat } from './entities';
import { ExamCapacityMode, type ExamModel, type ExamPeriod } from './model/exam-model';
import { compileMakeupSession } from './model/makeup-session';
import { findMakeupSession } from './session-service';

export interface SessionModel {
  session: MakeupExamSession;
  model: ExamModel;
  /** By position: `periods[i]` is the model's period i. */
  periods: MakeupExamPeriod[];
  rooms: MakeupExamRoom[];
  /** Every exam of the session, in order (a term exam without failing students is not in the model). */
  exams: MakeupExam[];
  invigilators: MakeupExamInvigilator[];
  /** Distinct students of the model's exams. */
  students: number;
  examByCode: Map<string, MakeupExam>;
  roomByCode: Map<string, MakeupExamRoom>;
  invigilatorByCode: Map<string, MakeupExamInvigilator>;
}

interface EnrolmentRow {
  exam_id: string;
  student_code: string;
  score: number | null;
}

/** Everything the model needs, read inside `em`'s transaction when it has one. */
export async function loadSessionModel(em: EntityManager, sessionId: string): Promise<SessionModel> {
  const session = await findMakeupSession(em, sessionId);
  const periods = await em.find(MakeupExamPeriod, { session }, { orderBy: { position: 'asc', id: 'asc' } });
  const rooms = await em.find(MakeupExamRoom, { session }, { orderBy: { position: 'asc', id: 'asc' } });
  const exams = await em.find(MakeupExam, { session }, { orderBy: { position: 'asc', id: 'asc' } });
  const invigilators = await em.find(MakeupExamInvigilator, { session }, { populate: ['teacher', 'availablePeriods'], orderBy: { teacher: { code: 'asc' } } });
  const constraints = await em.find(MakeupExamConstraint, { session }, { orderBy: { id: 'asc' } });
  const enrolments = await em
    .getConnection()
    .execute<EnrolmentRow[]>(
      `select e.exam_id, e.student_code, e.score from makeup_exam_enrolments e
       join makeup_exams x on x.id = e.exam_id where x.session_id = ? order by x.position, e.student_code`,
      [session.id],
      'all',
      em.getTransactionContext(),
    );

  const examById = new Map(exams.map((e) => [e.id, e]));
  const position = new Map(periods.map((p, i) => [p.id, i]));
  const modelPeriods: ExamPeriod[] = periods.map((p) => ({ date: p.date ?? null, start: p.startTime ?? null, duration: p.duration, penalty: p.penalty }));
  const modelRooms = rooms.map((r) => ({ code: r.code, capacity: r.capacity, penalty: r.penalty }));
  const modelConstraints = constraints.map((c) => ({ kind: c.kind, first: examById.get(c.first.id)!.code, second: examById.get(c.second.id)!.code }));

  let model: ExamModel;
  if (session.format === MakeupExamSessionFormat.TERM) {
    model = compileMakeupSession({
      name: session.code,
      passingScore: session.passingScore,
      defaultExamDuration: session.defaultExamDuration,
      periods: modelPeriods,
      rooms: modelRooms,
      invigilators: invigilators.map((i) => ({
        code: i.teacher.code,
        availablePeriods: i.availablePeriods
          .getItems()
          .map((p) => position.get(p.id)!)
          .sort((a, b) => a - b),
      })),
      courses: exams.map((e) => ({ code: e.code, examDuration: e.duration ?? null, roomExclusive: e.roomExclusive })),
      enrolments: enrolments.map((r) => ({ student: r.student_code, course: examById.get(r.exam_id)!.code, score: r.score })),
      constraints: modelConstraints,
      weightings: session.weightings,
    });
  } else {
    const students = new Map<string, string[]>(exams.map((e) => [e.id, []]));
    for (const r of enrolments) students.get(r.exam_id)!.push(r.student_code);
    model = {
      name: session.code,
      capacity: session.capacitated ? ExamCapacityMode.Capacitated : ExamCapacityMode.Uncapacitated,
      roomSplitting: session.roomSplitting,
      periods: modelPeriods,
      rooms: modelRooms,
      exams: exams.map((e) => ({ code: e.code, duration: e.duration ?? session.defaultExamDuration, students: students.get(e.id)!, roomExclusive: e.roomExclusive })),
      constraints: modelConstraints,
      weightings: session.weightings,
    };
  }
  const students = new Set<string>();
  for (const exam of model.exams) for (const s of exam.students) students.add(s);
  return {
    session,
    model,
    periods,
    rooms,
    exams,
    invigilators,
    students: students.size,
    examByCode: new Map(exams.map((e) => [e.code, e])),
    roomByCode: new Map(rooms.map((r) => [r.code, r])),
    invigilatorByCode: new Map(invigilators.map((i) => [i.teacher.code, i])),
  };
}
