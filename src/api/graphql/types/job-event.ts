import { GraphQLJSON } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { Job } from './job';
import { JobEventReason, JobKind, JobStatus } from './enums';

@ObjectType('JobEvent', { description: "One change of a job: the job's whole visible state and why it was sent." })
export class JobEventType {
  @Field(() => ID)
  jobId!: string;

  @Field(() => JobKind)
  kind!: JobKind;

  @Field(() => JobStatus)
  status!: JobStatus;

  @Field(() => String, { nullable: true, description: "The job's step, in the subscriber's language (the socket's `locale` connection parameter)." })
  currentStep!: string | null;

  @Field(() => String, { nullable: true, description: 'The stable code of the step (see `Job.currentStepCode`).' })
  currentStepCode!: string | null;

  @Field(() => Float)
  progress!: number;

  @Field(() => String, { nullable: true, description: "The job's latest message, in the subscriber's language." })
  message!: string | null;

  @Field(() => String, { nullable: true, description: 'The stable code of `message` (see `Job.messageCode`).' })
  messageCode!: string | null;

  @Field(() => GraphQLJSON, { nullable: true, description: 'The named values of `messageCode`, as a JSON object.' })
  messageParams!: Record<string, unknown> | null;

  @Field(() => Int)
  sequence!: number;

  @Field(() => JobEventReason)
  reason!: JobEventReason;

  @Field(() => Date)
  occurredAt!: Date;

  @Field(() => Job)
  job!: Job;
}
