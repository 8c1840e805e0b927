import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { AcademicTerm, Course, Teacher } from '../../academic/entities';
import { checkPage } from '../../academic/keyset-page';
import { isId } from '../../academic/validation';
import { badInput } from '../../engine/errors';
import type { JobSnapshot } from '../../engine/types';
import * as arrangements from '../../exams/arrangement-service';
import {
  MakeupExam,
  MakeupExamArrangement,
  MakeupExamConstraint,
  MakeupExamEnrolment,
  MakeupExamInvigilator,
  MakeupExamPeriod,
  MakeupExamRoom,
  MakeupExamSession,
  MakeupExamSitting,
} from '../../exams/entities';
import { ExamFormat, importExamSession } from '../../exams/exam-import';
import { startMakeupExamArrangement, type MakeupExamArrangementResult } from '../../exams/makeup-exam-arrangement';
import * as sessions from '../../exams/session-service';
import { JobKind } from '../../job-kinds';
import { AcademicTermType, CourseType, TeacherType } from '../academic/academic.types';
import { entityById, pageOf, referenced } from '../academic/batch-loaders';
import { PageArgs, pageCost } from '../academic/page-args';
import { entityManagerOf, rootEntityManagerOf } from '../academic/request-entity-manager';
import { ApiRole } from '../auth/viewer';
import type { GraphQLContext } from '../graphql/context';
import { Job, JOB_OBJECT_TYPES } from '../graphql/types/job';
import {
  AddMakeupExamConstraintInput,
  AddMakeupExamPeriodInput,
  AddMakeupExamRoomInput,
  CreateMakeupExamSessionInput,
  MakeupExamArrangementResultType,
  MakeupExamArrangementType,
  MakeupExamConstraintType,
  MakeupExamEnrolmentType,
  MakeupExamEvaluationType,
  MakeupExamInvigilatorType,
  MakeupExamPeriodType,
  MakeupExamRoomType,
  MakeupExamSessionType,
  MakeupExamSittingType,
  MakeupExamStudentSittingType,
  MakeupExamType,
  MakeupExamWeightingsType,
  RecordMakeupExamScoresInput,
  SetMakeupExamCourseInput,
  SetMakeupExamInvigilatorInput,
  StartMakeupExamArrangementInput,
  UpdateMakeupExamInput,
  UpdateMakeupExamPeriodInput,
  UpdateMakeupExamRoomInput,
  UpdateMakeupExamSessionInput,
} from './exams.types';

/** Who may change sessions and start arrangements: as for timetabling. */
const EDITORS = [ApiRole.ADMIN, ApiRole.SCHEDULER];
const em = entityManagerOf;

/**
 * `evaluation`, `solutionText` and `studentTimetable` read the whole session (its
 * periods, rooms, invigilators, constraints, exams, enrolments and sittings) and compute
 * over it: besides their fixed cost they charge, when they run, one unit per this many rows. An enrolment is a narrow row (an
 * exam and a student), so the rate is lower than a plan's: the largest benchmark (pur93,
 * 125,000 rows) fits the default limit.
 */
export const SESSION_ROWS_PER_COST_UNIT = 200;
/** The fixed part of their cost, counted with the query's. */
export const SESSION_COMPUTATION_COST = 10;

async function chargeSessionComputation(ctx: GraphQLContext, session: MakeupExamSession, what: string): Promise<void> {
  const rows = await arrangements.sessionReadRows(em(ctx), session.id);
  ctx.cost.charge(Math.ceil(rows / SESSION_ROWS_PER_COST_UNIT), `The ${what} of make-up exam session ${session.code} (${rows} rows to read)`);
}

const nullWhenMissing = (error: { code?: string }) => {
  if (error.code === 'NOT_FOUND') return null;
  throw error;
};

