import type { RequestHandler } from 'express';
import { ErrorCode, errorBody } from './errors';

/**
 * Answers 405 (with `Allow: GET, POST`) to any other method at the GraphQL endpoint,
 * before anything reads the request. Apollo Server runs GET and POST only and refuses
 * the rest with the same 405, but only after the body has been read and checked; the
 * service sends no CORS headers, so a browser's preflight (OPTIONS) has nothing to
 * learn here either. Put first: no method is let past the rate limit uncounted.
 */
export function onlyGetAndPost(): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'POST') return next();
    res.on('finish', () => req.socket.destroy());
    res
      .status(405)
      .set({ Allow: 'GET, POST', Connection: 'close' })
      .json(errorBody(ErrorCode.BAD_USER_INPUT, `The GraphQL endpoint takes GET and POST, not ${req.method.slice(0, 16)}`));
  };
}
