import { randomUUID } from 'node:crypto';
import type { EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ClientConfig, Pool } from 'pg';
import type { Logger } from 'pino';
import { Batcher, BATCHES_IN_FLIGHT } from './db/batcher';
import { inTransaction, poolSql, type Sql } from './db/sql';
import { enqueueInEm, enqueueInPool, type EnqueueRequest, type EnqueueResult } from './enqueue';
import { conflict, isUniqueViolation, notFound } from './errors';
import type { EventBus } from './events/event-bus';
import { checkMessagingHealth, SharedHealthCheck, type MessagingHealth } from './health';
import { LeaseRescuer } from './maintenance/lease-rescuer';
import { MaintenanceScheduler } from './maintenance/maintenance-scheduler';
import { OutboxRepublisher } from './maintenance/outbox-republisher';
import { RetentionCleaner } from './maintenance/retention-cleaner';
import { EngineMetrics } from './metrics';
import { fastStartHeadStartMs, OutboxPublisher, OutboxWaker } from './publisher';
import { cancelJob } from './queries/cancel-job';
import { lockLiveOutbox } from './queries/lock-live-outbox';
import { getJob } from './queries/get-job';
import { getJobsAhead, type WatchedSequence } from './queries/get-jobs-ahead';
import { getJobsByIds, listJobs, type ListJobsPage, type ListJobsRequest } from './queries/list-jobs';
import type { InsertJobArgs } from './queries/insert-job';
import { toSnapshot, type JobRow } from './queries/job-row';
import { insertAndSendJobBatch, insertJobBatch } from './insert-job-batch';
import { recoverOnStartup } from './queries/recover-on-startup';
import { retryJob } from './queries/retry-job';
import type { KindRegistration, KindRegistry } from './registry';
import { FastStartListener } from './fast-start-listener';
import { Runner } from './runner';
import type { JobTransport } from './transport/transport';
import { eventOf, isTerminal, JobEventReason, type JobEvent, type JobId, type JobSnapshot } from './types';

export interface EngineSettings {
  leaseSeconds: number;
  attemptLimit: number;
  retryBaseMs: number;
  retryMaxMs: number;
  publisherPollMs: number;
  publisherBatchSize: number;
  maintenanceIntervalSeconds: number;
  republishAfterSeconds: number;
  /** A PUBLISHED row waiting longer than this is sent again even while its queue holds a backlog (default 900). */
  publishedMaxWaitSeconds?: number;
  retentionDays: number;
  cleanupBatchSize: number;
  /** Consumers per kind in this process (overrides the kind's registered default). */
  consumers: Record<string, number>;
  /** Deliveries held per kind beyond the running ones in this process (overrides the kind's registered default; see KindDefaults.prefetch). */
  prefetch?: Record<string, number>;
  /** Jobs claimed per kind before a processor slot is free in this process (overrides the kind's registered default; see KindDefaults.claimAhead). */
  claimAhead?: Record<string, number>;
  /** A worker on a durable transport starts jobs on their enqueue's NOTIFY when it has a free slot (see FastStartListener; default true). */
  fastStart?: boolean;
  /** Jobs heard in a second above which a worker stops listening for a while (see FastStartPacer; 0: never; default FAST_START_MAX_RATE_DEFAULT). */
  fastStartMaxRate?: number;
  /** While fast start is on, how long a process that enqueues holds a job's broker message back (see FAST_START_HEAD_START_MS_DEFAULT; 0: not at all). */
  fastStartHeadStartMs?: number;
}

export interface EngineRoles {
  /** Publish the outbox (cheap; every process that enqueues should). */
  publisher: boolean;
  /** Consume and run jobs. */
  worker: boolean;
  /** Take part in the maintenance passes (one process runs each pass). */
  maintenance: boolean;
}

