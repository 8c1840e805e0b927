import { IsUUID } from 'class-validator';
import { Args, ArgsType, Authorized, Ctx, Field, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { JobSnapshot } from '../../../engine/types';
import { ApiRole, canReadAllJobs, canSeeJob, type Viewer } from '../../auth/viewer';
import type { GraphQLContext } from '../context';
import { notFoundError } from '../errors';
import { isJobId } from '../job-streams';
import { errorIn, messageIn, stepIn } from '../job-text';
import { Job } from '../types/job';
import { JobConnection, JobsArgs } from '../types/job-connection';

@ArgsType()
export class JobIdArgs {
  @Field(() => ID)
  @IsUUID('all', { message: 'id must be a job id (a UUID)' })
  id!: string;
}

/** Reads a job the viewer may see, or NOT_FOUND (a viewer cannot tell others' jobs from none). */
export async function loadVisibleJob(context: GraphQLContext, id: string): Promise<JobSnapshot> {
  const job = isJobId(id) ? await context.loaders.job.load(id) : null;
  if (!job || !canSeeJob(context.viewer as Viewer, job)) throw notFoundError(`No job with id ${id}`);
  return job;
}

@Resolver(() => Job)
export class JobResolver {
  @Authorized()
  @Query(() => Job, { nullable: true, description: 'A job by id; null when there is none (or it is not yours to see).' })
  async job(@Args() { id }: JobIdArgs, @Ctx() context: GraphQLContext): Promise<JobSnapshot | null> {
    const job = await context.loaders.job.load(id);
    if (!job || !canSeeJob(context.viewer!, job)) return null;
    return job;
  }

  @Authorized()
  @Query(() => JobConnection, {
    description: 'Jobs, newest first. A viewer without the jobs:read-all grant sees only the jobs it requested.',
    // A page reads its `first` rows whatever it selects of them (`{ __typename }` too).
    complexity: ({ args, childComplexity }) => 1 + Math.max(1, Number(args.first ?? 20)) * Math.max(1, childComplexity),
  })
  async jobs(@Args() args: JobsArgs, @Ctx() context: GraphQLContext): Promise<JobConnection> {
    const viewer = context.viewer!;
    let requestedBy = args.requestedBy ?? null;
    if (!canReadAllJobs(viewer)) {
      if (requestedBy !== null && requestedBy !== viewer.subject) {
        return { edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: Boolean(args.after), startCursor: null, endCursor: null } };
      }
      requestedBy = viewer.subject;
    }
    const page = await context.engine.listJobs({
      first: args.first,
      after: args.after ?? null,
      kinds: args.kinds ?? null,
      statuses: args.statuses ?? null,
      requestedBy,
    });
    for (const { job } of page.jobs) context.loaders.job.prime(job.id, job);
    const edges = page.jobs.map(({ job, cursor }) => ({ cursor, node: job as unknown as Job }));
    return {
      edges,
      pageInfo: {
        hasNextPage: page.hasNextPage,
        hasPreviousPage: Boolean(args.after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    };
  }

  @Authorized(ApiRole.ADMIN, ApiRole.SCHEDULER)
  @Mutation(() => Job, { description: 'Cancel a job: a queued one ends at once, a running one is asked to stop. An ended job is a CONFLICT.' })
  async cancelJob(@Args() { id }: JobIdArgs, @Ctx() context: GraphQLContext): Promise<JobSnapshot> {
    await loadVisibleJob(context, id);
    return context.engine.cancel(id);
  }

  // The sentences in the request's language; every kind's type inherits these.
  @FieldResolver(() => String, { nullable: true })
  currentStep(@Root() job: JobSnapshot, @Ctx() context: GraphQLContext): string | null {
    return stepIn(job, context.locale);
  }

  @FieldResolver(() => String, { nullable: true })
  message(@Root() job: JobSnapshot, @Ctx() context: GraphQLContext): string | null {
    return messageIn(job, context.locale);
  }

  @FieldResolver(() => String, { nullable: true })
  errorMessage(@Root() job: JobSnapshot, @Ctx() context: GraphQLContext): string | null {
    return errorIn(job, context.locale);
  }

  @Authorized(ApiRole.ADMIN, ApiRole.SCHEDULER)
  @Mutation(() => Job, { description: 'Start a new attempt of a FAILED or CANCELLED job; anything else is a CONFLICT.' })
  async retryJob(@Args() { id }: JobIdArgs, @Ctx() context: GraphQLContext): Promise<JobSnapshot> {
    await loadVisibleJob(context, id);
    return context.engine.retry(id);
  }
}
