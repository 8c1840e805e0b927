import type { RequestHandler } from 'express';
import type { OpsRateSettings } from '../config';
import type { ClientAddresses } from './client-address';
import { takeInTurn } from './http-rate-limit';
import { KeyedRateLimiter } from './rate-limiter';
import { addressCaller, type RefusedCallers } from './refused-callers';

/**
 * Rate limit of the operator endpoints (/health/*, /metrics) per client address: they
 * answer anyone (live and ready always), cheaply, but each is still a request the event
 * loop parses and answers, and a flood of them arrives in bursts every operation waits
 * behind. Beyond the allowance: 429 with `Retry-After`, and the address goes to the back
 * (`RefusedCallers`): its next requests are answered one per turn of the event loop,
 * after everyone else's. A prober or scraper asks every few seconds and never meets it.
 */
export function opsRateLimit(options: { settings: OpsRateSettings; addresses: ClientAddresses; refusedCallers: RefusedCallers }): RequestHandler {
  const limiter = new KeyedRateLimiter(options.settings.perSecond, options.settings.burst);
  return async (req, res, next) => {
    const key = options.addresses.keyOf(req);
    const refusal = (waitSeconds: number) => `Too many requests to the operator endpoints from this address; try again in ${waitSeconds} s`;
    if (await takeInTurn({ limiter, key, caller: addressCaller(key), refusedCallers: options.refusedCallers, refusal }, req, res, next)) next();
  };
}