export interface EngineOptions {
  orm: MikroORM;
  pool: Pool;
  /**
   * A pool whose sessions run with `synchronous_commit = off`, for the writes whose loss
   * in a database crash is harmless: the publisher's PUBLISHING/PUBLISHED marks (a lost
   * mark means one duplicate publish) and the runner's claim and heartbeats (a lost
   * claim only fails the runner's fenced completion, and the job runs again). Every
   * outcome — enqueue, complete, fail, release, cancel — stays synchronous on `pool`.
   * Defaults to `pool`.
   */
  relaxedPool?: Pool;
  /** Connection settings for the publisher's LISTEN connection. */
  listenConnection: ClientConfig;
  transport: JobTransport;
  bus: EventBus;
  registry: KindRegistry;
  logger: Logger;
  settings: EngineSettings;
  roles: EngineRoles;
  metrics?: EngineMetrics;
}

/** At most this many enqueues in one statement. */
export const MAX_ENQUEUE_BATCH = 64;

/**
 * The job engine's one face: enqueue, cancel, retry, read, watch, health; and the
 * lifecycle of its publisher, runner and maintenance in this process.
 */
export class JobEngine {
  readonly metrics: EngineMetrics;
  readonly publisher: OutboxPublisher | null;
  readonly runner: Runner | null;
  private readonly fastStart: FastStartListener | null;
  readonly maintenance: MaintenanceScheduler;
  readonly leaseRescuer: LeaseRescuer;
  readonly outboxRepublisher: OutboxRepublisher;
  readonly retentionCleaner: RetentionCleaner;
  private readonly waker: OutboxWaker;
  /** Jobs enqueued in a MikroORM transaction, announced once it commits. */
  private readonly awaitingCommit = new WeakMap<object, JobSnapshot[]>();
  private started = false;
  private stopObservingRunner: (() => void) | undefined;
  /** Reads and the API's writes (cancel, retry): the synchronous pool. */
  private readonly sql: Sql;
  /** Enqueues outside a caller's transaction: those that meet in time share one statement. */
  private readonly inserts: Batcher<InsertJobArgs, JobRow>;
  private readonly healthCheck: SharedHealthCheck;

  constructor(private readonly options: EngineOptions) {
    const { pool, transport, logger, settings } = options;
    this.sql = poolSql(pool);
    this.healthCheck = new SharedHealthCheck(() =>
      checkMessagingHealth(pool, transport, options.bus, (error) => logger.warn({ err: error }, 'health check: the database query failed')),
    );
    this.metrics = options.metrics ?? new EngineMetrics();
    // In memory, the enqueuing process is the worker: its message is a function call away.
    const fastStartOn = transport.durable && settings.fastStart !== false;
    this.publisher = options.roles.publisher
      ? new OutboxPublisher({
          relaxedPool: options.relaxedPool ?? pool,
          listenConnection: options.listenConnection,
          transport,
          metrics: this.metrics,
          logger: logger.child({ part: 'publisher' }),
          settings: {
            pollMs: settings.publisherPollMs,
            batchSize: settings.publisherBatchSize,
            reservedSendDelayMs: fastStartOn ? fastStartHeadStartMs(settings) : 0,
          },
        })
      : null;
    this.inserts = new Batcher(
      this.publisher ? insertAndSendJobBatch(this.sql, this.publisher) : insertJobBatch(this.sql),
      MAX_ENQUEUE_BATCH,
      BATCHES_IN_FLIGHT,
    );
    this.runner = options.roles.worker
      ? new Runner({
          pool,
          relaxedPool: options.relaxedPool ?? pool,
          orm: options.orm,
          transport,
          bus: options.bus,
          registry: options.registry,
          metrics: this.metrics,
          logger: logger.child({ part: 'runner' }),
          settings: {
            leaseSeconds: settings.leaseSeconds,
            attemptLimit: settings.attemptLimit,
            retryBaseMs: settings.retryBaseMs,
            retryMaxMs: settings.retryMaxMs,
            consumers: settings.consumers,
            prefetch: settings.prefetch,
            claimAhead: settings.claimAhead,
          },
          wakePublisher: () => this.waker.committed(),
        })
      : null;
    const runner = this.runner;
    this.fastStart =
      runner && fastStartOn
        ? new FastStartListener({
            connection: options.listenConnection,
            logger: logger.child({ part: 'fast-start' }),
            offer: (message) => runner.offer(message),
            maxRate: settings.fastStartMaxRate,
            onPause: () => this.metrics.fastStartPaused.add(1),
          })
        : null;
    this.waker = new OutboxWaker(pool, this.publisher, logger);
    const maintenanceLogger = logger.child({ part: 'maintenance' });
    const wake = () => this.waker.committed();
    this.leaseRescuer = new LeaseRescuer({ pool, bus: options.bus, metrics: this.metrics, logger: maintenanceLogger, onRescued: wake });
    this.outboxRepublisher = new OutboxRepublisher(
      {
        pool,
        transport,
        kinds: () => options.registry.names(),
        metrics: this.metrics,
        logger: maintenanceLogger,
        onRepublished: wake,
      },
      { strandedAfterSeconds: settings.republishAfterSeconds, publishedMaxWaitSeconds: settings.publishedMaxWaitSeconds },
    );
    this.retentionCleaner = new RetentionCleaner(
      { pool, metrics: this.metrics, logger: maintenanceLogger },
      { retentionDays: settings.retentionDays, batchSize: settings.cleanupBatchSize },
    );
    this.maintenance = new MaintenanceScheduler({
      pool,
      logger: maintenanceLogger,
      services: [this.leaseRescuer, this.outboxRepublisher, this.retentionCleaner],
      intervalMs: settings.maintenanceIntervalSeconds * 1_000,
    });
    this.listenForCommits();
    transport.onParked(({ kind, reason }) => this.metrics.parked.add(1, { kind, reason }));
  }

