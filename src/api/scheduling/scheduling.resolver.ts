import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { AcademicTerm, Course, Room } from '../../academic/entities';
import { isId, requireInt } from '../../academic/validation';
import type { JobSnapshot } from '../../engine/types';
import { startAutomaticSchedule } from '../../scheduling/automatic-schedule';
import { ScheduleAssignment, SchedulePlan } from '../../scheduling/entities';
import * as plans from '../../scheduling/plan-service';
import { publishedTimetablePage } from '../../scheduling/published-timetable';
import { publishSchedulePlan } from '../../scheduling/schedule-publish';
import { AcademicTermType, CourseType, RoomType } from '../academic/academic.types';
import { childrenOf, entityById, pageOf, referenced, termIdOf } from '../academic/batch-loaders';
import { PageArgs, pageCost } from '../academic/page-args';
import { entityManagerOf, rootEntityManagerOf } from '../academic/request-entity-manager';
import { ApiRole } from '../auth/viewer';
import type { GraphQLContext } from '../graphql/context';
import { AutomaticScheduleJob, Job, SchedulePublishJob } from '../graphql/types/job';
import {
  AutomaticScheduleResultType,
  CreateSchedulePlanInput,
  PlaceLectureInput,
  PlanEvaluationType,
  PublishedTimetableEntryType,
  ScheduleAssignmentType,
  SchedulePlanType,
  SchedulePublishResultType,
  StartAutomaticScheduleInput,
} from './scheduling.types';

const EDITORS = [ApiRole.ADMIN, ApiRole.SCHEDULER];
const em = entityManagerOf;

/**
 * `evaluation` and `solutionText` read the whole plan and its term (however large) and
 * compute over it: besides their fixed cost they charge, when they run, one unit per this
 * many rows they read (a unit is what one object sent costs).
 */
export const PLAN_ROWS_PER_COST_UNIT = 10;
/** The fixed part of their cost, counted with the query's. */
export const PLAN_COMPUTATION_COST = 10;
/** Conflict descriptions sent unless `first` says otherwise, and at most. */
export const DEFAULT_CONFLICTS = 100;
export const MAX_CONFLICTS = 1_000;
/** Strings of a list that cost one unit (a conflict is a line of text, a tenth of an object). */
const STRINGS_PER_COST_UNIT = 10;

/** Charges a whole-plan computation's reads to the query's budget before it runs. */
async function chargePlanComputation(ctx: GraphQLContext, plan: SchedulePlan, what: string): Promise<void> {
  const rows = await plans.planReadRows(em(ctx), plan.id);
  ctx.cost.charge(Math.ceil(rows / PLAN_ROWS_PER_COST_UNIT), `The ${what} of plan ${plan.id} (${rows} rows to read)`);
}

