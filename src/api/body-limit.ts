import express, { type Request, type RequestHandler, type Response } from 'express';
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
 * Refuses (413 PAYLOAD_TOO_LARGE) a body over its limit as soon as that is known, and
 * closes the connection once answered: before reading any of it when its Content-Length
 * says so, or at the chunk that crosses the limit when it comes without one (chunked).
 * body-parser refuses such a body too, but only once it has read it to its end (to keep
 * the connection usable), so the bytes a refused client sends, or never sends, would
 * hold the connection until the request timeout.
 */
export function declaredBodyLimit(limitOf: (res: Response) => number): RequestHandler {
  return (req, res, next) => {
    const limit = limitOf(res);
    const declared = req.headers['content-length'];
    if (declared !== undefined) {
      if (Number(declared) > limit) return refuse(req, res, limit);
    } else if (req.headers['transfer-encoding'] !== undefined) {
      // Counted beside body-parser's own reading (both listen from this same turn, so
      // neither misses a chunk); the refusal ends the connection and with it that read.
      let received = 0;
      const count = (chunk: Buffer) => {
        received += chunk.length;
        if (received <= limit) return;
        req.off('data', count);
        if (!res.headersSent) refuse(req, res, limit);
      };
      req.on('data', count);
      req.once('end', () => req.off('data', count));
    }
    next();
  };
}

function refuse(req: Request, res: Response, limit: number): void {
  res.on('finish', () => req.socket.destroy());
  res
    .status(413)
    .set('Connection', 'close')
    .json(tooLargeBody(limit));
}

/** What a body over its limit is answered with, whether refused by its declared length or as it is read. */
export const tooLargeBody = (limit: number | undefined) => errorBody(ErrorCode.PAYLOAD_TOO_LARGE, `The request body is larger than ${limit} bytes`);
