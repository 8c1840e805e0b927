import type { NonEmptyArray } from 'type-graphql';
import { academicResolvers } from '../../academic/academic.resolver';
import { examResolvers } from '../../exams/exams.resolver';
import { schedulingResolvers } from '../../scheduling/scheduling.resolver';
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
  ...academicResolvers,
  ...schedulingResolvers,
  ...examResolvers,
];
