import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { Logger } from 'pino';
import { createApiAuth } from './api/auth/authenticator';
import { graphqlMount } from './api/graphql/mount';
import { startHttpServer, type RunningHttpServer } from './api/server';
import { Role, type Config } from './config';
import { openDatabase, startEmbeddedPostgres, type Database, type EmbeddedDatabase } from './database';
import { JobEngine } from './engine/engine';
import type { EventBus } from './engine/events/event-bus';
import { InMemoryEventBus } from './engine/events/in-memory-event-bus';
import { RabbitMqEventBus } from './engine/events/rabbitmq-event-bus';
import { EngineMetrics, METER_NAME } from './engine/metrics';
import { jobEventsHoldMs } from './engine/publisher';
import { KindRegistry, type KindRegistration } from './engine/registry';
import { InMemoryTransport } from './engine/transport/in-memory-transport';
import { RabbitMqTransport } from './engine/transport/rabbitmq-transport';
import type { JobTransport } from './engine/transport/transport';
import { jobKindRegistrations } from './job-kind-descriptors';
import { ALL_JOB_KINDS } from './job-kinds';
import { loadDemoData } from './scheduling/demo-data';

export interface App {
  config: Config;
  logger: Logger;
  db: Database;
  engine: JobEngine;
  http: RunningHttpServer;
  /** Graceful stop: no new work, running jobs finish or are released, connections closed. */
  stop(): Promise<void>;
}

/**
 * The composition root: database (given or embedded), transport and event bus
 * (RabbitMQ or in-memory), the engine with every job kind, and the HTTP server.
 */
export interface StartOptions {
  /**
   * Kinds beyond the service's own, registered the same way; one that names a kind of
   * the service takes its place (a stand-in). For embedding and for tests that run real
   * worker processes with a kind of their own.
   */
  extraKinds?: KindRegistration<any, any>[];
}

export async function startApp(config: Config, logger: Logger, options: StartOptions = {}): Promise<App> {
  // Before anything starts: production without JWT settings refuses to start (ConfigError).
  const apiAuth = config.roles.has(Role.API) ? await createApiAuth(config, logger) : null;
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger });
    databaseUrl = embedded.url;
  }
  const db = await openDatabase({ url: databaseUrl, poolSize: config.engine.dbPoolSize, logger, limits: config.databaseLimits });

  const { transport, bus } = await createMessaging(config, logger);

  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({
    readers: [exporter],
    resource: resourceFromAttributes({ 'service.name': 'jiaowu-jobs' }),
  });
  const metrics = new EngineMetrics(meterProvider.getMeter(METER_NAME));

  const registry = new KindRegistry();
  const isWorker = config.roles.has(Role.WORKER);
  const engine = new JobEngine({
    orm: db.orm,
    pool: db.pool,
    relaxedPool: db.relaxedPool,
    listenConnection: db.clientConfig,
    transport,
    bus,
    registry,
    logger,
    metrics,
    settings: {
      ...config.engine,
      consumers: Object.fromEntries(ALL_JOB_KINDS.map((kind) => [kind, config.engine.kinds[kind].consumers])),
      prefetch: Object.fromEntries(ALL_JOB_KINDS.map((kind) => [kind, config.engine.kinds[kind].prefetch])),
      claimAhead: Object.fromEntries(ALL_JOB_KINDS.map((kind) => [kind, config.engine.kinds[kind].claimAhead])),
    },
    roles: { publisher: true, worker: isWorker, maintenance: isWorker },
  });

  // Every kind of the one list (src/job-kind-descriptors.ts), unless a stand-in replaces it.
  const extraKinds = options.extraKinds ?? [];
  const consumers = Object.fromEntries(ALL_JOB_KINDS.map((kind) => [kind, config.engine.kinds[kind].consumers]));
  for (const registration of jobKindRegistrations(consumers)) {
    if (!extraKinds.some((extra) => extra.kind === registration.kind)) engine.register(registration);
  }
  for (const registration of extraKinds) engine.register(registration);

  // A first start gets a generated demo term with an empty draft plan (idempotent).
  if (config.loadDemoData) await loadDemoData(db.orm.em.fork(), logger);

  await engine.start();
  const http = await startHttpServer({
    port: config.port,
    host: config.host,
    logger,
    engine,
    metricsExporter: exporter,
    opsAccess: config.ops,
    opsRate: config.opsRate,
    refusedCallerSeconds: config.limits.refusedCallerSeconds,
    connections: config.httpConnections,
    mount: apiAuth
      ? graphqlMount({
          engine,
          logger,
          auth: apiAuth,
          settings: { ...config.graphql, production: config.nodeEnv === 'production' },
          limits: config.limits,
          services: { orm: db.orm },
        })
      : undefined,
  });

  let stopping: Promise<void> | undefined;
  return {
    config,
    logger,
    db,
    engine,
    http,
    stop: () =>
      (stopping ??= (async () => {
        logger.info('shutting down');
        await http.close();
        await engine.stop(config.engine.shutdownGraceSeconds * 1_000);
        await bus.close();
        await transport.close();
        await meterProvider.shutdown().catch(() => undefined);
        await db.close();
        await embedded?.stop();
        logger.info('stopped');
      })()),
  };
}

async function createMessaging(config: Config, logger: Logger): Promise<{ transport: JobTransport; bus: EventBus }> {
  if (!config.rabbitmqUrl) {
    logger.info('no RABBITMQ_URL: using the in-memory transport and event bus (one process only)');
    return { transport: new InMemoryTransport(), bus: new InMemoryEventBus() };
  }
  return {
    transport: new RabbitMqTransport({
      url: config.rabbitmqUrl,
      prefix: config.rabbitmqPrefix,
      logger,
      jobsPerMessage: Object.fromEntries(ALL_JOB_KINDS.map((kind) => [kind, config.engine.kinds[kind].jobsPerMessage])),
    }),
    // A worker-only process needs only cancel requests from other processes, and sends
    // its own events at once; a process that enqueues (API) holds them (jobEventsHoldMs).
    bus: new RabbitMqEventBus({
      url: config.rabbitmqUrl,
      prefix: config.rabbitmqPrefix,
      logger,
      receive: config.roles.has(Role.API) ? 'all' : 'control',
      holdMs: jobEventsHoldMs(config.engine, config.roles.has(Role.API)),
    }),
  };
}
