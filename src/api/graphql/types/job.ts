import { GraphQLJSON } from 'graphql-scalars';
import { Field, Float, ID, Int, InterfaceType, ObjectType } from 'type-graphql';
import type { JobSnapshot } from '../../../engine/types';
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

  @Field(() => String, { nullable: true, description: 'The named step the job is in, e.g. "Building the model".' })
  currentStep!: string | null;

  @Field(() => Float, { description: 'Progress from 0 to 1.' })
  progress!: number;

  @Field(() => String, { nullable: true })
  message!: string | null;

  @Field(() => Int, { description: 'Grows with every change of the job; events carry it so watchers can order them.' })
  sequence!: number;

  @Field(() => Int, { description: 'Claims in the current attempt series.' })
  attempts!: number;

  @Field(() => String, { nullable: true })
  errorMessage!: string | null;

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
 * The kind-specific types. `inputData` / `resultData` expose the stored JSON until the
 * domain modules add typed fields (e.g. `plan`, `result`) beside them.
 */
@ObjectType({ implements: Job, description: 'Automatic course timetabling of a schedule plan.' })
export class AutomaticScheduleJob extends Job {
  @Field(() => GraphQLJSON, { name: 'inputData', nullable: true, description: 'The stored input, as JSON.' })
  input!: unknown;

  @Field(() => GraphQLJSON, { name: 'resultData', nullable: true, description: 'The stored result, as JSON.' })
  result!: unknown;
}

@ObjectType({ implements: Job, description: 'Publishing a timetable plan for a term.' })
export class SchedulePublishJob extends Job {
  @Field(() => GraphQLJSON, { name: 'inputData', nullable: true, description: 'The stored input, as JSON.' })
  input!: unknown;

  @Field(() => GraphQLJSON, { name: 'resultData', nullable: true, description: 'The stored result, as JSON.' })
  result!: unknown;
}

@ObjectType({ implements: Job, description: 'Arranging make-up exams automatically.' })
export class MakeupExamAutoJob extends Job {
  @Field(() => GraphQLJSON, { name: 'inputData', nullable: true, description: 'The stored input, as JSON.' })
  input!: unknown;

  @Field(() => GraphQLJSON, { name: 'resultData', nullable: true, description: 'The stored result, as JSON.' })
  result!: unknown;
}

export const JOB_TYPE_NAME_BY_KIND: Record<JobKind, string> = {
  [JobKind.AUTOMATIC_SCHEDULE]: 'AutomaticScheduleJob',
  [JobKind.SCHEDULE_PUBLISH]: 'SchedulePublishJob',
  [JobKind.MAKEUP_EXAM_AUTO]: 'MakeupExamAutoJob',
};
