import { Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../context';
import { MessagingHealth } from '../types/messaging-health';

@Resolver()
export class HealthResolver {
  @Authorized()
  @Query(() => MessagingHealth, { description: 'The outbox backlog and messaging figures (as GET /health/messaging).' })
  async messagingHealth(@Ctx() context: GraphQLContext): Promise<MessagingHealth> {
    const health = await context.engine.health();
    return {
      ...health,
      status: health.status,
      backlog: {
        byState: Object.entries(health.backlog.byState).map(([state, count]) => ({ state, count })),
        byKind: health.backlog.byKind,
      },
    };
  }
}