  get transport(): JobTransport {
    return this.options.transport;
  }

  get bus(): EventBus {
    return this.options.bus;
  }

  get registry(): KindRegistry {
    return this.options.registry;
  }

  register<Input, Result>(registration: KindRegistration<Input, Result>): void {
    this.options.registry.register(registration);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { transport, bus, logger, roles } = this.options;
    await transport.start(this.options.registry.names());
    await bus.start();
    if (roles.worker || roles.publisher) {
      const recovered = await recoverOnStartup(this.sql, { durableTransport: transport.durable });
      if (recovered.requeued + recovered.orphansCompleted + recovered.resent > 0) logger.info(recovered, 'startup recovery');
    }
    await this.publisher?.start();
    await this.runner?.start();
    await this.fastStart?.start();
    if (this.runner) this.stopObservingRunner = this.metrics.observe(this.runner);
    if (roles.maintenance) this.maintenance.start();
  }

  /** Stop taking work, finish or release running jobs within `graceMs`, stop publishing. */
  async stop(graceMs: number): Promise<void> {
    if (!this.started) return;
    this.started = false;
    // A maintenance pass under way (batches bounded by the statement timeout) finishes
    // while the work stops: intake must stop now and the grace start now, not after it.
    const maintenanceStopped = this.maintenance.stop();
    try {
      await this.fastStart?.stop();
      try {
        await this.runner?.stop(graceMs);
      } finally {
        this.stopObservingRunner?.();
        this.stopObservingRunner = undefined;
      }
    } finally {
      // Its services may still hand rows to the publisher (republished, rescued).
      await maintenanceStopped;
    }
    await this.publisher?.stop();
  }

  /**
   * Enqueue a job. With `em` (inside `em.transactional`), the job is written in the
   * caller's transaction and announced when it commits; without, by one statement that
   * commits on its own (see `enqueueWith`), shared with the enqueues that meet it in time.
   */
  async enqueue(request: EnqueueRequest, em?: EntityManager): Promise<EnqueueResult> {
    if (em && em.isInTransaction()) {
      const result = await enqueueInEm(em, this.options.registry, request);
      if (result.created) {
        const context = em.getTransactionContext() as object;
        const list = this.awaitingCommit.get(context) ?? [];
        list.push(result.job);
        this.awaitingCommit.set(context, list);
      }
      return result;
    }
    const result = await enqueueInPool(this.options.pool, this.options.registry, request, (args) => this.inserts.submit(args));
    // A local publisher was handed the job's row, or woken, by the insert itself (see insertAndSendJobBatch).
    if (result.created) this.announce([result.job], !this.publisher);
    return result;
  }

  async getJob(jobId: string): Promise<JobSnapshot | null> {
    const row = await getJob(this.sql, jobId);
    return row ? toSnapshot(row) : null;
  }

