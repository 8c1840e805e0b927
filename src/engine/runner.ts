import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { claimBatch } from './claim-batch';
import { Batcher, BATCHES_IN_FLIGHT } from './db/batcher';
import { emSql, poolSql, type Sql } from './db/sql';
import { failureText } from './failure-text';
import type { EventBus } from './events/event-bus';
import { repeatWhileTransient } from './db/repeat-transient';
import { isTransientDbError } from './db/transient-error';
import { JobCompleter, succeededBy, type Completion } from './job-completer';
import { keepLease } from './lease-keeper';
import type { EngineMetrics, ProcessOutcome } from './metrics';
import { JobHeartbeat } from './progress-reporter';
import { lostClaimFinding, settleLostClaim } from './lost-claim-policy';
import { outboxStateBatch } from './outbox-state-batch';
import type { ClaimArgs, ClaimRow } from './queries/claim-message';
import type { OutboxStateRow } from './queries/get-outbox-state';
import { completeJob } from './queries/complete-job';
import { findLandedClaim } from './queries/find-landed-claim';
import { completeOrphanMessage, finishJob } from './queries/finish-job';
import { getJob } from './queries/get-job';
import { toSnapshot, type JobRow } from './queries/job-row';
import { releaseMessage } from './queries/release-message';
import { requeueLostClaim } from './queries/requeue-lost-claim';
import { spareAttempt } from './queries/spare-attempt';
import { RunSlots } from './run-slots';
import { say } from '../i18n/message-catalog';
import { ENGINE_MESSAGES } from './job-messages';
import { jobTextOf, type KindRegistry, type KindRegistration } from './registry';
import { decideAfterFailure, finalErrorMessage, isLastAttempt } from './retry-policy';
import { ParkReason, type ConsumerHandle, type JobTransport, type Settlement } from './transport/transport';
import { eventOf, isTerminal, JobEventReason, JobStatus, OutboxState, type JobId, type JobMessage, type JobSnapshot, type JobText } from './types';

export interface RunnerSettings {
  leaseSeconds: number;
  attemptLimit: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Consumers per kind in this process; a kind absent here uses its registered default. */
  consumers: Record<string, number>;
  /** Deliveries held per kind beyond the running ones (see KindDefaults.prefetch); a kind absent here uses its registered default. */
  prefetch?: Record<string, number>;
  /** Jobs claimed per kind before a processor slot is free (see KindDefaults.claimAhead); a kind absent here uses its registered default. */
  claimAhead?: Record<string, number>;
}

type AbortReason = 'cancel' | 'lease-lost' | 'shutdown';

class JobAborted extends Error {
  constructor(readonly reason: AbortReason) {
    super(`job aborted: ${reason}`);
    this.name = 'AbortError';
  }
}

class LeaseLostError extends Error {
  constructor() {
    super('the lease on this job was lost to another worker');
    this.name = 'LeaseLostError';
  }
}

interface RunningJob {
  jobId: JobId;
  kind: string;
  controller: AbortController;
  abort(reason: AbortReason): void;
  /** Claimed ahead and waiting for a processor slot (see RunSlots): nothing of it has run; a stop hands it back at once. */
  waitingForSlot: boolean;
}

const ACK: Settlement = { type: 'ack' };
/**
 * A run without a delivery (offered directly) that did not settle the job: another
 * claimer won it, or the run lost its lease. Its broker copies go on as deliveries.
 */
const NOT_TAKEN: Settlement = { type: 'requeue' };

/**
 * Takes deliveries of every registered kind from the transport and runs them, per
 * the seed: claim (lease + token) → attempt limit → heartbeat beside the processor →
 * complete | release for retry | fail; every write after the claim fenced by the token.
 */
export class Runner {
  private readonly sql: Sql;
  /** Claims and heartbeats: see `relaxedPool` in EngineOptions for why they need no fsync. */
  private readonly relaxedSql: Sql;
  private readonly consumers: ConsumerHandle[] = [];
  private readonly consumerOf = new Map<string, ConsumerHandle>();
  private readonly running = new Map<string, RunningJob>();
  /** Per kind: processors that may run at once (its consumers), however many are claimed ahead. */
  private readonly runSlots = new Map<string, RunSlots>();
  private unsubscribe: (() => void) | null = null;
  /** Claims that meet in time share one statement (see Batcher); completions too, in the completer. */
  private readonly claims: Batcher<ClaimArgs, ClaimRow>;
  /** The rows of deliveries whose claims lost, read a turn's worth at a time. */
  private readonly outboxStates: Batcher<string, OutboxStateRow>;
  private readonly completer: JobCompleter;
  private shuttingDown = false;
  /** All consumer slots of this process (set in `start`). */
  private slots = 16;

