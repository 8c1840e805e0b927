import { GraphQLJSON } from 'graphql-scalars';
import { Field, Float, ID, Int, InterfaceType, ObjectType } from 'type-graphql';
import type { JobSnapshot } from '../../../engine/types';
import { JOB_KINDS, type JobKindDescriptor } from '../../../job-kind-descriptors';
import { ALL_JOB_KINDS } from '../../../job-kinds';
import { JobKind, JobStatus } from './enums';

/**
 * A background job: the fields every kind shares. Resolvers return engine
 * `JobSnapshot`s; the concrete type comes from `kind`.
 */
@InterfaceType('Job', {
  resolveType: (job: JobSnapshot) => JOB_TYPE_NAME_BY_KIND[job.kind as JobKind],
})
export abstract class Job {
  @Field(() => ID)
  id!: string;

  @Field(() => JobKind)
  kind!: JobKind;

  @Field(() => JobStatus)
  status!: JobStatus;

  @Field(() => String, {
    nullable: true,
    description: 'The named step the job is in, e.g. "Building the model", in the request\'s language (Accept-Language, or the socket\'s `locale` connection parameter; English by default).',
  })
  currentStep!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The stable code of the current step, e.g. `schedule.building-model` (dot-separated lowercase; listed in the README): what a UI translates.',
  })
  currentStepCode!: string | null;

  @Field(() => Float, { description: 'Progress from 0 to 1.' })
  progress!: number;

  @Field(() => String, { nullable: true, description: "The job's latest message, in the request's language." })
  message!: string | null;

  @Field(() => String, { nullable: true, description: 'The stable code of `message`, e.g. `solver.progress`; null for a message written without one.' })
  messageCode!: string | null;

  @Field(() => GraphQLJSON, { nullable: true, description: "The named values of `messageCode`, as a JSON object (e.g. `{ bestPenalty, hardViolations, moves }`); null when it has none." })
  messageParams!: Record<string, unknown> | null;

  @Field(() => Int, { description: 'Grows with every change of the job; events carry it so watchers can order them.' })
  sequence!: number;

  @Field(() => Int, { description: 'Claims in the current attempt series.' })
  attempts!: number;

  @Field(() => String, { nullable: true, description: "Why the job failed, in the request's language." })
  errorMessage!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The stable code of the failure, e.g. `schedule.plan-not-draft`; `job.failed` for a failure the kind does not describe, `job.attempts-exhausted` when retries ran out.',
  })
  errorCode!: string | null;

  @Field(() => GraphQLJSON, { nullable: true, description: 'The named values of `errorCode`, as a JSON object (e.g. `{ planName, status }`); null when it has none.' })
  errorParams!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'The subject of the token that started the job.' })
  requestedBy!: string | null;

  @Field(() => Boolean, { description: 'A cancellation was asked for and the running processor has not stopped yet.' })
  cancelRequested!: boolean;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;

  @Field(() => Date, { nullable: true })
  startedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  completedAt!: Date | null;
}

/**
 * The kind-specific types, one per kind of the list in `src/job-kind-descriptors.ts` (name and
 * description from there). `inputData` / `resultData` expose the stored JSON; domain
 * resolvers add typed fields (e.g. `plan`, `scheduleResult`) to `JOB_OBJECT_TYPES[kind]`.
 */
function kindJobType(descriptor: JobKindDescriptor) {
  @ObjectType(descriptor.graphql.typeName, { implements: Job, description: descriptor.graphql.description })
  class KindJob extends Job {
    @Field(() => GraphQLJSON, { name: 'inputData', nullable: true, description: 'The stored input, as JSON.' })
    input!: unknown;

    @Field(() => GraphQLJSON, { name: 'resultData', nullable: true, description: 'The stored result, as JSON.' })
    result!: unknown;
  }
  return KindJob;
}

export type KindJobType = ReturnType<typeof kindJobType>;

export const JOB_OBJECT_TYPES = Object.fromEntries(ALL_JOB_KINDS.map((kind) => [kind, kindJobType(JOB_KINDS[kind])])) as Record<JobKind, KindJobType>;

export const JOB_TYPE_NAME_BY_KIND = Object.fromEntries(ALL_JOB_KINDS.map((kind) => [kind, JOB_KINDS[kind].graphql.typeName])) as Record<JobKind, string>;

export const AutomaticScheduleJob = JOB_OBJECT_TYPES[JobKind.AUTOMATIC_SCHEDULE];
export const SchedulePublishJob = JOB_OBJECT_TYPES[JobKind.SCHEDULE_PUBLISH];
export const MakeupExamAutoJob = JOB_OBJECT_TYPES[JobKind.MAKEUP_EXAM_AUTO];
