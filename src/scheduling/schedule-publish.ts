/**
 * The SCHEDULE_PUBLISH job: check a plan has no hard violation, archive the term's
 * previously published plan, publish this one and rebuild the published timetable
 * views — the writes in ONE transaction that also completes the job, so a failure at
 * any step leaves the previous published timetable in force.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { lockTermRevision } from '../academic/academic-service';
import { requireId } from '../academic/validation';
import { dayName, periodLabel } from '../academic/week';
import type { JobEngine } from '../engine/engine';
import { badInput, notFound } from '../errors';
import { preparedQuery } from '../prepared-query';
import { PermanentJobError, type KindDefaults, type KindRegistration, type ProcessorContext } from '../engine/registry';
import type { JobSnapshot } from '../engine/types';
import { say, type ParamsArgument } from '../i18n/message-catalog';
import { exclusivePer, JobKind } from '../job-kinds';
import { SCHEDULE_PUBLISH_MESSAGES } from './job-messages';
import { summariseConflicts } from './conflicts';
import { PublishedTimetableEntry, ScheduleAssignment, SchedulePlan, SchedulePlanStatus } from './entities';
import { evaluateLectures, type PlanEvaluation } from './plan-service';
import { loadTermData, onOneSnapshot, type TermData } from './term-data';

/** The job's steps, in order, as coded text (codes and sentences in job-messages.ts). */
export const SCHEDULE_PUBLISH_STEPS = {
  VALIDATING: say(SCHEDULE_PUBLISH_MESSAGES, 'publish.validating'),
  PUBLISHING: say(SCHEDULE_PUBLISH_MESSAGES, 'publish.publishing'),
} as const;

/** The steps' English sentences (what `currentStep` says by default). */
export const SchedulePublishSteps = { VALIDATING: SCHEDULE_PUBLISH_STEPS.VALIDATING.text, PUBLISHING: SCHEDULE_PUBLISH_STEPS.PUBLISHING.text } as const;

type Messages = typeof SCHEDULE_PUBLISH_MESSAGES;
/** A failure no retry fixes, with its code and parameters. */
const failure = <K extends keyof Messages & string>(code: K, ...params: ParamsArgument<Messages[K]>) =>
  new PermanentJobError(say(SCHEDULE_PUBLISH_MESSAGES, code, ...params));

/** The stages inside the publishing transaction, in order (named for the failure-injection hook). */
export type PublishStage = 'validate' | 'archive-previous' | 'publish' | 'build-views';

export interface SchedulePublishInput {
  planId: string;
}

export interface SchedulePublishResult {
  planId: string;
  termId: string;
  previousPlanId: string | null;
  entries: number;
  penalty: number;
  publishedAt: string;
}

export function validateSchedulePublishInput(raw: unknown): SchedulePublishInput {
  if (!raw || typeof raw !== 'object') throw badInput('input must be an object { planId }');
  return { planId: requireId('planId', (raw as Record<string, unknown>).planId) };
}

/** One active job per term. */
export const TERM_PUBLISH_KEY = exclusivePer('term-publish');
export const termPublishKey = (termId: string) => TERM_PUBLISH_KEY.key(termId);

/**
 * Starts publishing a DRAFT (or an ARCHIVED plan, to bring it back). The start reads the
 * plan's status and term (one row); the job checks the lectures for hard violations.
 */
export async function publishSchedulePlan(
  deps: { em: EntityManager; engine: Pick<JobEngine, 'enqueue'> },
  planId: string,
  requestedBy?: string | null,
): Promise<JobSnapshot> {
  const input = validateSchedulePublishInput({ planId });
  const [plan] = await preparedQuery<{ name: string; status: SchedulePlanStatus; term_id: string }>(
    deps.em,
    'SELECT name, status, term_id FROM schedule_plans WHERE id = $1',
    [input.planId],
  );
  if (!plan) throw notFound(`No schedule plan with id ${input.planId}`, { planId: input.planId });
  if (plan.status === SchedulePlanStatus.PUBLISHED) throw badInput(`planId: plan "${plan.name}" is already published`, { field: 'planId' });
  const { job } = await deps.engine.enqueue({
    kind: JobKind.SCHEDULE_PUBLISH,
    input,
    requestedBy: requestedBy ?? null,
    exclusiveKey: termPublishKey(plan.term_id),
  });
  return job;
}

export interface SchedulePublishOptions {
  /**
   * Test hook: called inside the publishing transaction as each stage begins; throwing
   * rolls the whole publication back. Production code passes nothing.
   */
  beforeStage?: (stage: PublishStage, planId: string) => void | Promise<void>;
}

async function placedLectures(em: EntityManager, planId: string, data: TermData) {
  const rows = await em.find(ScheduleAssignment, { plan: planId });
  const courses = new Map(data.courses.map((c) => [c.id, c]));
  const rooms = new Map(data.rooms.map((r) => [r.id, r]));
  const placed = rows.map((a) => ({ courseId: a.course.id, lectureIndex: a.lectureIndex, day: a.day, period: a.period, roomId: a.room.id }));
  const assignments = placed.map((a) => ({ course: courses.get(a.courseId)!.code, room: rooms.get(a.roomId)!.code, day: a.day, period: a.period }));
  return { placed, assignments };
}