  constructor(
    private readonly deps: {
      pool: Pool;
      relaxedPool: Pool;
      orm: MikroORM;
      transport: JobTransport;
      bus: EventBus;
      registry: KindRegistry;
      metrics: EngineMetrics;
      logger: Logger;
      settings: RunnerSettings;
      /** A row went back to PENDING (a retry, a lost claim): the publisher must look at its due time. */
      wakePublisher?: () => void;
    },
  ) {
    this.sql = poolSql(deps.pool);
    this.relaxedSql = poolSql(deps.relaxedPool);
    this.claims = new Batcher(claimBatch(this.relaxedSql), 64, BATCHES_IN_FLIGHT);
    this.outboxStates = new Batcher(outboxStateBatch(this.sql), 64, BATCHES_IN_FLIGHT);
    this.completer = new JobCompleter(this.sql, () => this.slots);
  }

  async start(): Promise<void> {
    // Cancel requests from any process arrive as events; the heartbeat is the fallback.
    this.unsubscribe = this.deps.bus.subscribe((event) => {
      if (event.reason === JobEventReason.CANCEL_REQUESTED) this.running.get(event.jobId)?.abort('cancel');
    });
    const consumersOf = (registration: KindRegistration) => this.deps.settings.consumers[registration.kind] ?? registration.defaults.consumers;
    const prefetchOf = (registration: KindRegistration) => this.deps.settings.prefetch?.[registration.kind] ?? registration.defaults.prefetch ?? 0;
    const claimAheadOf = (registration: KindRegistration) => this.deps.settings.claimAhead?.[registration.kind] ?? registration.defaults.claimAhead ?? 0;
    const registrations = this.deps.registry.names().map((kind) => this.deps.registry.require(kind));
    // One pending completion per consumer slot lets every slot start its next job while
    // the last one commits; beyond that, commits are falling behind and must slow claims.
    this.slots = registrations.reduce((sum, r) => sum + consumersOf(r), 0);
    for (const registration of registrations) {
      const { kind } = registration;
      const consumers = consumersOf(registration);
      const prefetch = prefetchOf(registration);
      const claimAhead = claimAheadOf(registration);
      this.runSlots.set(kind, new RunSlots(consumers));
      // The transport hands over as many deliveries at once as may be claimed; RunSlots
      // keeps the processors running at once to `consumers`.
      const handle = await this.deps.transport.consume(kind, consumers + claimAhead, (message, options) => this.handle(registration, message, options?.direct ?? false), { prefetch });
      this.consumers.push(handle);
      this.consumerOf.set(kind, handle);
      this.deps.logger.info({ kind, consumers, prefetch, claimAhead, transport: this.deps.transport.name }, 'consuming jobs');
    }
  }

  /**
   * A job just enqueued (see FastStartListener): run it now if its kind has a free slot
   * here. The claim decides, as for any delivery; true when a slot took it.
   */
  offer(message: JobMessage): boolean {
    if (this.shuttingDown) return false;
    return this.consumerOf.get(message.kind)?.offer?.(message) ?? false;
  }

  /** Jobs whose processors run in this process now, by kind (every consumed kind, 0 included). */
  activeByKind(): Record<string, number> {
    return this.bySlots((slots) => slots.held);
  }

  /** Jobs claimed ahead that wait for a processor slot now, by kind (every consumed kind, 0 included). */
  claimedAheadByKind(): Record<string, number> {
    return this.bySlots((slots) => slots.waiting);
  }

  /** A figure of each kind's RunSlots, which know what runs and what waits (0 before start). */
  private bySlots(figure: (slots: RunSlots) => number): Record<string, number> {
    return Object.fromEntries(
      this.deps.registry.names().map((kind) => {
        const slots = this.runSlots.get(kind);
        return [kind, slots ? figure(slots) : 0];
      }),
    );
  }

  /** Finished jobs whose completion is still committing after their settle. */
  completionsPending(): number {
    return this.completer.pendingCount();
  }

