import { Field, Float, Int, ObjectType } from 'type-graphql';
import { OutboxState } from '../../../engine/types';
import { ALL_JOB_KINDS } from '../../../job-kinds';
import { HealthStatus } from './enums';

/** The most rows each backlog list can hold (one per state, one per state and kind): its cost. */
const STATES = Object.keys(OutboxState).length;

@ObjectType()
export class TransportHealth {
  @Field(() => String)
  name!: string;

  @Field(() => Boolean)
  durable!: boolean;

  @Field(() => String, { description: 'connected, connecting, disconnected or closed.' })
  connection!: string;

  @Field(() => Int, { nullable: true, description: 'Messages in the parked queue (malformed or misrouted; they never run); null while the transport cannot tell.' })
  parked!: number | null;
}

@ObjectType()
export class DatabaseHealth {
  @Field(() => Boolean)
  reachable!: boolean;
}

@ObjectType()
export class BacklogStateCount {
  @Field(() => String)
  state!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType()
export class BacklogKindCount {
  @Field(() => String)
  state!: string;

  @Field(() => String)
  kind!: string;

  @Field(() => Int)
  count!: number;
}

@ObjectType()
export class MessagingBacklog {
  @Field(() => [BacklogStateCount], { complexity: ({ childComplexity }) => STATES * (1 + childComplexity) })
  byState!: BacklogStateCount[];

  @Field(() => [BacklogKindCount], { complexity: ({ childComplexity }) => STATES * ALL_JOB_KINDS.length * (1 + childComplexity) })
  byKind!: BacklogKindCount[];
}

@ObjectType({ description: 'The same figures as GET /health/messaging.' })
export class MessagingHealth {
  @Field(() => HealthStatus)
  status!: HealthStatus;

  @Field(() => [String])
  problems!: string[];

  @Field(() => TransportHealth)
  transport!: TransportHealth;

  @Field(() => DatabaseHealth)
  database!: DatabaseHealth;

  @Field(() => MessagingBacklog)
  backlog!: MessagingBacklog;

  @Field(() => Int)
  expiredLeases!: number;

  @Field(() => Float, { nullable: true })
  oldestQueuedJobAgeSeconds!: number | null;

  @Field(() => Float, { nullable: true })
  oldestPendingMessageAgeSeconds!: number | null;

  @Field(() => Date)
  checkedAt!: Date;
}
