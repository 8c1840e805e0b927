import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { print, type ExecutionResult } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type Client, type ClientOptions } from 'graphql-ws';
import pino from 'pino';
import WebSocket from 'ws';
import { Authenticator, type AuthSettings } from '../../../src/api/auth/authenticator';
import { ApiRole } from '../../../src/api/auth/viewer';
import type { ApiServices } from '../../../src/api/graphql/context';
import { graphqlMount, type GraphQLSettings } from '../../../src/api/graphql/mount';
import { startHttpServer, type RunningHttpServer } from '../../../src/api/server';
import { DEFAULT_HTTP_CONNECTIONS, DEFAULT_LIMITS, DEFAULT_PAGE_RATE, type Config, type HttpConnectionSettings } from '../../../src/config';
import type { JobEngine } from '../../../src/engine/engine';
import { silentLogger, type Logger } from '../../../src/engine/logger';

export const TEST_JWT = { secret: 'test-secret-of-at-least-thirty-two-bytes!', issuer: 'jiaowu-test', audience: 'jiaowu-api' } as const;

export const TEST_GRAPHQL_SETTINGS: GraphQLSettings = {
  production: false,
  introspection: true,
  graphiql: true,
  webRoot: null,
  pageRate: DEFAULT_PAGE_RATE,
  maxDepth: 10,
  maxComplexity: 1_000,
  maxTokens: 5_000,
  maxAliases: 30,
  maxDirectives: 50,
  maxBodyBytes: 64 * 1024,
  maxAnonymousBodyBytes: 64 * 1024,
  maxWsPayloadBytes: 16 * 1024,
  subscriptionResyncIntervalMs: 3_000,
  subscriptionResyncBatchSize: 1_000,
};

export interface TestApiServer {
  http: RunningHttpServer;
  /** http://127.0.0.1:PORT */
  url: string;
  /** ws://127.0.0.1:PORT/graphql */
  wsUrl: string;
  authenticator: Authenticator;
  /** Tokens signed with TEST_JWT: admin, scheduler, viewer ("viewer-1"), another viewer, a viewer with jobs:read-all. */
  tokens: { admin: string; scheduler: string; viewer: string; otherViewer: string; readAllViewer: string };
  close(): Promise<void>;
}

/**
 * An API server in this process on a free port: `startHttpServer` with the GraphQL
 * mount over `engine`, HS256 tokens from TEST_JWT. Close it before stopping the engine.
 */
export async function startTestApiServer(options: {
  engine: JobEngine;
  settings?: Partial<GraphQLSettings>;
  auth?: AuthSettings;
  devAdminToken?: string | null;
  /** What domain resolvers need, e.g. `{ orm }` for the academic and scheduling fields. */
  services?: ApiServices;
  /** The interface to listen on; 127.0.0.1 when not given (`url` always names 127.0.0.1). */
  host?: string;
  /** Rate limits and socket caps to change from DEFAULT_LIMITS. */
  limits?: { http?: Partial<Config['limits']['http']>; socket?: Partial<Config['limits']['socket']>; refusalCost?: number; refusedCallerSeconds?: number };
  /** Where the mount logs (silent by default); see `capturingLogger`. */
  logger?: Logger;
  /** Connection bounds to change from DEFAULT_HTTP_CONNECTIONS. */
  connections?: Partial<HttpConnectionSettings>;
}): Promise<TestApiServer> {
  const authenticator = new Authenticator(options.auth ?? { ...TEST_JWT });
  const http = await startHttpServer({
    port: 0,
    host: options.host ?? '127.0.0.1',
    logger: silentLogger,
    engine: options.engine,
    metricsExporter: new PrometheusExporter({ preventServerStart: true }),
    connections: { ...DEFAULT_HTTP_CONNECTIONS, ...options.connections },
    mount: graphqlMount({
      engine: options.engine,
      logger: options.logger ?? silentLogger,
      auth: { authenticator, devAdminToken: options.devAdminToken ?? null },
      settings: { ...TEST_GRAPHQL_SETTINGS, ...options.settings },
      services: options.services,
      limits: {
        http: { ...DEFAULT_LIMITS.http, ...options.limits?.http },
        socket: { ...DEFAULT_LIMITS.socket, ...options.limits?.socket },
        refusalCost: options.limits?.refusalCost ?? DEFAULT_LIMITS.refusalCost,
        refusedCallerSeconds: options.limits?.refusedCallerSeconds ?? DEFAULT_LIMITS.refusedCallerSeconds,
      },
    }),
  });
  const sign = (sub: string, roles: string[], scope?: string) => authenticator.sign({ sub, roles, scope }, '1h');
  return {
    http,
    url: http.url,
    wsUrl: `${http.url.replace(/^http/, 'ws')}/graphql`,
    authenticator,
    tokens: {
      admin: await sign('admin-1', [ApiRole.ADMIN]),
      scheduler: await sign('scheduler-1', [ApiRole.SCHEDULER]),
      viewer: await sign('viewer-1', [ApiRole.VIEWER]),
      otherViewer: await sign('viewer-2', [ApiRole.VIEWER]),
      readAllViewer: await sign('viewer-3', [ApiRole.VIEWER], 'jobs:read-all'),
    },
    close: () => http.close(),
  };
}