  /**
   * Graceful shutdown: stop taking work at once, let running jobs finish within
   * `graceMs`, then abort the rest, which release their messages for another process.
   */
  async stop(graceMs: number): Promise<void> {
    this.shuttingDown = true;
    const stopStarted = performance.now();
    // Jobs claimed ahead have not started: they go back at once for another process,
    // rather than start here during the grace.
    for (const job of this.running.values()) if (job.waitingForSlot) job.abort('shutdown');
    const idle = Promise.all(this.consumers.map((c) => c.stop()));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const outcome = await Promise.race([idle.then(() => 'idle' as const), graceOver]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      this.deps.logger.warn({ running: this.running.size }, 'grace period over; releasing running jobs');
      for (const job of this.running.values()) job.abort('shutdown');
      // A finished job holding its slot while its commit repeats must let go too.
      this.completer.stopRepeating();
      await idle;
    }
    // Finished jobs whose completion is still committing, within what is left of the
    // grace (no consumer runs now, so no new one starts).
    const leftBehind = await this.completer.drain(graceMs - (performance.now() - stopStarted));
    if (leftBehind > 0) {
      this.deps.logger.warn(
        { pending: leftBehind },
        'grace period over with completions still committing; the lease rescuer will send those jobs again',
      );
    }
    this.unsubscribe?.();
  }

  /** `direct`: no delivery is held (see HandleOptions). */
  private async handle(registration: KindRegistration, message: JobMessage, direct: boolean): Promise<Settlement> {
    const leaseSeconds = registration.defaults.leaseSeconds ?? this.deps.settings.leaseSeconds;
    const attemptLimit = registration.defaults.attemptLimit ?? this.deps.settings.attemptLimit;
    if (message.kind !== registration.kind) {
      return { type: 'park', reason: ParkReason.WRONG_QUEUE, detail: `a ${message.kind} message on the ${registration.kind} queue` };
    }
    const token = randomUUID();
    const request: ClaimArgs = { outboxId: message.outboxId, jobId: message.jobId, kind: registration.kind, token, leaseSeconds, attemptLimit, offered: direct };
    const claim = await this.claims.submit(request).catch((error: unknown) => this.claimIfLanded(request, error));

    if (!claim) {
      // Offered directly: someone else has the job (the broker's copy decides what it needs).
      if (direct) return NOT_TAKEN;
      const row = await this.outboxStates.submit(message.outboxId);
      this.deps.metrics.claimsLost.add(1, { kind: registration.kind, found: lostClaimFinding(row, message) });
      return settleLostClaim(row, message, leaseSeconds);
    }

    if (claim.id == null) {
      // Claimed the message, but the job must not run (again). Asked to cancel comes
      // first: a job whose worker died on its last attempt and was then cancelled ends
      // CANCELLED, as asked, not FAILED for the attempt this claim would have counted.
      const cancelled = claim.job_cancel_requested === true && claim.job_status !== null && !isTerminal(claim.job_status as JobStatus);
      if (!cancelled && claim.processing_attempts > attemptLimit) {
        const row = await finishJob(this.sql, {
          outboxId: message.outboxId,
          token,
          status: JobStatus.FAILED,
          error: {
            ...say(ENGINE_MESSAGES, 'job.attempts-exhausted', { attemptLimit }),
            text:
              `Automatic retries stopped after ${attemptLimit} attempts. Check the worker logs for job ${message.jobId}, ` +
              'fix the cause, then retry the job.',
          },
          message: say(ENGINE_MESSAGES, 'job.attempt-limit-reached', { attemptLimit }),
        });
        this.emit(row, JobEventReason.FAILED);
        this.count(registration.kind, 'retry-limit');
      } else if (cancelled) {
        const row = await finishJob(this.sql, {
          outboxId: message.outboxId,
          token,
          status: JobStatus.CANCELLED,
          error: null,
          message: say(ENGINE_MESSAGES, 'job.cancelled-before-start'),
        });
        this.emit(row, JobEventReason.CANCELLED);
        this.count(registration.kind, 'cancelled');
      } else {
        await completeOrphanMessage(this.sql, message.outboxId, token);
      }
      return ACK;
    }

    const job = toSnapshot(claim as JobRow);
    this.emit(claim as JobRow, JobEventReason.STARTED);
    if (direct) this.deps.metrics.fastStarted.add(1, { kind: registration.kind });
    return this.run(registration, message, job, token, leaseSeconds, attemptLimit, direct);
  }

