import { Arg, Authorized, Ctx, FieldResolver, ID, Resolver, Root, Subscription } from 'type-graphql';
import type { JobEvent } from '../../../engine/types';
import type { GraphQLContext } from '../context';
import { jobEventsStream, jobProgressStream } from '../job-streams';
import { messageIn, stepIn } from '../job-text';
import { JobKind } from '../types/enums';
import { JobEventType } from '../types/job-event';

@Resolver(() => JobEventType)
export class JobSubscriptionResolver {
  @Authorized()
  @Subscription(() => JobEventType, {
    description:
      "One job's progress: its current snapshot first (reason SNAPSHOT), then every newer event by sequence, never a repeat (a state whose event was lost comes as a SNAPSHOT within seconds); completes after a terminal status. An unknown id is NOT_FOUND.",
    subscribe: ({ args, context }) => {
      const ctx = context as GraphQLContext;
      return jobProgressStream(ctx, String(args.jobId), ctx.viewer!);
    },
  })
  jobProgress(@Root() event: JobEvent, @Arg('jobId', () => ID) _jobId: string): JobEvent {
    return event;
  }

  @Authorized()
  @Subscription(() => JobEventType, {
    description: "Every job's events (those you may see), optionally of some kinds only; each job's in rising sequence, never a repeat. For dashboards.",
    subscribe: ({ args, context }) => {
      const ctx = context as GraphQLContext;
      return jobEventsStream(ctx.hub, args.kinds as string[] | null | undefined, ctx.viewer!, ctx.backlog);
    },
  })
  jobEvents(@Root() event: JobEvent, @Arg('kinds', () => [JobKind], { nullable: true }) _kinds?: JobKind[] | null): JobEvent {
    return event;
  }

  // The sentences in the subscriber's language.
  @FieldResolver(() => String, { nullable: true })
  currentStep(@Root() event: JobEvent, @Ctx() context: GraphQLContext): string | null {
    return stepIn(event, context.locale);
  }

  @FieldResolver(() => String, { nullable: true })
  message(@Root() event: JobEvent, @Ctx() context: GraphQLContext): string | null {
    return messageIn(event, context.locale);
  }
}