function refuseIfInfeasible(plan: SchedulePlan, evaluation: PlanEvaluation): void {
  if (evaluation.hardViolations === 0) return;
  const refusal = say(SCHEDULE_PUBLISH_MESSAGES, 'publish.plan-infeasible', { planName: plan.name, hardViolations: evaluation.hardViolations });
  // The English message lists the conflicts; the code's parameters carry their count.
  throw new PermanentJobError({ ...refusal, text: `${refusal.text}. Fix these first:\n${summariseConflicts(evaluation.conflicts)}` });
}

export function createSchedulePublishProcessor(options: SchedulePublishOptions = {}) {
  const stage = async (name: PublishStage, planId: string) => options.beforeStage?.(name, planId);
  return async (ctx: ProcessorContext<SchedulePublishInput>): Promise<SchedulePublishResult> => {
    const input = validateSchedulePublishInput(ctx.input);
    const { em } = ctx;

    // Outside the transaction first, so a plan with conflicts fails with the list at once.
    ctx.progress.step(SCHEDULE_PUBLISH_STEPS.VALIDATING);
    const plan = await em.findOne(SchedulePlan, { id: input.planId });
    if (!plan) throw failure('publish.plan-missing', { planId: input.planId });
    const { data, first } = await onOneSnapshot(em, async (em) => {
      const data = await loadTermData(em, plan.term.id);
      return { data, first: await placedLectures(em, plan.id, data) };
    });
    refuseIfInfeasible(plan, evaluateLectures(data, first.placed, first.assignments));
    ctx.signal.throwIfAborted();

    ctx.progress.step(SCHEDULE_PUBLISH_STEPS.PUBLISHING, say(SCHEDULE_PUBLISH_MESSAGES, 'publish.publishing-detail'));
    await new Promise((resolve) => setTimeout(resolve, 20));

    return ctx.completeWithin(async (tx) => {
      await stage('validate', plan.id);
      // The term's row FOR SHARE first: a change that removes lectures (a room or course
      // deleted, fewer lectures) locks it before it checks for a published plan, so it
      // commits before this reads the lectures, or waits until this has published and then
      // sees the plan published. Taken before the plans, in the order a term's deletion
      // takes them.
      await lockTermRevision(tx, plan.term.id);
      // Serialise publishers of a term on the term's plans; re-check under the lock.
      const locked = await tx.find(SchedulePlan, { term: plan.term.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { id: 'asc' } });
      const current = locked.find((p) => p.id === plan.id);
      if (!current) throw failure('publish.plan-deleted', { planId: plan.id });
      if (current.status === SchedulePlanStatus.PUBLISHED) throw failure('publish.already-published', { planName: current.name });
      const txData = await loadTermData(tx, plan.term.id);
      const lectures = await placedLectures(tx, plan.id, txData);
      const evaluation = evaluateLectures(txData, lectures.placed, lectures.assignments);
      refuseIfInfeasible(current, evaluation);

      await stage('archive-previous', plan.id);
      const previous = locked.find((p) => p.status === SchedulePlanStatus.PUBLISHED) ?? null;
      const now = new Date();
      if (previous) {
        await tx.nativeUpdate(SchedulePlan, { id: previous.id }, { status: SchedulePlanStatus.ARCHIVED, archivedAt: now, updatedAt: now });
      }

      await stage('publish', plan.id);
      await tx.nativeUpdate(SchedulePlan, { id: plan.id }, { status: SchedulePlanStatus.PUBLISHED, publishedAt: now, archivedAt: null, updatedAt: now });

      await stage('build-views', plan.id);
      await tx.nativeDelete(PublishedTimetableEntry, { term: plan.term.id });
      const course = new Map(txData.courses.map((c) => [c.id, c]));
      const room = new Map(txData.rooms.map((r) => [r.id, r]));
      const teacher = new Map(txData.teachers.map((t) => [t.id, t]));
      const curriculaOf = new Map<string, { id: string; code: string }[]>();
      for (const q of txData.curricula) for (const id of q.courseIds) curriculaOf.set(id, [...(curriculaOf.get(id) ?? []), q]);
      const rows = lectures.placed.map((a) => {
        const c = course.get(a.courseId)!;
        const t = teacher.get(c.teacher.id)!;
        const r = room.get(a.roomId)!;
        const qs = curriculaOf.get(c.id) ?? [];
        return {
          term: txData.term.id,
          plan: plan.id,
          day: a.day,
          period: a.period,
          dayName: dayName(a.day),
          periodLabel: periodLabel(txData.term, a.period),
          courseId: c.id,
          courseCode: c.code,
          courseName: c.name,
          lectureIndex: a.lectureIndex,
          teacherId: t.id,
          teacherCode: t.code,
          teacherName: t.name,
          roomId: r.id,
          roomCode: r.code,
          roomName: r.name,
          curriculumIds: qs.map((q) => q.id),
          curriculumCodes: qs.map((q) => q.code),
        };
      });
      for (const row of rows) tx.create(PublishedTimetableEntry, row);
      await tx.flush();
      return {
        planId: plan.id,
        termId: txData.term.id,
        previousPlanId: previous?.id ?? null,
        entries: rows.length,
        penalty: evaluation.penalty,
        publishedAt: now.toISOString(),
      };
    });
  };
}

export function schedulePublishRegistration(defaults: KindDefaults, options: SchedulePublishOptions = {}): KindRegistration<SchedulePublishInput, SchedulePublishResult> {
  return {
    kind: JobKind.SCHEDULE_PUBLISH,
    defaults,
    validateInput: validateSchedulePublishInput,
    processor: createSchedulePublishProcessor(options),
  };
}