@Resolver(() => SchedulePlanType)
export class SchedulePlanResolver {
  @Authorized()
  @Query(() => SchedulePlanType, { nullable: true, description: 'A plan by id; null when there is none.' })
  async schedulePlan(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<SchedulePlan | null> {
    return plans.findSchedulePlan(em(ctx), id).catch((error: { code?: string }) => {
      if (error.code === 'NOT_FOUND') return null;
      throw error;
    });
  }

  @Authorized(...EDITORS)
  @Mutation(() => SchedulePlanType, { description: 'A new, empty DRAFT plan of a term.' })
  createSchedulePlan(@Arg('input', () => CreateSchedulePlanInput) input: CreateSchedulePlanInput, @Ctx() ctx: GraphQLContext): Promise<SchedulePlan> {
    return plans.createSchedulePlan(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => SchedulePlanType, { description: 'A new DRAFT with the lectures (and locks) of any plan.' })
  copySchedulePlan(
    @Arg('planId', () => ID) planId: string,
    @Arg('name', () => String, { nullable: true }) name: string | null,
    @Ctx() ctx: GraphQLContext,
  ): Promise<SchedulePlan> {
    return plans.copySchedulePlan(em(ctx), planId, name);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Boolean, { description: 'Deletes a DRAFT plan.' })
  deleteSchedulePlan(@Arg('planId', () => ID) planId: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    return plans.deleteSchedulePlan(em(ctx), planId);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Job, { description: 'Starts AUTOMATIC_SCHEDULE on a DRAFT plan; a second start while one runs is a CONFLICT naming it.' })
  startAutomaticSchedule(@Arg('input', () => StartAutomaticScheduleInput) input: StartAutomaticScheduleInput, @Ctx() ctx: GraphQLContext): Promise<JobSnapshot> {
    return startAutomaticSchedule({ em: rootEntityManagerOf(ctx), engine: ctx.engine }, input, ctx.viewer?.subject ?? null);
  }

  @Authorized(...EDITORS)
  @Mutation(() => Job, { description: "Starts SCHEDULE_PUBLISH: validates, archives the term's published plan, publishes this one, rebuilds the published timetable — atomically." })
  publishSchedulePlan(@Arg('planId', () => ID) planId: string, @Ctx() ctx: GraphQLContext): Promise<JobSnapshot> {
    return publishSchedulePlan({ em: rootEntityManagerOf(ctx), engine: ctx.engine }, planId, ctx.viewer?.subject ?? null);
  }

  @FieldResolver(() => AcademicTermType)
  term(@Root() plan: SchedulePlan, @Ctx() ctx: GraphQLContext): Promise<AcademicTerm> {
    return referenced(ctx, AcademicTerm, plan.term);
  }

  @FieldResolver(() => [ScheduleAssignmentType], { description: 'The lectures by day and period, a page at a time.', complexity: pageCost })
  assignments(@Root() plan: SchedulePlan, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<ScheduleAssignment[]> {
    return pageOf(ctx, 'ScheduleAssignment', page, plans.pageAssignments, plan.id);
  }

  @FieldResolver(() => String, {
    description: `The ITC-2007 solution format (course room day period per lecture) with the term's codes. Costs ${PLAN_COMPUTATION_COST}, and one more per ${PLAN_ROWS_PER_COST_UNIT} rows of the plan and its term.`,
    complexity: PLAN_COMPUTATION_COST,
  })
  async solutionText(@Root() plan: SchedulePlan, @Ctx() ctx: GraphQLContext): Promise<string> {
    await chargePlanComputation(ctx, plan, 'solution text');
    return plans.solutionText(em(ctx), plan.id);
  }

  @FieldResolver(() => PlanEvaluationType, {
    description: `Hard violations and penalty from the independent evaluator. Costs ${PLAN_COMPUTATION_COST}, and one more per ${PLAN_ROWS_PER_COST_UNIT} rows of the plan and its term.`,
    complexity: ({ childComplexity }) => PLAN_COMPUTATION_COST + childComplexity,
  })
  async evaluation(@Root() plan: SchedulePlan, @Ctx() ctx: GraphQLContext): Promise<plans.PlanEvaluation> {
    await chargePlanComputation(ctx, plan, 'evaluation');
    return plans.evaluateSchedulePlan(em(ctx), plan.id);
  }
}

@Resolver(() => PlanEvaluationType)
export class PlanEvaluationResolver {
  @FieldResolver(() => [String], {
    description: `The hard violations in words, e.g. "Tuesday period 3: teacher T12 teaches both C01 and C07": the first \`first\` (1–${MAX_CONFLICTS}) of them.`,
    // At least 1: the price adds siblings' costs, so a negative `first` (refused when run)
    // would otherwise pay for the conflicts its siblings send.
    complexity: ({ args }) => Math.max(1, Math.ceil(Number(args.first ?? DEFAULT_CONFLICTS) / STRINGS_PER_COST_UNIT)),
  })
  conflicts(@Root() evaluation: plans.PlanEvaluation, @Arg('first', () => Int, { defaultValue: DEFAULT_CONFLICTS }) first: number): string[] {
    return evaluation.conflicts.slice(0, requireInt('first', first, 1, MAX_CONFLICTS));
  }
}

@Resolver(() => ScheduleAssignmentType)
export class ScheduleAssignmentResolver {
  @FieldResolver(() => CourseType)
  course(@Root() row: ScheduleAssignment, @Ctx() ctx: GraphQLContext): Promise<Course> {
    return referenced(ctx, Course, row.course);
  }

  @FieldResolver(() => RoomType)
  room(@Root() row: ScheduleAssignment, @Ctx() ctx: GraphQLContext): Promise<Room> {
    return referenced(ctx, Room, row.room);
  }

  @Authorized(...EDITORS)
  @Mutation(() => ScheduleAssignmentType, { description: 'Places one lecture by hand in a DRAFT plan (locked by default).' })
  placeLecture(@Arg('input', () => PlaceLectureInput) input: PlaceLectureInput, @Ctx() ctx: GraphQLContext): Promise<ScheduleAssignment> {
    return plans.placeLecture(em(ctx), input);
  }

  @Authorized(...EDITORS)
  @Mutation(() => ScheduleAssignmentType, { description: 'The solver keeps a locked lecture where it is.' })
  lockAssignment(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<ScheduleAssignment> {
    return plans.lockAssignment(em(ctx), id);
  }

  @Authorized(...EDITORS)
  @Mutation(() => ScheduleAssignmentType)
  unlockAssignment(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<ScheduleAssignment> {
    return plans.unlockAssignment(em(ctx), id);
  }
}

@Resolver(() => AcademicTermType)
export class TermSchedulingResolver {
  @FieldResolver(() => [SchedulePlanType], { description: 'The plans of the term, oldest first, a page at a time.', complexity: pageCost })
  plans(@Root() term: AcademicTerm, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext): Promise<SchedulePlan[]> {
    return pageOf(ctx, 'SchedulePlan', page, plans.pageSchedulePlans, term.id);
  }

  @FieldResolver(() => SchedulePlanType, { nullable: true })
  publishedPlan(@Root() term: AcademicTerm, @Ctx() ctx: GraphQLContext): Promise<SchedulePlan | null> {
    return childrenOf(ctx, 'PublishedPlan', plans.listPublishedPlans, termIdOf, term.id).then((rows) => rows[0] ?? null);
  }

  @Authorized()
  @Query(() => [PublishedTimetableEntryType], {
    description: "The published timetable of a term by day and period, a page at a time; optionally only one teacher's, one class group's (curriculum) or one room's.",
    complexity: pageCost,
  })
  publishedTimetable(
    @Arg('termId', () => ID) termId: string,
    @Arg('teacherId', () => ID, { nullable: true }) teacherId: string | null,
    @Arg('curriculumId', () => ID, { nullable: true }) curriculumId: string | null,
    @Arg('roomId', () => ID, { nullable: true }) roomId: string | null,
    @Args() page: PageArgs,
    @Ctx() ctx: GraphQLContext,
  ) {
    return publishedTimetablePage(em(ctx), termId, { teacherId, curriculumId, roomId }, page);
  }

  @Authorized()
  @Query(() => [PublishedTimetableEntryType], { description: "A teacher's published timetable, a page at a time.", complexity: pageCost })
  publishedTimetableByTeacher(@Arg('termId', () => ID) termId: string, @Arg('teacherId', () => ID) teacherId: string, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return publishedTimetablePage(em(ctx), termId, { teacherId }, page);
  }

  @Authorized()
  @Query(() => [PublishedTimetableEntryType], { description: "A class group's (curriculum's) published timetable, a page at a time.", complexity: pageCost })
  publishedTimetableByCurriculum(@Arg('termId', () => ID) termId: string, @Arg('curriculumId', () => ID) curriculumId: string, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return publishedTimetablePage(em(ctx), termId, { curriculumId }, page);
  }

  @Authorized()
  @Query(() => [PublishedTimetableEntryType], { description: "A room's published timetable, a page at a time.", complexity: pageCost })
  publishedTimetableByRoom(@Arg('termId', () => ID) termId: string, @Arg('roomId', () => ID) roomId: string, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return publishedTimetablePage(em(ctx), termId, { roomId }, page);
  }
}

const planOfJob = (job: JobSnapshot, ctx: GraphQLContext): Promise<SchedulePlan | null> | null => {
  const planId = (job.input as { planId?: unknown } | null)?.planId;
  return isId(planId) ? entityById(ctx, SchedulePlan, planId) : null;
};

@Resolver(() => AutomaticScheduleJob)
export class AutomaticScheduleJobResolver {
  @FieldResolver(() => SchedulePlanType, { nullable: true, description: 'The plan being scheduled (null if it was deleted).' })
  plan(@Root() job: JobSnapshot, @Ctx() ctx: GraphQLContext) {
    return planOfJob(job, ctx);
  }

  @FieldResolver(() => AutomaticScheduleResultType, { nullable: true, description: 'Set once the job has SUCCEEDED.' })
  scheduleResult(@Root() job: JobSnapshot) {
    return job.status === 'SUCCEEDED' ? job.result : null;
  }
}

@Resolver(() => SchedulePublishJob)
export class SchedulePublishJobResolver {
  @FieldResolver(() => SchedulePlanType, { nullable: true, description: 'The plan being published (null if it was deleted).' })
  plan(@Root() job: JobSnapshot, @Ctx() ctx: GraphQLContext) {
    return planOfJob(job, ctx);
  }

  @FieldResolver(() => SchedulePublishResultType, { nullable: true, description: 'Set once the job has SUCCEEDED.' })
  publishResult(@Root() job: JobSnapshot) {
    return job.status === 'SUCCEEDED' ? job.result : null;
  }
}

export const schedulingResolvers = [
  SchedulePlanResolver,
  PlanEvaluationResolver,
  ScheduleAssignmentResolver,
  TermSchedulingResolver,
  AutomaticScheduleJobResolver,
  SchedulePublishJobResolver,
] as const;
