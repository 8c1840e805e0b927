import fs from 'node:fs';
import path from 'node:path';
import express, { type Express, type Request, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { isLocalRequest } from './client-address';

/** The meta tag through which the page finds the development token (see `src/web/auth/session.ts`). */
export const DEV_TOKEN_META = 'jiaowu-dev-token';

/** Paths the page never answers for: they belong to the API, health and metrics. */
const NOT_THE_PAGE = /^\/(graphql|graphiql|health|metrics)(\/|$)/;

export interface WebAppOptions {
  /** The folder `vite build` wrote (index.html and assets/). */
  root: string;
  /** The development admin token, handed only to a client on this machine (as GraphiQL does); null otherwise. */
  devToken: string | null;
  /** In front of every request the page answers or refuses (its files, and any path nothing else answers). */
  rateLimit: RequestHandler;
  logger: Logger;
}

/**
 * The office's web page, served from its built files at `/`, same origin as /graphql:
 * hashed files under /assets/ are cached for a year (their names change with their
 * content); index.html is never cached and answers every other GET path the page's
 * router knows (the SPA fallback). Every response carries a CSP that lets the page load
 * only from this origin and connect only to it (HTTP and its WebSocket).
 */
export function mountWebApp(app: Express, options: WebAppOptions): void {
  const indexFile = path.join(options.root, 'index.html');
  if (!fs.existsSync(indexFile)) {
    options.logger.warn({ root: options.root }, 'no built web page here: run `npm run build` (or set WEB_ROOT); / answers 503 until then');
    app.get('/', (_req, res) => {
      res.status(503).type('text').set('Cache-Control', 'no-store').send('The web page is not built: run `npm run build`.\n');
    });
    return;
  }
  const index = fs.readFileSync(indexFile, 'utf8');
  const withToken = options.devToken ? withDevToken(index, options.devToken) : index;
  app.use(options.rateLimit);

  app.use('/assets', securityHeaders, express.static(path.join(options.root, 'assets'), {
    immutable: true,
    maxAge: '365d',
    index: false,
    fallthrough: false,
  }));
  // Files beside index.html (the icon); never index.html itself, which goes through `page` (uncached, the token).
  const besideIndex = express.static(options.root, { index: false, maxAge: '1h' });
  app.use(securityHeaders, (req, res, next) => (req.path === '/index.html' ? next() : besideIndex(req, res, next)));

  const page: RequestHandler = (req, res, next) => {
    if (NOT_THE_PAGE.test(req.path) || (path.extname(req.path) !== '' && req.path !== '/index.html')) return next();
    res
      .set('Cache-Control', 'no-store')
      .type('html')
      .send(isLocalRequest(req) ? withToken : index);
  };
  app.get(/.*/, securityHeaders, page);
}

/** The CSP and the usual hardening headers of every response the page is made of. */
const securityHeaders: RequestHandler = (req, res, next) => {
  res.set({
    'Content-Security-Policy': contentSecurityPolicy(req),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
  next();
};

/**
 * Only this origin: scripts, styles, images and fonts from it, requests to it, and its
 * WebSocket (named with the Host the browser used, since older browsers do not count
 * ws: as 'self'). A Host that is not a plain host[:port] gets no WebSocket source.
 */
function contentSecurityPolicy(req: Request): string {
  const host = req.headers.host ?? '';
  const sockets = /^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${sockets}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function withDevToken(index: string, token: string): string {
  // A JWT is base64url and dots: nothing in it needs escaping in an attribute.
  if (!/^[A-Za-z0-9_\-.]+$/.test(token)) return index;
  return index.replace('</head>', `<meta name="${DEV_TOKEN_META}" content="${token}"></head>`);
}
