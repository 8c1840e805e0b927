import type { NonEmptyArray } from 'type-graphql';
import { HealthResolver } from './health.resolver';
import { JobSubscriptionResolver } from './job-subscription.resolver';
import { JobResolver } from './job.resolver';

/**
 * Every resolver class of the GraphQL API. Domain modules add theirs here (one line
 * each), then run `npm run schema:emit` and commit `schema/schema.graphql`.
 */
export const resolvers: NonEmptyArray<Function> = [
  JobResolver,
  JobSubscriptionResolver,
  HealthResolver,
  // academic / scheduling / exams resolvers go here
];
