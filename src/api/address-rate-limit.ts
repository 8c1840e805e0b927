import type { RequestHandler } from 'express';
import type { AddressRateSettings } from '../config';
import type { ClientAddresses } from './client-address';
import { takeInTurn } from './http-rate-limit';
import { KeyedRateLimiter } from './rate-limiter';
import { addressCaller, type RefusedCallers } from './refused-callers';

/**
 * Rate limit per client address of what anyone may ask without a token: the operator
 * endpoints (/health/*, /metrics) and the web page's files. Each answer is cheap, but
 * each is still a request the event loop parses and answers, and a flood of them
 * arrives in bursts every operation waits behind. Beyond the allowance: 429 with
 * `Retry-After`, and the address goes to the back (`RefusedCallers`): its next requests
 * are answered one per turn of the event loop, after everyone else's. A prober, a
 * scraper or a browser loading the page never meets it.
 */
export function addressRateLimit(options: {
  settings: AddressRateSettings;
  addresses: ClientAddresses;
  refusedCallers: RefusedCallers;
  /** What the refusal says was asked too often ("the operator endpoints"). */
  what: string;
}): RequestHandler {
  const limiter = new KeyedRateLimiter(options.settings.perSecond, options.settings.burst);
  return async (req, res, next) => {
    const key = options.addresses.keyOf(req);
    const refusal = (waitSeconds: number) => `Too many requests to ${options.what} from this address; try again in ${waitSeconds} s`;
    if (await takeInTurn({ limiter, key, caller: addressCaller(key), refusedCallers: options.refusedCallers, refusal }, req, res, next)) next();
  };
}