  /**
   * A claim that failed with a transient error may have committed with its answer lost:
   * the row then holds its token, and the job would wait out the lease for a next claim
   * that counts an attempt which never ran (and on the last attempt fails the job
   * unrun). Read back by the token, repeated through an outage until this runner stops
   * (the delivery stays held meanwhile). Not landed: the error stands, and the delivery
   * comes again.
   */
  private async claimIfLanded(request: ClaimArgs, error: unknown): Promise<ClaimRow | undefined> {
    if (!isTransientDbError(error)) throw error;
    const landed = await repeatWhileTransient(() => findLandedClaim(this.relaxedSql, request), () => this.shuttingDown);
    if (!landed) throw error;
    this.deps.logger.warn({ err: error, outboxId: request.outboxId }, "a claim's answer was lost; it had landed, and the job runs");
    return landed;
  }

  /**
   * The lease is gone. Usually another runner took the job over (or the rescuer put it
   * back), and there is nothing to do. But a claim lost in a database crash leaves the
   * row unclaimed with no message in the broker: it goes back to PENDING at once (see
   * the query), or it would wait for the republisher. A delivery is acknowledged;
   * a run that held none (`noDelivery`: offered directly) settles as not taken, so its
   * broker copies go on as deliveries — one may be the message sent after the job was
   * put back.
   */
  private async leaseLost(outboxId: string, claimedAttempt: number, logger: Logger, noDelivery: boolean): Promise<Settlement> {
    const settlement = noDelivery ? NOT_TAKEN : ACK;
    try {
      if (await requeueLostClaim(this.sql, { outboxId, claimedAttempt })) {
        logger.warn('the claim on this job was lost (database restart); sending it again');
        this.deps.wakePublisher?.();
        return settlement;
      }
    } catch (error) {
      // The database is away: the row stays as it is, and the republisher sends it again.
      logger.warn({ err: error }, 'could not check a lost lease; the outbox republisher will send the job again');
    }
    logger.warn('lease lost; another worker owns this job now');
    return settlement;
  }

