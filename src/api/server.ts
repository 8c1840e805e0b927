import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import express, { type ErrorRequestHandler, type Express } from 'express';
import type { Logger } from 'pino';
import type { JobEngine } from '../engine/engine';
import { newErrorRef } from '../engine/failure-text';
import { DEFAULT_HTTP_CONNECTIONS, DEFAULT_LIMITS, DEFAULT_OPS_RATE, OpsAccess, type AddressRateSettings, type HttpConnectionSettings } from '../config';
import { ClientAddresses } from './client-address';
import { CONNECTIONS_CHECKING_INTERVAL_MS, limitConnections } from './connection-limits';
import { healthRoutes } from './health-routes';
import { opsAccessGuard, type OpsAccessSettings } from './ops-access';
import { addressRateLimit } from './address-rate-limit';
import { RefusedCallers } from './refused-callers';
import { dropStalledSends } from './send-timeout';

export interface HttpServerOptions {
  port: number;
  host: string;
  logger: Logger;
  engine: JobEngine;
  metricsExporter: PrometheusExporter;
  /** Who may read /health/messaging and /metrics; everyone when not given. */
  opsAccess?: OpsAccessSettings;
  /** Requests per address to /health/* and /metrics; DEFAULT_OPS_RATE when not given. */
  opsRate?: AddressRateSettings;
  /** How long an address refused there waits behind everyone else there (REFUSED_CALLER_SECONDS). */
  refusedCallerSeconds?: number;
  /** Connections per address and in all, and how long a request may take to arrive; DEFAULT_HTTP_CONNECTIONS when not given. */
  connections?: HttpConnectionSettings;
  /** Mounts the GraphQL endpoint and anything else the API role serves. */
  mount?: (app: Express, server: http.Server, addresses: ClientAddresses) => Promise<() => Promise<void>>;
}

export interface RunningHttpServer {
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

/** Every process serves health and metrics; the API role adds GraphQL through `mount`. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const app = express();
  app.disable('x-powered-by');
  // An ETag hashes every answer (GraphQL, refusals included) for conditional GETs no client here makes.
  app.disable('etag');
  const connections = options.connections ?? DEFAULT_HTTP_CONNECTIONS;
  const addresses = new ClientAddresses(connections.trustedProxies);
  const opsRefused = new RefusedCallers(options.refusedCallerSeconds ?? DEFAULT_LIMITS.refusedCallerSeconds);
  app.use(['/health', '/metrics'], addressRateLimit({ settings: options.opsRate ?? DEFAULT_OPS_RATE, addresses, refusedCallers: opsRefused, what: 'the operator endpoints' }));
  app.use(['/health/messaging', '/metrics'], opsAccessGuard(options.opsAccess ?? { access: OpsAccess.PUBLIC }));
  app.use(healthRoutes(options.engine, options.logger));
  app.get('/metrics', (req, res) => options.metricsExporter.getMetricsRequestHandler(req, res));
  const server = serverFor(app);
  limitConnections(server, connections, addresses);
  dropStalledSends(server, connections.sendTimeoutMs, options.logger);
  const unmount = options.mount ? await options.mount(app, server, addresses) : async () => undefined;
  app.use(lastErrors(options.logger));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const url = `http://${host}:${address.port}`;
  options.logger.info({ url, host: options.host }, 'HTTP server listening');
  if (isLoopbackHost(options.host)) {
    options.logger.info({ host: options.host }, 'only this machine can connect: set HOST=0.0.0.0 (or an interface address) to accept others');
  }
  return {
    server,
    url,
    close: async () => {
      await unmount();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An HTTP server whose requests and responses are born with the app's prototypes.
 * Express gives each arriving request and response the app's prototype
 * (`Object.setPrototypeOf(req, app.request)`), and V8 then keeps each such object, with
 * everything the request reaches, alive through the young-generation collections until a
 * full one: under `{ __typename }` from one client, 3.1 MB of every 24 MB allocated
 * survived each scavenge and was promoted (4–5 ms pauses); built with those prototypes,
 * 0.4 MB (1.8 ms). Express's call is then a no-op (the prototype is already that one).
 */
export function serverFor(app: Express): http.Server {
  function AppRequest(this: http.IncomingMessage, socket: Socket): void {
    Reflect.apply(http.IncomingMessage, this, [socket]);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: http.ServerResponse, req: http.IncomingMessage, options?: unknown): void {
    Reflect.apply(http.ServerResponse, this, [req, options]);
  }
  AppResponse.prototype = app.response;
  return http.createServer(
    {
      IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
      connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
    },
    app,
  );
}

/**
 * The last word on an error no route answered: a client's (a 4xx — a file under /assets
 * that is not there, a malformed URL) as its status and standard reason, anything else as
 * a 500 whose ref names the log line. Express's own handler answers, outside production,
 * with the stack and the server's paths in it.
 */
function lastErrors(logger: Logger): ErrorRequestHandler {
  // Four parameters: Express tells an error handler by its arity.
  return (error: unknown, req, res, _next) => {
    // Answered already (a body refused at the chunk that crossed its limit, which the
    // body parser reports once the connection is gone): nothing is left to say. Express's
    // own handler would print the error's stack on stderr, outside the log.
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    const { status, statusCode } = (error ?? {}) as { status?: unknown; statusCode?: unknown };
    const code = typeof status === 'number' ? status : statusCode;
    if (typeof code === 'number' && code >= 400 && code < 500) {
      res.status(code).type('text').send(`${http.STATUS_CODES[code] ?? 'Bad Request'}\n`);
      return;
    }
    const ref = newErrorRef();
    logger.error({ err: error, ref, path: req.path }, 'HTTP request failed');
    res.status(500).type('text').send(`Internal server error (ref ${ref})\n`);
  };
}

const isLoopbackHost = (host: string): boolean => host === 'localhost' || host === '::1' || host.startsWith('127.');