  /** One page of jobs, newest first, filtered by kinds, statuses and requester (cursor pagination). */
  async listJobs(request: ListJobsRequest): Promise<ListJobsPage> {
    return listJobs(this.sql, request);
  }

  /** Several jobs by id in one query; unknown ids are left out. */
  async getJobs(jobIds: readonly string[]): Promise<JobSnapshot[]> {
    return getJobsByIds(this.sql, jobIds);
  }

  /**
   * The watched jobs whose row is newer than the sequence their watcher has, in one
   * query (callers batch; see get-jobs-ahead). `settledForMs` leaves out changes younger
   * than that, whose event is normally still on its way.
   */
  async getJobsAhead(watched: readonly WatchedSequence[], settledForMs = 0): Promise<JobSnapshot[]> {
    return getJobsAhead(this.sql, watched, settledForMs);
  }

  /** Cancel: a queued job ends at once; a running one is asked to stop (cooperatively). */
  async cancel(jobId: string): Promise<JobSnapshot> {
    // The outbox row first, then the job: the claim's lock order (see lockLiveOutbox).
    const row = await inTransaction(this.options.pool, async (sql) => {
      await lockLiveOutbox(sql, jobId);
      return cancelJob(sql, jobId);
    });
    if (!row) {
      const existing = await this.getJob(jobId);
      if (!existing) throw notFound(`No job with id ${jobId}`, { jobId });
      throw conflict(`Job ${jobId} has already ended (${existing.status}); there is nothing to cancel`, { jobId, status: existing.status });
    }
    const job = toSnapshot(row);
    this.options.bus.publish(eventOf(job, isTerminal(job.status) ? JobEventReason.CANCELLED : JobEventReason.CANCEL_REQUESTED));
    return job;
  }

  /** Retry a FAILED or CANCELLED job as a new attempt series. */
  async retry(jobId: string): Promise<JobSnapshot> {
    let row;
    try {
      row = await retryJob(this.sql, { jobId, outboxId: randomUUID() });
    } catch (error) {
      if (isUniqueViolation(error, 'jobs_exclusive_key_active_unique')) {
        throw conflict(`Another job is active for the same target as job ${jobId}; wait for it to finish or cancel it`, { jobId });
      }
      throw error;
    }
    if (!row) {
      const existing = await this.getJob(jobId);
      if (!existing) throw notFound(`No job with id ${jobId}`, { jobId });
      throw conflict(`Only a FAILED or CANCELLED job can be retried; job ${jobId} is ${existing.status}`, { jobId, status: existing.status });
    }
    const job = toSnapshot(row);
    this.waker.committed();
    this.options.bus.publish(eventOf(job, JobEventReason.RETRIED));
    return job;
  }

  /** The messaging health, checked at most once per HEALTH_RESULT_REUSE_MS however many ask (see SharedHealthCheck). */
  health(): Promise<MessagingHealth> {
    return this.healthCheck.current();
  }

  /** Watch every job event in this process (the bus carries events from all processes). */
  subscribe(listener: (event: JobEvent) => void): () => void {
    return this.options.bus.subscribe(listener);
  }

  /**
   * Called each time events from other processes reach this process again (the event
   * bus connected or reconnected): what was published in between is lost to it, so a
   * watcher reads its jobs again.
   */
  onEventsConnected(listener: () => void): () => void {
    return this.options.bus.onConnected(listener);
  }

  private announce(jobs: JobSnapshot[], wakePublisher = true): void {
    if (wakePublisher) this.waker.committed();
    for (const job of jobs) this.options.bus.publish(eventOf(job, JobEventReason.ENQUEUED));
  }

  private listenForCommits(): void {
    const subscriber: EventSubscriber = {
      afterTransactionCommit: async (args: TransactionEventArgs) => {
        const context = args.transaction as object | undefined;
        const jobs = context ? this.awaitingCommit.get(context) : undefined;
        if (!jobs || !context) return;
        this.awaitingCommit.delete(context);
        this.announce(jobs);
      },
      afterTransactionRollback: async (args: TransactionEventArgs) => {
        if (args.transaction) this.awaitingCommit.delete(args.transaction as object);
      },
    };
    this.options.orm.em.getEventManager().registerSubscriber(subscriber);
  }
}

export type { JobId, WatchedSequence };