  private async run(
    registration: KindRegistration,
    message: JobMessage,
    job: JobSnapshot,
    token: string,
    leaseSeconds: number,
    attemptLimit: number,
    direct: boolean,
  ): Promise<Settlement> {
    const { kind } = registration;
    const controller = new AbortController();
    let abortReason: AbortReason | null = null;
    const abort = (reason: AbortReason) => {
      if (abortReason) return;
      abortReason = reason;
      controller.abort(new JobAborted(reason));
    };
    const logger = this.deps.logger.child({ jobId: job.id, kind, attempt: job.attempts });
    let completing = false;
    let completedRow: JobRow | undefined;
    const heartbeat = new JobHeartbeat(
      {
        sql: this.relaxedSql,
        bus: this.deps.bus,
        logger,
        outboxId: message.outboxId,
        token,
        leaseSeconds,
        onLeaseLost: () => {
          if (!completing) abort('lease-lost');
        },
        onCancelRequested: () => abort('cancel'),
      },
      job,
    );
    const entry: RunningJob = { jobId: job.id, kind, controller, abort, waitingForSlot: true };
    this.running.set(job.id, entry);
    if (this.shuttingDown) abort('shutdown');
    const slots = this.runSlots.get(kind)!;
    let holdsSlot = false;
    let startedAt = performance.now();
    let outcome: ProcessOutcome = 'completed';
    /** The outcome is recorded by `completeAfterSettling` instead. */
    let settledEarly = false;

    try {
      // A job claimed ahead waits here, its lease kept by the heartbeat; an abort while it
      // waits (cancel, lost lease, shutdown) takes the failure path below without running it.
      await slots.acquire(controller.signal);
      holdsSlot = true;
      entry.waitingForSlot = false;
      startedAt = performance.now();
      // Forked when the processor first asks: a fork costs about 0.1 ms of a job's start,
      // and a processor that writes only in `completeWithin` (which forks its own) never needs it.
      let em: EntityManager | undefined;
      const orm = this.deps.orm;
      const result = await registration.processor({
        job,
        input: job.input,
        get em() {
          return (em ??= orm.em.fork());
        },
        signal: controller.signal,
        logger,
        progress: heartbeat,
        attempt: job.attempts,
        completeWithin: async (work) => {
          completing = true;
          const unwritten = await heartbeat.stop();
          // Through a database outage the transaction is repeated (it rolled back, so
          // `work` runs again in a fresh one) for as long as this job may go on; the
          // lease is kept meanwhile, so the job resumes when the database is back.
          let inTransaction = false;
          const leaseKept = this.keepLease(message, token, leaseSeconds, logger, () => !inTransaction);
          try {
            return await repeatWhileTransient(
              (repeated) => {
                inTransaction = true;
                return this.deps.orm.em.fork().transactional(async (txEm) => {
                  completedRow = undefined;
                  const sql = emSql(txEm);
                  // Lock our own row first: the processor's writes commit only while we hold the lease.
                  const held = await sql(
                    `SELECT 1 FROM job_outbox WHERE id = $1 AND state = 'PROCESSING' AND processing_token = $2 FOR UPDATE`,
                    [message.outboxId, token],
                  );
                  if (held.length === 0) {
                    // A repeat after a commit whose reply was lost finds the job already done by us.
                    const done = repeated ? succeededBy(await getJob(sql, job.id), job.attempts) : undefined;
                    if (!done) throw new LeaseLostError();
                    completedRow = done;
                    return done.result as Awaited<ReturnType<typeof work>>;
                  }
                  const value = await work(txEm);
                  await txEm.flush();
                  completedRow = await completeJob(sql, { outboxId: message.outboxId, token, result: value, message: null, currentStep: unwritten.step });
                  if (!completedRow) throw new LeaseLostError();
                  return value;
                }).finally(() => (inTransaction = false));
              },
              () => controller.signal.aborted,
            );
          } catch (error) {
            completedRow = undefined;
            throw error;
          } finally {
            leaseKept.stop();
          }
        },
      });
      const unwritten = await heartbeat.stop();
      if (abortReason === 'lease-lost') {
        outcome = 'lease-lost';
        return await this.leaseLost(message.outboxId, job.attempts, logger, direct);
      }
      if (completedRow) {
        this.emit(completedRow, JobEventReason.SUCCEEDED);
        return ACK;
      }
      const completion: Completion = {
        jobId: job.id,
        attempt: job.attempts,
        outboxId: message.outboxId,
        token,
        result,
        message: null,
        currentStep: unwritten.step,
      };
      // On the job's last attempt, a success must outlive this process once its delivery
      // is acknowledged: the attempt is spared first (see spare-attempt.ts). Should that
      // not be possible now (the database is away), the delivery is held until the commit.
      const ackFirst = this.completer.hasRoom() && (!isLastAttempt(job.attempts, attemptLimit) || (await this.spare(completion, logger)));
      if (ackFirst) {
        // The processor is done: settle the delivery now and commit the completion beside
        // the next job. Waiting for the commit would hold the consumer slot (and the
        // broker's prefetch window) through two more round trips per job. The token still
        // fences the completion; should this process die before it commits, the job's
        // lease runs out and the lease rescuer sends it again, to run again.
        settledEarly = true;
        const committed = this.completeAfterSettling({ registration, message, completion, attemptLimit, leaseSeconds, logger, startedAt });
        this.completer.track(committed);
        // A direct run's broker copy, arriving before the commit, is settled with it (not
        // sent on to wait out a lease the commit is about to end).
        return direct ? { type: 'ack', committed } : ACK;
      }
      // Commits are falling behind (or the attempt could not be spared): this one holds
      // its slot (and delivery) until it lands.
      outcome = await this.commitSuccess(completion, message, leaseSeconds, logger);
      return direct && outcome === 'lease-lost' ? NOT_TAKEN : ACK;
    } catch (error) {
      await heartbeat.stop();
      return await this.afterFailure({
        registration,
        message,
        token,
        error,
        abortReason: abortReason ?? (error instanceof LeaseLostError ? 'lease-lost' : null),
        attempt: job.attempts,
        attemptLimit,
        logger,
        setOutcome: (o) => (outcome = o),
        messageSettled: direct,
      });
    } finally {
      this.running.delete(job.id);
      if (holdsSlot) slots.release();
      if (!settledEarly) this.record(kind, outcome, startedAt);
    }
  }

