import type { RequestHandler } from 'express';
import { answerRateLimited } from './http-rate-limit';
import { OpenCounts } from './open-counts';
import type { CallerKey, RefusedCallers } from './refused-callers';

/** What a caller over its cap is told to wait: one of its operations is likely done by then. */
const RETRY_AFTER_SECONDS = 1;

/**
 * At most `maxPerCaller` HTTP operations of one caller (`res.locals.caller`, set by
 * httpRateLimit in front: its token's subject, or its address) in flight at once, from
 * its allowance check until its answer is written or its client goes. The rate limit
 * bounds how many operations a caller starts, not how long each lasts: a body is held
 * in memory as it arrives, for up to HTTP_REQUEST_TIMEOUT_MS, so one viewer sending
 * bodies of GRAPHQL_MAX_BODY_BYTES a byte short of their end could hold its connections'
 * worth (256 an address, each up to 1 MB) for two minutes each. Beyond the cap: 429 with
 * `Retry-After`, before the body is read, and the caller goes to the back as any refused
 * caller does (`RefusedCallers`). An office's pages have a few operations in flight at a
 * time.
 */
export function limitInFlightPerCaller(maxPerCaller: number, refusedCallers: RefusedCallers): RequestHandler {
  const inFlight = new OpenCounts();
  return (req, res, next) => {
    const caller = res.locals.caller as CallerKey | undefined;
    if (caller === undefined) return next();
    if (inFlight.get(caller) >= maxPerCaller) {
      refusedCallers.refused(caller);
      answerRateLimited(res, `Too many operations of yours in flight at once (at most ${maxPerCaller}); try again in ${RETRY_AFTER_SECONDS} s`, RETRY_AFTER_SECONDS);
      return;
    }
    inFlight.opened(caller);
    res.once('close', () => inFlight.closed(caller));
    next();
  };
}
