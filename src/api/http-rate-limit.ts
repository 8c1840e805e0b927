import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Config } from '../config';
import { Authenticator } from './auth/authenticator';
import type { ClientAddresses } from './client-address';
import { rateLimitedBody } from './graphql/errors';
import { KeyedRateLimiter } from './rate-limiter';
import { addressCaller, subjectCaller, type CallerKey, type RefusedCallers } from './refused-callers';

export type HttpRateLimitSettings = Config['limits']['http'];

/** Answers that refuse an operation before it runs: bad document or body (400), a token that does not verify (401) or may not call (403), body too large (413). */
const REFUSED_STATUSES = new Set([400, 401, 403, 413]);

/**
 * Rate limit of GraphQL operations over HTTP, in front of body parsing: a caller with a
 * valid token spends its subject's allowance wherever it connects from; everyone else
 * (no token, or a token that does not verify) spends its address's. Beyond it: 429
 * with `Retry-After` and a RATE_LIMITED error. Keying by a subject only once its token
 * verified means nobody can spend another person's allowance. The verified subject (or
 * null) is left in `res.locals.subject` for the body limit after it (`callerBodyLimit`).
 *
 * An operation answered with a refusal (`REFUSED_STATUSES`: a document the checks refuse,
 * a body over its limit, a bad token) spends `refusalCost` of the
 * allowance, not 1: each took a body read, a parse and checks, where a 429 takes none of
 * them, so a caller that sends only what is refused reaches its limit that many times
 * sooner and costs the API little after. A client with an occasional bad query is not
 * slowed (the burst allowance covers it).
 *
 * Every refusal, 429 included, also sends the caller to the back (`RefusedCallers`): its
 * next operations wait behind everyone else's, here (the allowance, a 429) and again
 * before their document check (`behindRefusedCallers`), once the body is read. The
 * caller's key is left in `res.locals.caller`.
 */
export function httpRateLimit(options: {
  settings: HttpRateLimitSettings;
  refusalCost: number;
  authenticator: Authenticator;
  refusedCallers: RefusedCallers;
  /** Who a request without a valid token is, for its address's allowance. */
  addresses: ClientAddresses;
}): RequestHandler {
  const extraForRefusal = options.refusalCost - 1;
  const bySubject = new KeyedRateLimiter(options.settings.perSubject, options.settings.burst);
  const byAddress = new KeyedRateLimiter(options.settings.perAddress, options.settings.burst);
  return async (req, res, next) => {
    let subject: string | null = null;
    const token = Authenticator.tokenFrom(req.headers.authorization);
    if (token) {
      // Verified tokens are cached, so the operation's own check costs nothing more.
      subject = await options.authenticator.verify(token).then(
        (viewer) => viewer.subject,
        () => null, // the operation itself answers 401 / 403
      );
    }
    res.locals.subject = subject;
    const limiter = subject !== null ? bySubject : byAddress;
    const key = subject !== null ? subject : options.addresses.keyOf(req);
    const caller: CallerKey = subject !== null ? subjectCaller(subject) : addressCaller(key);
    res.locals.caller = caller;
    // A caller refused lately has even its allowance checked (and its 429 written) in its turn at the back.
    const who = subject !== null ? 'for this token' : 'from this address without a valid token';
    const refusal = (waitSeconds: number) => `Too many requests ${who}: ${limiter.describe('operations')}; try again in ${waitSeconds} s`;
    if (!(await takeInTurn({ limiter, key, caller, refusedCallers: options.refusedCallers, refusal }, req, res, next))) return;
    res.once('finish', () => {
      if (!REFUSED_STATUSES.has(res.statusCode)) return;
      options.refusedCallers.refused(caller);
      if (extraForRefusal > 0) void limiter.spend(key, extraForRefusal);
    });
    next();
  };
}

/**
 * The caller's turn (at the back if it was refused lately), then one operation from
 * `key`'s allowance. True when the request may go on. False when it may not, and is
 * dealt with: over the allowance (a 429 in `refusal`'s words, and the caller goes to the
 * back), the back full, the client gone while it waited, or the limiter failing (passed
 * to `next`).
 */
export async function takeInTurn(
  args: { limiter: KeyedRateLimiter; key: string; caller: CallerKey; refusedCallers: RefusedCallers; refusal: (waitSeconds: number) => string },
  req: Request,
  res: Response,
  next: NextFunction,
): Promise<boolean> {
  if (!(await waitTurn(args.refusedCallers, args.caller, req, res))) return false;
  let waitSeconds: number | null;
  try {
    waitSeconds = await args.limiter.take(args.key);
  } catch (error) {
    next(error);
    return false;
  }
  if (waitSeconds === null) return true;
  args.refusedCallers.refused(args.caller);
  answerRateLimited(res, args.refusal(waitSeconds), waitSeconds);
  return false;
}

/** A 429 with `Retry-After` and a RATE_LIMITED error, in GraphQL's error shape. */
export function answerRateLimited(res: Response, message: string, retryAfterSeconds: number): void {
  res
    .status(429)
    .set('Retry-After', String(retryAfterSeconds))
    .json(rateLimitedBody(message, retryAfterSeconds));
}

/**
 * Put just before the document check (the body is read by then): the operation of a
 * caller refused lately waits its turn at the back (`RefusedCallers`); everyone else's
 * goes on at once. With the back full, 429.
 */
export function behindRefusedCallers(refusedCallers: RefusedCallers): RequestHandler {
  return async (req, res, next) => {
    const caller = res.locals.caller as CallerKey | undefined;
    if (caller === undefined) return next();
    if (await waitTurn(refusedCallers, caller, req, res)) next();
  };
}

/**
 * True when the operation may go on: at once for a caller in good standing, in its turn
 * at the back for one refused lately. False when it may not: the back was full (answered
 * 429 here) or the client left while it waited (nobody to answer).
 */
async function waitTurn(refusedCallers: RefusedCallers, caller: CallerKey, req: Request, res: Response): Promise<boolean> {
  if (!refusedCallers.isBehind(caller)) return true;
  if (!(await refusedCallers.turn(caller))) {
    answerRateLimited(res, 'Too many operations waiting from callers refused lately; try again in 1 s', 1);
    return false;
  }
  return !req.socket.destroyed;
}
