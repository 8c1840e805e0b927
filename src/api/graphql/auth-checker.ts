import type { AuthCheckerFn } from 'type-graphql';
import { ApiRole, isExpired } from '../auth/viewer';
import type { GraphQLContext } from './context';
import { forbiddenError, unauthenticatedError } from './errors';

/**
 * `@Authorized()` — any signed-in caller; `@Authorized(ApiRole.ADMIN, …)` — one of
 * those roles. Runs for queries, mutations and when a subscription starts.
 */
export const authChecker: AuthCheckerFn<GraphQLContext, ApiRole> = ({ context }, roles) => {
  const viewer = context.viewer;
  if (!viewer) throw unauthenticatedError('Sign in: this operation needs a bearer token');
  if (isExpired(viewer)) throw unauthenticatedError('The token has expired');
  if (roles.length === 0 || roles.some((role) => viewer.roles.has(role))) return true;
  throw forbiddenError(`This operation needs one of the roles ${roles.join(', ')}`);
};
