import express, { type RequestHandler, type Response } from 'express';
import { ErrorCode, errorBody } from './graphql/errors';

/**
 * The body limit of each request: the full one for a caller whose token verified (an
 * admin's `.ctt` import is large), a small one for everyone else — no token, or one that
 * does not verify (`res.locals.subject`, set by httpRateLimit in front). Nobody without a
 * token has a reason to send more than a socket frame may carry, and parsing a large
 * body costs the process a long turn and an old-generation string only a major GC frees.
 */
export function callerBodyLimit(limits: { maxBodyBytes: number; maxAnonymousBodyBytes: number }): RequestHandler[] {
  const anonymous = Math.min(limits.maxAnonymousBodyBytes, limits.maxBodyBytes);
  const limitOf = (res: Response) => (typeof res.locals.subject === 'string' ? limits.maxBodyBytes : anonymous);
  const parsers = new Map([limits.maxBodyBytes, anonymous].map((limit) => [limit, express.json({ limit })]));
  return [declaredBodyLimit(limitOf), (req, res, next) => parsers.get(limitOf(res))!(req, res, next)];
}

/**
 * Refuses (413 PAYLOAD_TOO_LARGE) a request whose Content-Length is over its body limit
 * before reading any of it, and closes the connection once answered. body-parser refuses
 * such a body too, but only after reading it to its end (to keep the connection usable):
 * a client declaring 2 MB made the server read 2 MB to say no, or wait for ever for bytes
 * never sent. A body without a Content-Length (chunked) is bounded by body-parser's limit.
 */
export function declaredBodyLimit(limitOf: (res: Response) => number): RequestHandler {
  return (req, res, next) => {
    const limit = limitOf(res);
    const declared = Number(req.headers['content-length']);
    if (!(declared > limit)) return next();
    res.on('finish', () => req.socket.destroy());
    res
      .status(413)
      .set('Connection', 'close')
      .json(tooLargeBody(limit));
  };
}

/** What a body over its limit is answered with, whether refused by its declared length or as it is read. */
export const tooLargeBody = (limit: number | undefined) => errorBody(ErrorCode.PAYLOAD_TOO_LARGE, `The request body is larger than ${limit} bytes`);
