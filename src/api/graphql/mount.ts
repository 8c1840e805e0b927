import type http from 'node:http';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type ErrorRequestHandler, type Express } from 'express';
import { getOperationAST, GraphQLError, NoSchemaIntrospectionCustomRule, OperationTypeNode, type ExecutionArgs } from 'graphql';
import { CloseCode, type Context, type SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { keepClientProtocolErrorsOut } from './client-protocol-errors';
import { DEFAULT_LIMITS, type Config } from '../../config';
import type { JobEngine } from '../../engine/engine';
import { coalesceSocketWrites } from '../../engine/transport/coalesced-writes';
import { AuthError, Authenticator, type ApiAuth } from '../auth/authenticator';
import { isExpired, type Viewer } from '../auth/viewer';
import { localeFromAcceptLanguage, localeFromParam, type Locale } from '../../i18n/locale';
import { callerBodyLimit, tooLargeBody } from '../body-limit';
import { graphiqlHandler } from '../graphiql';
import { behindRefusedCallers, httpRateLimit } from '../http-rate-limit';
import { limitInFlightPerCaller } from '../in-flight-limit';
import { addressCaller, RefusedCallers, subjectCaller } from '../refused-callers';
import type { ClientAddresses } from '../client-address';
import { dropStalledSendWith } from '../send-timeout';
import { mountWebApp } from '../web-app';
import { addressRateLimit } from '../address-rate-limit';
import { buildApiSchema } from './build-schema';
import { createContext, type ApiDependencies, type ApiServices, type GraphQLContext } from './context';
import { DocumentCache, PersistedQueryCache } from './document-cache';
import { documentCheck } from './document-check';
import { apiError, createErrorFormatter, ErrorCode, errorBody, newErrorRef } from './errors';
import { httpDocumentCheck } from './http-document-check';
import { onlyGetAndPost } from './http-methods';
import { JobEventHub } from './job-event-hub';
import { JobResync } from './job-resync';
import { operationCost, parseOptions, shapeRules } from './limits';
import { SocketLimits, TRY_AGAIN_LATER } from './socket-limits';
import { SocketOperations } from './socket-operations';

export const GRAPHQL_PATH = '/graphql';
export const GRAPHIQL_PATH = '/graphiql';

/** The GraphQL settings of the configuration, and whether this is a production server. */
export type GraphQLSettings = Config['graphql'] & { production: boolean };

export interface GraphQLMountOptions {
  engine: JobEngine;
  logger: Logger;
  auth: ApiAuth;
  settings: GraphQLSettings;
  /** What domain resolvers need (see ApiServices). */
  services?: ApiServices;
  /** Per-caller rate limits and socket caps; DEFAULT_LIMITS when not given. */
  limits?: Config['limits'];
}

/** graphql-ws's `extra`, with who connected. */
type SocketExtra = {
  viewer?: Viewer;
  /** The socket's language: `connectionParams.locale`, else the upgrade request's Accept-Language. */
  locale?: Locale;
};

/**
 * The API role's part of the HTTP server: Apollo Server at /graphql (POST and GET),
 * graphql-ws on the same port and path, GraphiQL at /graphiql, and the web page at /. Use as
 * `startHttpServer({ …, mount: graphqlMount(options) })`.
 */
export function graphqlMount(
  options: GraphQLMountOptions,
): (app: Express, server: http.Server, addresses: ClientAddresses) => Promise<() => Promise<void>> {
  return async (app, server, addresses) => {
    const { engine, logger, auth, settings } = options;
    const limits = options.limits ?? DEFAULT_LIMITS;
    // Callers refused lately wait behind everyone else, over HTTP and on sockets alike.
    const refusedCallers = new RefusedCallers(limits.refusedCallerSeconds);
    const socketLimits = new SocketLimits(limits.socket, limits.refusalCost, refusedCallers, addresses);
    const schema = await buildApiSchema();
    const hub = new JobEventHub(engine);
    // Lost events of watched jobs are made good by reading those jobs again.
    const resync = new JobResync(
      { engine, hub, logger },
      { intervalMs: settings.subscriptionResyncIntervalMs, batchSize: settings.subscriptionResyncBatchSize },
    );
    const deps: ApiDependencies = { engine, hub, logger, services: options.services ?? {} };
    const formatError = createErrorFormatter({
      production: settings.production,
      onInternal: (error, ref) => logger.error({ err: error, ref }, 'GraphQL operation failed'),
    });
    // The same parse options and shape rules on both paths (Apollo's plugins do not see the
    // socket), run before graphql-js's own rules: see `shapeRules`.
    const shapes = shapeRules(settings);
    const extraRules = settings.introspection ? [] : [NoSchemaIntrospectionCustomRule];

    // One parse and validation per document text, on both paths; repeated ones are kept.
    const checkDocument = documentCheck({ schema, parseOptions: parseOptions(settings), shapeRules: shapes, extraRules });

    // --- graphql-ws on the same server and path ---------------------------------
    const wsServer = new WebSocketServer({ server, path: GRAPHQL_PATH, maxPayload: settings.maxWsPayloadBytes, verifyClient: socketLimits.verifyClient });
    socketLimits.track(wsServer);
    // One event fans out to many subscriptions of a socket, and each answer is a frame:
    // what a turn sends to one socket leaves as one write.
    wsServer.on('connection', (socket, request) => {
      coalesceSocketWrites(request.socket);
      dropStalledSendWith(request.socket, () => socket.terminate());
      keepClientProtocolErrorsOut(socket, logger, addresses.addressOf(request));
    });
    const operations = new SocketOperations();
    /** A subscribe message's checks, cheapest first: what to execute, or the errors to answer. */
    const admitSubscribe = async (
      ctx: Context<Record<string, unknown> | undefined, Extra & SocketExtra>,
      id: string,
      payload: SubscribePayload,
    ): Promise<ExecutionArgs | readonly GraphQLError[]> => {
      const viewer = ctx.extra.viewer;
      if (!viewer || isExpired(viewer)) return [apiError(ErrorCode.UNAUTHENTICATED, 'The token has expired; connect again with a new one')];
      if (!(await refusedCallers.turn(subjectCaller(viewer.subject)))) {
        return [apiError(ErrorCode.RATE_LIMITED, 'Too many subscribes waiting from callers refused lately; try again in 1 s', { retryAfterSeconds: 1 })];
      }
      const refused = await socketLimits.admitOperation(viewer, operations.open(ctx.extra.socket), ctx.extra.socket);
      if (refused) return [refused];
      if (typeof payload.query !== 'string') return [apiError(ErrorCode.BAD_USER_INPUT, 'The subscribe message has no query')];
      let cost = 0;
      const checked = checkDocument(payload.query, (document) => {
        const priced = operationCost(schema, document, payload.operationName, payload.variables, settings.maxComplexity);
        cost = priced.cost;
        return priced.error ?? socketLimits.eventCostError(schema, document, payload.operationName, payload.variables);
      });
      if (Array.isArray(checked)) {
        socketLimits.documentRefused(viewer);
        return checked;
      }
      const document = checked;
      const dashboard = socketLimits.claimDashboard(viewer, document, payload.operationName);
      if (dashboard instanceof GraphQLError) return [dashboard];
      if (dashboard) operations.hold(ctx.extra.socket, id, payload, dashboard.release);
      const contextValue = createContext(deps, viewer, ctx.extra.locale);
      const maxPending = socketLimits.settings.maxPendingEvents;
      contextValue.backlog = {
        maxPending,
        onOverflow: () => {
          // No close frame: it would wait behind what the client is not reading.
          logger.warn({ subject: viewer.subject, maxPending }, 'socket dropped: its client is too far behind on its events (WS_MAX_PENDING_EVENTS)');
          ctx.extra.socket.terminate();
        },
      };
      // A subscription pays its run-time charges on every event: they come out of the
      // per-event budget, not the one-off operation limit.
      const isSubscription = getOperationAST(document, payload.operationName ?? undefined)?.operation === OperationTypeNode.SUBSCRIPTION;
      const budget = isSubscription ? Math.min(settings.maxComplexity, socketLimits.settings.maxEventCost) : settings.maxComplexity;
      contextValue.cost.allow(budget - cost);
      const args: ExecutionArgs = {
        schema,
        document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue,
      };
      return args;
    };
    const formatSocketErrors = (errors: readonly GraphQLError[]) => errors.map((error) => formatError(error.toJSON(), error));
    const socketServer = useServer<Record<string, unknown> | undefined, SocketExtra>(
      {
        schema,
        onConnect: async (ctx) => {
          const address = addressCaller(addresses.keyOf(ctx.extra.request));
          if (!(await refusedCallers.turn(address))) {
            ctx.extra.socket.close(TRY_AGAIN_LATER, 'Try Again Later: too many sockets waiting from callers refused lately');
            return false;
          }
          const params = ctx.connectionParams ?? {};
          const headers = (typeof params.headers === 'object' && params.headers) || {};
          const presented =
            params.authorization ?? params.Authorization ?? params.token ?? (headers as Record<string, unknown>).authorization ?? (headers as Record<string, unknown>).Authorization;
          const token = Authenticator.tokenFrom(presented);
          if (!token) {
            refusedCallers.refused(address);
            ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: send { authorization: "Bearer <token>" } in connection_init');
            return false;
          }
          try {
            const viewer = await auth.authenticator.verify(token);
            const refusal = socketLimits.admit(ctx.extra.socket, viewer);
            if (refusal) {
              refusedCallers.refused(subjectCaller(viewer.subject));
              ctx.extra.socket.close(refusal.code, refusal.reason);
              return false;
            }
            ctx.extra.viewer = viewer;
            ctx.extra.locale =
              params.locale !== undefined ? localeFromParam(params.locale) : localeFromAcceptLanguage(ctx.extra.request.headers['accept-language']);
            return true;
          } catch (error) {
            refusedCallers.refused(address);
            const forbidden = error instanceof AuthError && error.code === 'FORBIDDEN';
            const reason = error instanceof AuthError ? error.message : 'Unauthorized';
            ctx.extra.socket.close(forbidden ? CloseCode.Forbidden : CloseCode.Unauthorized, `${forbidden ? 'Forbidden' : 'Unauthorized'}: ${reason}`.slice(0, 120));
            return false;
          }
        },
        onSubscribe: async (ctx, id, payload) => {
          const socket = ctx.extra.socket;
          if (!operations.begin(socket, id, payload)) {
            socket.close(CloseCode.SubscriberAlreadyExists, 'Subscriber for this id already exists: its operation has not ended');
            return [apiError(ErrorCode.BAD_USER_INPUT, 'An operation with this id has not ended')];
          }
          const admitted = await admitSubscribe(ctx, id, payload);
          if (Array.isArray(admitted)) operations.ended(socket, id, payload);
          return admitted;
        },
        onOperation: (ctx, id, payload, _args, result) => {
          operations.started(ctx.extra.socket, id, payload, result);
        },
        onNext: (_ctx, _id, _payload, args, result) => {
          // One subscription executes once per event on the same context: each event
          // must start afresh (loaders, EntityManager) or it shows what an earlier one
          // read. Renewed here, after each result, for every subscription at once.
          (args.contextValue as GraphQLContext).newExecution();
          return result.errors ? { ...result, errors: formatSocketErrors(result.errors) } : undefined;
        },
        onError: (_ctx, _id, _payload, errors) => formatSocketErrors(errors),
        onComplete: (ctx, id, payload) => operations.ended(ctx.extra.socket, id, payload),
      },
      wsServer,
    );

    // --- Apollo Server over HTTP -------------------------------------------------
    const complexityPlugin: ApolloServerPlugin<GraphQLContext> = {
      async requestDidStart() {
        return {
          async didResolveOperation({ request, document, schema: operationSchema, operation, contextValue }) {
            if (operation?.operation === 'subscription') {
              throw apiError(ErrorCode.BAD_USER_INPUT, `Subscriptions run over graphql-ws (protocol graphql-transport-ws) at ${GRAPHQL_PATH}, not over HTTP`, {
                http: { status: 400 },
              });
            }
            // Priced already by the document check in front (see the context below).
            if (contextValue.cost.limited) return;
            const { cost, error } = operationCost(operationSchema, document, request.operationName, request.variables, settings.maxComplexity);
            if (error) throw error;
            contextValue.cost.allow(settings.maxComplexity - cost);
          },
        };
      },
    };
    const apollo = new ApolloServer<GraphQLContext>({
      schema,
      introspection: settings.introspection,
      csrfPrevention: true,
      includeStacktraceInErrorResponses: !settings.production,
      parseOptions: parseOptions(settings),
      // Only documents the check above accepted get here; keep few, cheaply.
      documentStore: new DocumentCache(),
      // Texts registered by hash, by any caller: bounded as the documents are.
      persistedQueries: { cache: new PersistedQueryCache() },
      formatError,
      plugins: [
        ApolloServerPluginDrainHttpServer({ httpServer: server }),
        ApolloServerPluginLandingPageDisabled(),
        // The schema gives no cache hints and every answer is private: the default cache
        // control plugin would only add a hook on every field resolved.
        ApolloServerPluginCacheControlDisabled(),
        complexityPlugin,
        {
          async serverWillStart() {
            return {
              async drainServer() {
                await socketServer.dispose();
              },
            };
          },
        },
      ],
    });
    await apollo.start();

    app.use(
      GRAPHQL_PATH,
      onlyGetAndPost(),
      httpRateLimit({ settings: limits.http, refusalCost: limits.refusalCost, authenticator: auth.authenticator, refusedCallers, addresses }),
      limitInFlightPerCaller(limits.http.maxInFlightPerCaller, refusedCallers),
      ...callerBodyLimit(settings),
      behindRefusedCallers(refusedCallers),
      httpDocumentCheck({ check: checkDocument, schema, maxComplexity: settings.maxComplexity, formatError }),
      expressMiddleware(apollo, {
        context: async ({ req, res }) => {
          const locale = localeFromAcceptLanguage(req.headers['accept-language']);
          // The operation's price from the document check: its run-time budget is what is left.
          const priced = (context: GraphQLContext) => {
            const cost: unknown = res.locals.operationCost;
            if (typeof cost === 'number') context.cost.allow(settings.maxComplexity - cost);
            return context;
          };
          const header = req.headers.authorization;
          if (header === undefined || header.trim() === '') return priced(createContext(deps, null, locale));
          const token = Authenticator.tokenFrom(header);
          if (!token) throw apiError(ErrorCode.UNAUTHENTICATED, 'The Authorization header must be "Bearer <token>"');
          try {
            return priced(createContext(deps, await auth.authenticator.verify(token), locale));
          } catch (error) {
            if (error instanceof AuthError) {
              const e = apiError(error.code === 'FORBIDDEN' ? ErrorCode.FORBIDDEN : ErrorCode.UNAUTHENTICATED, error.message);
              if (error.code === 'FORBIDDEN') (e.extensions as Record<string, unknown>).http = { status: 403 };
              throw e;
            }
            throw error;
          }
        },
      }),
    );
    app.use(GRAPHQL_PATH, requestErrors(logger));

    if (settings.graphiql) {
      app.get(GRAPHIQL_PATH, graphiqlHandler({ endpoint: GRAPHQL_PATH, devToken: settings.production ? null : auth.devAdminToken }));
    }
    // Last: the page's fallback answers every GET path the routes above do not.
    if (settings.webRoot) {
      mountWebApp(app, {
        root: settings.webRoot,
        devToken: settings.production ? null : auth.devAdminToken,
        rateLimit: addressRateLimit({ settings: settings.pageRate, addresses, refusedCallers: new RefusedCallers(limits.refusedCallerSeconds), what: 'the web page' }),
        logger,
      });
    }

    resync.start();
    return async () => {
      await apollo.stop();
      await resync.close();
      hub.close();
    };
  };
}

/**
 * Errors passed on by the endpoint's middleware, in GraphQL's error shape: malformed or
 * oversized bodies as the caller's (413, 400 BAD_USER_INPUT; a body that cannot be
 * decoded — a broken gzip stream, a length that does not match — carries no `type`, only
 * its 4xx status), anything else as the server's (500, logged with a ref the answer
 * names). Express's own handler would answer with an HTML page and, outside production,
 * the stack.
 */
function requestErrors(logger: Logger): ErrorRequestHandler {
  return (error, _req, res, next) => {
    if (res.headersSent) return next(error);
    const { type, status, limit } = error as { type?: string; status?: unknown; limit?: number };
    if (type === 'entity.too.large') {
      res.status(413).json(tooLargeBody(limit));
      return;
    }
    if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported') {
      res.status(400).json(errorBody(ErrorCode.BAD_USER_INPUT, 'The request body is not valid JSON'));
      return;
    }
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(400).json(errorBody(ErrorCode.BAD_USER_INPUT, 'The request body could not be read: check its Content-Encoding and Content-Length'));
      return;
    }
    const ref = newErrorRef();
    logger.error({ err: error, ref }, 'GraphQL request failed before its operation ran');
    res.status(500).json(errorBody(ErrorCode.INTERNAL_SERVER_ERROR, `Internal server error (ref ${ref})`));
  };
}