  /**
   * The completion of a job whose delivery is already settled. A failure here goes the
   * way of a failed attempt, but always through the outbox (release to PENDING): the
   * broker no longer holds a message for it.
   */
  private async completeAfterSettling(args: {
    registration: KindRegistration;
    message: JobMessage;
    completion: Completion;
    attemptLimit: number;
    leaseSeconds: number;
    logger: Logger;
    startedAt: number;
  }): Promise<boolean> {
    const { registration, message, completion, logger } = args;
    let outcome: ProcessOutcome = 'completed';
    try {
      outcome = await this.commitSuccess(completion, message, args.leaseSeconds, logger);
    } catch (error) {
      if (this.completer.gaveUp && isTransientDbError(error)) {
        // Shutdown stopped waiting for a database that is away: not a failure of the job.
        // Its lease runs out and it is sent again (a spared last attempt is not counted).
        outcome = 'released';
        logger.warn({ err: error }, 'shutdown left a finished job uncommitted; it will be sent again');
        return true;
      }
      await this.afterFailure({
        registration,
        message,
        token: completion.token,
        error,
        abortReason: null,
        attempt: completion.attempt,
        attemptLimit: args.attemptLimit,
        logger,
        setOutcome: (o) => (outcome = o),
        messageSettled: true,
      }).catch((failure: unknown) =>
        // The database is unreachable: the lease runs out and the lease rescuer sends the job again.
        logger.error({ err: failure, completionError: describeError(error) }, 'could not record the outcome of a finished job; the lease rescuer will send it again'),
      );
    } finally {
      this.record(registration.kind, outcome, args.startedAt);
    }
    // False: the job was no longer this run's (see Settlement's `committed`).
    return outcome !== 'lease-lost';
  }

  /**
   * Commits SUCCEEDED and announces it; `lease-lost` when the token no longer holds. The
   * commit is repeated through a database outage for as long as this process runs, and
   * the job's lease is kept meanwhile.
   */
  private async commitSuccess(completion: Completion, message: JobMessage, leaseSeconds: number, logger: Logger): Promise<ProcessOutcome> {
    const leaseKept = this.keepLease(message, completion.token, leaseSeconds, logger);
    try {
      const row = await this.completer.commit(completion);
      if (!row) {
        // Settled by the caller from the outcome (a run that held no delivery: not taken).
        await this.leaseLost(completion.outboxId, completion.attempt, logger, false);
        return 'lease-lost';
      }
      this.emit(row, JobEventReason.SUCCEEDED);
      return 'completed';
    } finally {
      leaseKept.stop();
    }
  }

  /** Spares the attempt of a finished last attempt (spare-attempt.ts); false when that cannot be done now. */
  private async spare(completion: Completion, logger: Logger): Promise<boolean> {
    try {
      const spared = await spareAttempt(this.relaxedSql, { outboxId: completion.outboxId, token: completion.token });
      completion.restoreAttempt = spared;
      return spared;
    } catch (error) {
      logger.warn({ err: error }, 'could not spare the last attempt of a finished job; holding its delivery until the completion commits');
      return false;
    }
  }

  private keepLease(message: JobMessage, token: string, leaseSeconds: number, logger: Logger, mayBeat?: () => boolean): { stop(): void } {
    return keepLease({ sql: this.relaxedSql, bus: this.deps.bus, logger, outboxId: message.outboxId, token, leaseSeconds, mayBeat });
  }

  private record(kind: string, outcome: ProcessOutcome, startedAt: number): void {
    this.deps.metrics.processingDuration.record((performance.now() - startedAt) / 1_000, { kind, outcome });
    this.count(kind, outcome);
  }