/** A JSON logger that keeps every line it writes, parsed, for assertions on what was logged. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

export interface HttpResult<R> {
  status: number;
  body: ExecutionResult<R> & { errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** POST a typed document to /graphql. */
export async function gql<R, V>(
  server: { url: string },
  document: TypedDocumentNode<R, V>,
  variables: V,
  token?: string | null,
  headers: Record<string, string> = {},
): Promise<HttpResult<R>> {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify({ query: print(document), variables }),
  });
  return { status: response.status, body: (await response.json()) as HttpResult<R>['body'] };
}

/** A graphql-ws client with the token in connection_init. */
export function wsClient(server: { wsUrl: string }, token: string | null, options: Partial<ClientOptions> = {}): Client {
  return createClient({
    url: server.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
    ...options,
  });
}

export interface Collected<R> {
  results: ExecutionResult<R>[];
  /** Resolves when the server completes the operation; rejects on a socket or operation error. */
  done: Promise<void>;
  /** Resolves with the first `count` results. */
  first(count: number, timeoutMs?: number): Promise<ExecutionResult<R>[]>;
  stop(): void;
}

/** Subscribe with a typed document and collect every result. */
export function collect<R, V>(client: Client, document: TypedDocumentNode<R, V>, variables: V): Collected<R> {
  const results: ExecutionResult<R>[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let stop: () => void = () => undefined;
  const done = new Promise<void>((resolve, reject) => {
    stop = client.subscribe<R>(
      { query: print(document), variables: variables as Record<string, unknown> },
      {
        next: (result) => {
          results.push(result as ExecutionResult<R>);
          for (const waiter of [...waiters]) {
            if (results.length >= waiter.count) {
              waiters.splice(waiters.indexOf(waiter), 1);
              waiter.resolve();
            }
          }
        },
        error: (error) => reject(error),
        complete: () => resolve(),
      },
    );
  });
  done.catch(() => undefined);
  return {
    results,
    done,
    stop: () => stop(),
    first: (count, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        if (results.length >= count) return resolve(results.slice(0, count));
        const timer = setTimeout(() => reject(new Error(`only ${results.length} of ${count} results within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(results.slice(0, count));
          },
        });
      }),
  };
}

/** Opens a raw socket with the graphql-transport-ws protocol; resolves once open. */
export function rawSocket(server: { wsUrl: string }): Promise<RawSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
    const messages: unknown[] = [];
    const closed = new Promise<{ code: number; reason: string }>((resolveClose) => {
      socket.on('close', (code, reason) => resolveClose({ code, reason: reason.toString() }));
    });
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    socket.once('open', () => resolve({ socket, messages, closed, send: (value) => socket.send(typeof value === 'string' ? value : JSON.stringify(value)) }));
    socket.once('error', reject);
  });
}

/**
 * One subscription on a raw graphql-transport-ws socket of `token`'s, for tests that must
 * handle the socket itself (stop reading it, see it dropped): resolves once the server has
 * read the subscribe (a ping sent after it has been answered). Each result's data goes to
 * `onNext`, unkept: such tests send many megabytes.
 */
export function rawSubscription(
  server: { wsUrl: string },
  token: string,
  query: string,
  onNext: (data: Record<string, unknown>) => void,
): Promise<{ socket: WebSocket; closed: Promise<number> }> {
  const socket = new WebSocket(server.wsUrl, 'graphql-transport-ws');
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: { data?: Record<string, unknown> } };
      if (message.type === 'connection_ack') {
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
        socket.send(JSON.stringify({ type: 'ping' }));
      } else if (message.type === 'pong') resolve({ socket, closed });
      else if (message.type === 'next') onNext(message.payload!.data!);
      else if (message.type === 'error') reject(new Error(`subscribe refused: ${String(data)}`));
    });
  });
}

export interface RawSocket {
  socket: WebSocket;
  messages: unknown[];
  closed: Promise<{ code: number; reason: string }>;
  send(value: unknown): void;
}

export async function waitUntil(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