@Resolver(() => MakeupExamSessionType)
export class MakeupExamSessionResolver {
  @Authorized()
  @Query(() => MakeupExamSessionType, { nullable: true, description: 'A make-up exam session by id; null when there is none.' })
  makeupExamSession(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<MakeupExamSession | null> {
    return sessions.findMakeupSession(em(ctx), id, false, 'id').catch(nullWhenMissing);
  }

  @Authorized()
  @Query(() => [MakeupExamSessionType], { description: 'The make-up exam sessions by code, a page at a time.', complexity: pageCost })
  makeupExamSessions(@Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExamSession[]> {
    return sessions.pageSessions(em(ctx), page);
  }

  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamSessionType, { description: "A new make-up session of a term (its courses, teachers and the students' scores)." })
  createMakeupExamSession(@Arg('input', () => CreateMakeupExamSessionInput) input: CreateMakeupExamSessionInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExamSession> {
    return sessions.createMakeupSession(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamSessionType)
  updateMakeupExamSession(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateMakeupExamSessionInput) input: UpdateMakeupExamSessionInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MakeupExamSession> {
    return sessions.updateMakeupSession(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean, { description: 'Deletes a session with everything in it, its arrangement too.' })
  deleteMakeupExamSession(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return sessions.deleteMakeupSession(em(ctx), id);
  }

  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamSessionType, {
    description:
      'Imports a benchmark instance as a new session, keeping its ids: ITC2007_EXAM (`text`: the .exam file) or TORONTO (`text`: the .crs, `studentsText`: the .stu, `periods`: how many). ' +
      'Malformed text is a BAD_USER_INPUT naming the field, the file and the line; an existing code is a CONFLICT; nothing is written then.',
  })
  importExamSession(
    @Arg('format', () => ExamFormat) format: ExamFormat,
    @Arg('text', () => String) text: string,
    @Arg('studentsText', () => String, { nullable: true }) studentsText: string | null,
    @Arg('periods', () => Int, { nullable: true }) periods: number | null,
    @Arg('code', () => String, { nullable: true, description: 'Defaults to the format and a digest of the files.' }) code: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MakeupExamSession> {
    return importExamSession(em(ctx), { format, text, studentsText, periods, code });
  }

  @Authorized(...EDITORS)
  @Mutation(() => Job, { description: 'Starts MAKEUP_EXAM_AUTO on a session; a second start while one runs is a CONFLICT naming it.' })
  startMakeupExamArrangement(@Arg('input', () => StartMakeupExamArrangementInput) input: StartMakeupExamArrangementInput, @Ctx() ctx: GraphQLContext): Promise<JobSnapshot> {
    return startMakeupExamArrangement({ em: rootEntityManagerOf(ctx), engine: ctx.engine }, input, ctx.viewer?.subject ?? null);
  }

  @FieldResolver(() => AcademicTermType, { nullable: true, description: 'The term of a term session; null for an imported one.' })
  term(@Root() session: MakeupExamSession, @Ctx() ctx: GraphQLContext): Promise<AcademicTerm> | null {
    return session.term ? referenced(ctx, AcademicTerm, session.term) : null;
  }

  @FieldResolver(() => MakeupExamWeightingsType)
  weightings(@Root() session: MakeupExamSession): MakeupExamWeightingsType {
    const w = session.weightings;
    return {
      twoInARow: w.twoInARow,
      twoInADay: w.twoInADay,
      periodSpread: w.periodSpread,
      nonMixedDurations: w.nonMixedDurations,
      frontLoadExams: w.frontLoad.largestExams,
      frontLoadPeriods: w.frontLoad.lastPeriods,
      frontLoadWeight: w.frontLoad.weight,
      proximity: w.proximity,
    };
  }

  @FieldResolver(() => [MakeupExamPeriodType], { description: 'The periods in time order, a page at a time.', complexity: pageCost })
  periods(@Root() session: MakeupExamSession, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExamPeriod[]> {
    return pageOf(ctx, 'MakeupExamPeriod', page, sessions.pagePeriods, session.id);
  }

  @FieldResolver(() => [MakeupExamRoomType], { description: 'The rooms in order, a page at a time.', complexity: pageCost })
  rooms(@Root() session: MakeupExamSession, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExamRoom[]> {
    return pageOf(ctx, 'MakeupExamRoom', page, sessions.pageRooms, session.id);
  }

  @FieldResolver(() => [MakeupExamInvigilatorType], { description: 'The invigilators, a page at a time.', complexity: pageCost })
  invigilators(@Root() session: MakeupExamSession, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExamInvigilator[]> {
    return pageOf(ctx, 'MakeupExamInvigilator', page, sessions.pageInvigilators, session.id);
  }

  @FieldResolver(() => [MakeupExamType], { description: 'The exams in order (term sessions: the courses given scores or settings), a page at a time.', complexity: pageCost })
  exams(@Root() session: MakeupExamSession, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExam[]> {
    return pageOf(ctx, 'MakeupExam', page, sessions.pageExams, session.id);
  }

  @FieldResolver(() => [MakeupExamConstraintType], { description: 'The constraints between exams, a page at a time.', complexity: pageCost })
  constraints(@Root() session: MakeupExamSession, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExamConstraint[]> {
    return pageOf(ctx, 'MakeupExamConstraint', page, sessions.pageConstraints, session.id);
  }

  @FieldResolver(() => MakeupExamArrangementType, { nullable: true, description: 'The arrangement saved by the last successful MAKEUP_EXAM_AUTO job; null before one.' })
  arrangement(@Root() session: MakeupExamSession, @Ctx() ctx: GraphQLContext): Promise<MakeupExamArrangement | null> {
    return pageOf(ctx, 'MakeupExamArrangement', { first: 1 }, async (em, ids) => (await arrangements.listArrangements(em, ids)).map((row) => ({ parent: row.session.id, row })), session.id).then(
      (rows) => rows[0] ?? null,
    );
  }

  @FieldResolver(() => [MakeupExamSittingType], {
    description: 'The arrangement in time order (period, room, exam), a page at a time: all of it, or one exam\'s, room\'s, invigilator\'s or period\'s.',
    complexity: pageCost,
  })
  sittings(
    @Root() session: MakeupExamSession,
    @Args() page: PageArgs,
    @Arg('examId', () => ID, { nullable: true }) examId: string | null,
    @Arg('roomId', () => ID, { nullable: true }) roomId: string | null,
    @Arg('invigilatorId', () => ID, { nullable: true }) invigilatorId: string | null,
    @Arg('periodId', () => ID, { nullable: true }) periodId: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<MakeupExamSitting[]> {
    return arrangements.pageSittings(em(ctx), session.id, { examId, roomId, invigilatorId, periodId }, page);
  }

  @FieldResolver(() => [MakeupExamStudentSittingType], {
    description: `A student's own make-up timetable: each exam they sit with its period and their room. Costs ${SESSION_COMPUTATION_COST} plus a row's cost per exam it can return (\`first\`), and one more per ${SESSION_ROWS_PER_COST_UNIT} rows of the session when it runs.`,
    complexity: (args) => SESSION_COMPUTATION_COST + pageCost(args),
  })
  async studentTimetable(
    @Root() session: MakeupExamSession,
    @Arg('studentCode', () => String) studentCode: string,
    @Args() page: PageArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<arrangements.StudentSitting[]> {
    const { first, after } = checkPage(page);
    await chargeSessionComputation(ctx, session, 'student timetable');
    const rows = await arrangements.studentTimetable(em(ctx), session.id, studentCode);
    const start = after === null ? 0 : rows.findIndex((row) => row.sitting.id === after) + 1;
    if (start === 0 && after !== null) throw badInput(`after: no sitting with id ${after} in this student's timetable`, { field: 'after', value: after });
    return rows.slice(start, start + first);
  }

  @FieldResolver(() => String, {
    nullable: true,
    description: `The arrangement in its benchmark's solution format with the imported ids: .sln (\`period, room\` per exam, in exam order) for ITC2007_EXAM, .sol (\`exam period\`) for TORONTO; null for a term session or before an arrangement. Costs ${SESSION_COMPUTATION_COST}, and one more per ${SESSION_ROWS_PER_COST_UNIT} rows of the session.`,
    complexity: SESSION_COMPUTATION_COST,
  })
  async solutionText(@Root() session: MakeupExamSession, @Ctx() ctx: GraphQLContext): Promise<string | null> {
    await chargeSessionComputation(ctx, session, 'solution text');
    return arrangements.solutionText(em(ctx), session.id);
  }

  @FieldResolver(() => MakeupExamEvaluationType, {
    nullable: true,
    description: `The arrangement checked by the independent evaluator against the session as it is now; null before an arrangement. Costs ${SESSION_COMPUTATION_COST}, and one more per ${SESSION_ROWS_PER_COST_UNIT} rows of the session.`,
    complexity: ({ childComplexity }) => SESSION_COMPUTATION_COST + childComplexity,
  })
  async evaluation(@Root() session: MakeupExamSession, @Ctx() ctx: GraphQLContext): Promise<MakeupExamEvaluationType | null> {
    await chargeSessionComputation(ctx, session, 'evaluation');
    const evaluation = await arrangements.evaluateSession(em(ctx), session.id);
    if (!evaluation) return null;
    return {
      hardViolations: evaluation.hard.total,
      cost: evaluation.soft.total,
      feasible: evaluation.feasible,
      current: evaluation.current,
      exams: evaluation.exams,
      students: evaluation.students,
      hard: evaluation.hard,
      soft: evaluation.soft,
    };
  }
}

@Resolver(() => MakeupExamPeriodType)
export class MakeupExamPeriodResolver {
  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamPeriodType, { description: 'Adds a period; the periods stay in time order.' })
  addMakeupExamPeriod(@Arg('input', () => AddMakeupExamPeriodInput) input: AddMakeupExamPeriodInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExamPeriod> {
    return sessions.addPeriod(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamPeriodType)
  updateMakeupExamPeriod(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateMakeupExamPeriodInput) input: UpdateMakeupExamPeriodInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExamPeriod> {
    return sessions.updatePeriod(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean, { description: 'Deletes a period (and the sittings of the arrangement in it).' })
  deleteMakeupExamPeriod(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return sessions.deletePeriod(em(ctx), id);
  }
}

@Resolver(() => MakeupExamRoomType)
export class MakeupExamRoomResolver {
  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamRoomType)
  addMakeupExamRoom(@Arg('input', () => AddMakeupExamRoomInput) input: AddMakeupExamRoomInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExamRoom> {
    return sessions.addRoom(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamRoomType)
  updateMakeupExamRoom(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateMakeupExamRoomInput) input: UpdateMakeupExamRoomInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExamRoom> {
    return sessions.updateRoom(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean)
  deleteMakeupExamRoom(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return sessions.deleteRoom(em(ctx), id);
  }
}

@Resolver(() => MakeupExamInvigilatorType)
export class MakeupExamInvigilatorResolver {
  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamInvigilatorType, { description: 'Adds a teacher of the term as an invigilator, or replaces the periods of one already there.' })
  setMakeupExamInvigilator(@Arg('input', () => SetMakeupExamInvigilatorInput) input: SetMakeupExamInvigilatorInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExamInvigilator> {
    return sessions.setInvigilator(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean)
  removeMakeupExamInvigilator(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return sessions.removeInvigilator(em(ctx), id);
  }

  @FieldResolver(() => TeacherType)
  teacher(@Root() invigilator: MakeupExamInvigilator, @Ctx() ctx: GraphQLContext): Promise<Teacher> {
    return referenced(ctx, Teacher, invigilator.teacher);
  }

  @FieldResolver(() => [MakeupExamPeriodType], { description: 'The periods they can supervise, in time order, a page at a time.', complexity: pageCost })
  async availablePeriods(@Root() invigilator: MakeupExamInvigilator, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExamPeriod[]> {
    const { first, after } = checkPage(page);
    // At most MAX_PERIODS_PER_SESSION rows per invigilator: read them all, send a page.
    const all = await pageOf(ctx, 'MakeupExamInvigilatorPeriods', { first: sessions.MAX_PERIODS_PER_SESSION }, (em, ids) => sessions.availablePeriodsOf(em, ids), invigilator.id);
    const start = after === null ? 0 : all.findIndex((p) => p.id === after) + 1;
    // An unknown cursor is the caller's mistake, as on every page: restarting would loop a client that pages to the end.
    if (start === 0 && after !== null) throw badInput(`after: no period with id ${after} among this invigilator's`, { field: 'after', value: after });
    return all.slice(start, start + first);
  }
}

@Resolver(() => MakeupExamType)
export class MakeupExamResolver {
  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamType, { description: "Sets the make-up exam of a term's course (created when missing): its length, whether it needs a room to itself." })
  setMakeupExamCourse(@Arg('input', () => SetMakeupExamCourseInput) input: SetMakeupExamCourseInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExam> {
    return sessions.setExamCourse(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamType)
  updateMakeupExam(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateMakeupExamInput) input: UpdateMakeupExamInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExam> {
    return sessions.updateExam(em(ctx), id, input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean, { description: 'Deletes an exam with its enrolments and constraints.' })
  deleteMakeupExam(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return sessions.deleteExam(em(ctx), id);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Int, {
    description: "Records students' scores in courses of the session's term (a new score replaces the old); those below the passing score sit the course's make-up exam. Returns how many were recorded.",
  })
  recordMakeupExamScores(@Arg('input', () => RecordMakeupExamScoresInput) input: RecordMakeupExamScoresInput, @Ctx() ctx: GraphQLContext): Promise<number> {
    return sessions.recordScores(em(ctx), input.sessionId, input.scores);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean)
  deleteMakeupExamEnrolment(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return sessions.deleteEnrolment(em(ctx), id);
  }

  @FieldResolver(() => CourseType, { nullable: true, description: 'The course (term sessions).' })
  course(@Root() exam: MakeupExam, @Ctx() ctx: GraphQLContext): Promise<Course> | null {
    return exam.course ? referenced(ctx, Course, exam.course) : null;
  }

  @FieldResolver(() => [MakeupExamEnrolmentType], { description: 'Its students by code, with their scores, a page at a time.', complexity: pageCost })
  enrolments(@Root() exam: MakeupExam, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<MakeupExamEnrolment[]> {
    return pageOf(ctx, 'MakeupExamEnrolment', page, sessions.pageEnrolments, exam.id);
  }
}

@Resolver(() => MakeupExamConstraintType)
export class MakeupExamConstraintResolver {
  @Authorized(...EDITORS)
  @Mutation(() => MakeupExamConstraintType)
  addMakeupExamConstraint(@Arg('input', () => AddMakeupExamConstraintInput) input: AddMakeupExamConstraintInput, @Ctx() ctx: GraphQLContext): Promise<MakeupExamConstraint> {
    return sessions.addConstraint(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean)
  deleteMakeupExamConstraint(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return sessions.deleteConstraint(em(ctx), id);
  }

  @FieldResolver(() => MakeupExamType, { description: 'For AFTER: the exam that comes later.' })
  first(@Root() constraint: MakeupExamConstraint, @Ctx() ctx: GraphQLContext): Promise<MakeupExam> {
    return referenced(ctx, MakeupExam, constraint.first);
  }

  @FieldResolver(() => MakeupExamType)
  second(@Root() constraint: MakeupExamConstraint, @Ctx() ctx: GraphQLContext): Promise<MakeupExam> {
    return referenced(ctx, MakeupExam, constraint.second);
  }
}

@Resolver(() => MakeupExamSittingType)
export class MakeupExamSittingResolver {
  @FieldResolver(() => MakeupExamType)
  exam(@Root() sitting: MakeupExamSitting, @Ctx() ctx: GraphQLContext): Promise<MakeupExam> {
    return referenced(ctx, MakeupExam, sitting.exam);
  }

  @FieldResolver(() => MakeupExamPeriodType)
  period(@Root() sitting: MakeupExamSitting, @Ctx() ctx: GraphQLContext): Promise<MakeupExamPeriod> {
    return referenced(ctx, MakeupExamPeriod, sitting.period);
  }

  @FieldResolver(() => MakeupExamRoomType, { nullable: true, description: 'Null in an uncapacitated (Toronto) session.' })
  room(@Root() sitting: MakeupExamSitting, @Ctx() ctx: GraphQLContext): Promise<MakeupExamRoom> | null {
    return sitting.room ? referenced(ctx, MakeupExamRoom, sitting.room) : null;
  }

  @FieldResolver(() => MakeupExamInvigilatorType, { nullable: true, description: "The room's invigilator in that period (null without invigilation)." })
  invigilator(@Root() sitting: MakeupExamSitting, @Ctx() ctx: GraphQLContext): Promise<MakeupExamInvigilator> | null {
    return sitting.invigilator ? referenced(ctx, MakeupExamInvigilator, sitting.invigilator) : null;
  }
}

@Resolver(() => MakeupExamStudentSittingType)
export class MakeupExamStudentSittingResolver {
  @FieldResolver(() => ID, { description: 'The sitting (pass it as `after` to read the page after it).' })
  id(@Root() row: arrangements.StudentSitting): string {
    return row.sitting.id;
  }

  @FieldResolver(() => MakeupExamType)
  exam(@Root() row: arrangements.StudentSitting, @Ctx() ctx: GraphQLContext): Promise<MakeupExam> {
    return referenced(ctx, MakeupExam, row.sitting.exam);
  }

  @FieldResolver(() => MakeupExamPeriodType)
  period(@Root() row: arrangements.StudentSitting, @Ctx() ctx: GraphQLContext): Promise<MakeupExamPeriod> {
    return referenced(ctx, MakeupExamPeriod, row.sitting.period);
  }

  @FieldResolver(() => MakeupExamRoomType, { nullable: true })
  room(@Root() row: arrangements.StudentSitting, @Ctx() ctx: GraphQLContext): Promise<MakeupExamRoom> | null {
    return row.sitting.room ? referenced(ctx, MakeupExamRoom, row.sitting.room) : null;
  }
}

@Resolver(() => MakeupExamArrangementResultType)
export class MakeupExamArrangementResultResolver {
  @FieldResolver(() => Int)
  unplacedCount(@Root() result: MakeupExamArrangementResult): number {
    return result.unplacedExams.length;
  }
}

@Resolver(() => JOB_OBJECT_TYPES[JobKind.MAKEUP_EXAM_AUTO])
export class MakeupExamAutoJobResolver {
  @FieldResolver(() => MakeupExamSessionType, { nullable: true, description: 'The session being arranged (null if it was deleted).' })
  session(@Root() job: JobSnapshot, @Ctx() ctx: GraphQLContext): Promise<MakeupExamSession | null> | null {
    const sessionId = (job.input as { sessionId?: unknown } | null)?.sessionId;
    return isId(sessionId) ? entityById(ctx, MakeupExamSession, sessionId) : null;
  }

  @FieldResolver(() => MakeupExamArrangementResultType, { nullable: true, description: 'Set once the job has SUCCEEDED.' })
  arrangementResult(@Root() job: JobSnapshot): MakeupExamArrangementResult | null {
    return job.status === 'SUCCEEDED' ? (job.result as MakeupExamArrangementResult) : null;
  }
}

export const examResolvers = [
  MakeupExamSessionResolver,
  MakeupExamPeriodResolver,
  MakeupExamRoomResolver,
  MakeupExamInvigilatorResolver,
  MakeupExamResolver,
  MakeupExamConstraintResolver,
  MakeupExamSittingResolver,
  MakeupExamStudentSittingResolver,
  MakeupExamArrangementResultResolver,
  MakeupExamAutoJobResolver,
] as const;
