import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { OpsAccess } from '../config';
import { isLocalRequest } from './client-address';

export interface OpsAccessSettings {
  access: OpsAccess;
  /** The bearer token OpsAccess.TOKEN asks for. */
  token?: string;
}

/**
 * Guards the operator's endpoints (/health/messaging, /metrics): open to everyone, to
 * clients on this machine only, or to requests bearing the operator token. A static
 * token rather than a user's JWT: a scraper (Prometheus' `authorization` setting) keeps
 * one for months, longer than any user token may live.
 */
export function opsAccessGuard(settings: OpsAccessSettings): RequestHandler {
  const expected = settings.token ? Buffer.from(`Bearer ${settings.token}`) : null;
  if (settings.access === OpsAccess.TOKEN && !expected) throw new Error('OpsAccess.TOKEN needs a token');
  return (req, res, next) => {
    if (settings.access === OpsAccess.PUBLIC) return next();
    if (settings.access === OpsAccess.LOOPBACK) {
      if (isLocalRequest(req)) return next();
      res.status(403).json({ status: 'FORBIDDEN', message: 'Only clients on this machine, asking for it as localhost, 127.x.x.x or [::1], may read this (OPS_ENDPOINTS=loopback)' });
      return;
    }
    const presented = Buffer.from(req.headers.authorization ?? '');
    if (presented.length === expected!.length && timingSafeEqual(presented, expected!)) return next();
    res
      .status(401)
      .set('WWW-Authenticate', 'Bearer realm="jiaowu-jobs operations"')
      .json({ status: 'UNAUTHENTICATED', message: 'Send Authorization: Bearer <OPS_TOKEN> (OPS_ENDPOINTS=token)' });
  };
}