  private async afterFailure(args: {
    registration: KindRegistration;
    message: JobMessage;
    token: string;
    error: unknown;
    abortReason: AbortReason | null;
    attempt: number;
    attemptLimit: number;
    logger: Logger;
    setOutcome: (outcome: ProcessOutcome) => void;
    /** No delivery is held (acknowledged already, or a direct run): a retry must go through the outbox. */
    messageSettled?: boolean;
  }): Promise<Settlement> {
    const { message, token, error, attempt, attemptLimit, logger } = args;
    const errorText = describeError(error);
    // A shutdown hands a held delivery back to a durable broker at once; anything that
    // must wait goes through the outbox.
    const durable = this.deps.transport.durable && !args.messageSettled;

    switch (args.abortReason) {
      case 'lease-lost':
        args.setOutcome('lease-lost');
        return this.leaseLost(message.outboxId, attempt, logger, args.messageSettled ?? false);
      case 'cancel': {
        args.setOutcome('cancelled');
        const row = await finishJob(this.sql, {
          outboxId: message.outboxId,
          token,
          status: JobStatus.CANCELLED,
          error: null,
          message: say(ENGINE_MESSAGES, 'job.cancelled'),
        });
        this.emit(row, JobEventReason.CANCELLED);
        return ACK;
      }
      case 'shutdown': {
        args.setOutcome('released');
        const row = await releaseMessage(this.sql, {
          outboxId: message.outboxId,
          token,
          releaseTo: durable ? OutboxState.PUBLISHED : OutboxState.PENDING,
          error: null,
          retryInMs: 0,
          message: say(ENGINE_MESSAGES, 'job.interrupted-by-shutdown'),
          refundAttempt: true,
        });
        this.emit(row, JobEventReason.RETRY_SCHEDULED);
        if (durable) return { type: 'requeue' };
        // The row waits in PENDING for a publisher to send it again.
        this.deps.wakePublisher?.();
        return ACK;
      }
      case null:
        break;
    }

    const told = failureText(error);
    const decision = decideAfterFailure({
      error,
      attempt,
      attemptLimit,
      settings: { baseMs: this.deps.settings.retryBaseMs, maxMs: this.deps.settings.retryMaxMs },
    });
    if (decision.action === 'fail') {
      args.setOutcome('failed');
      logger.error({ err: error, reason: decision.reason, ...(told.ref ? { ref: told.ref } : {}) }, 'job failed');
      const row = await finishJob(this.sql, {
        outboxId: message.outboxId,
        token,
        status: JobStatus.FAILED,
        error: { ...failureCode(error, decision, attemptLimit), text: finalErrorMessage(told.text, decision, attempt, attemptLimit) },
        cause: errorText,
        message: say(ENGINE_MESSAGES, 'job.failed'),
      });
      this.emit(row, JobEventReason.FAILED);
      return ACK;
    }

    args.setOutcome('retry');
    const { delayMs } = decision;
    logger.warn({ err: error, retryInMs: delayMs, ...(told.ref ? { ref: told.ref } : {}) }, 'job attempt failed; will retry');
    // The retry waits in PostgreSQL, not in the broker: the row goes back to PENDING with
    // `available_at` at the end of the back-off and the publisher sends it then. A broker
    // restart cannot lose a timer it never held, and the delivery is settled now.
    const row = await releaseMessage(this.sql, {
      outboxId: message.outboxId,
      token,
      releaseTo: OutboxState.PENDING,
      error: errorText,
      retryInMs: delayMs,
      message: {
        ...say(ENGINE_MESSAGES, 'job.retry-scheduled', { attempt, retryInSeconds: Math.ceil(delayMs / 1000) }),
        text: `Attempt ${attempt} failed: ${truncate(told.text, 200)}; retrying in ${Math.ceil(delayMs / 1000)} s`,
      },
      refundAttempt: false,
    });
    this.emit(row, JobEventReason.RETRY_SCHEDULED);
    if (row) this.deps.wakePublisher?.();
    return ACK;
  }

  private emit(row: JobRow | undefined, reason: JobEventReason): void {
    if (row) this.deps.bus.publish(eventOf(toSnapshot(row), reason));
  }

  private count(kind: string, outcome: ProcessOutcome): void {
    this.deps.metrics.processed.add(1, { kind, outcome });
  }
}

/**
 * The code of a job's final failure: the failure's own when it describes itself (a
 * domain's refusal, with its parameters), the attempt limit when retries ran out, else
 * the generic `job.failed` — whose parameters say nothing of the cause, as a client
 * must not learn internals from a code.
 */
function failureCode(error: unknown, decision: { reason: 'not-retryable' | 'attempts-exhausted' }, attemptLimit: number): Omit<JobText, 'text'> {
  if (decision.reason === 'attempts-exhausted') return { code: 'job.attempts-exhausted', params: { attemptLimit } };
  const coded = jobTextOf(error);
  return coded ? { code: coded.code, params: coded.params } : { code: 'job.failed', params: null };
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error);
}

const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
