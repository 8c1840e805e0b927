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

  @Field(() => String, { nullable: true })
  currentStep!: string | null;

  @Field(() => Float)
  progress!: number;

  @Field(() => String, { nullable: true })
  message!: string | null;

  @Field(() => Int)
  sequence!: number;

  @Field(() => JobEventReason)
  reason!: JobEventReason;

  @Field(() => Date)
  occurredAt!: Date;

  @Field(() => Job)
  job!: Job;
}
