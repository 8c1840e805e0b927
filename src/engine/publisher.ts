import { setTimeout as sleep } from 'node:timers/promises';
import type { ClientConfig, Pool } from 'pg';
import type { Logger } from 'pino';
import { ListenConnection } from './db/listen-connection';
import { poolSql, type Sql } from './db/sql';
import type { EngineMetrics } from './metrics';
import { claimForPublish, nextPendingDueAt } from './queries/claim-for-publish';
import { markPublished, markPublishFailed } from './queries/mark-published';
import { PublishRefusedError, type JobTransport } from './transport/transport';
import { asJobId, asOutboxId, type JobMessage } from './types';

/** The channel enqueuers NOTIFY when no publisher runs in their own process. */
export const OUTBOX_CHANNEL = 'jiaowu_outbox';
/** How long a failed publish waits before the row is tried again. */
export const PUBLISH_RETRY_MS = 2_000;
/**
 * How long the PUBLISHED marks of rows sent by `sendReserved` wait to go together. A
 * mark is bookkeeping (it keeps a row waiting in a queue from looking stranded to the
 * republisher, minutes later); sent at each confirm, it was one more statement beside
 * every enqueue's insert, and by a moment later most of those rows are claimed already.
 */
export const RESERVED_MARK_DELAY_MS = 250;

/**
 * How long `sendReserved` holds a just-enqueued job's message back while fast start is on
 * (JOB_FAST_START_HEAD_START_MS). An idle worker claims the job on its enqueue's NOTIFY;
 * the broker's copy, its backup, need not race that claim: storing it (a quorum queue
 * writes and syncs its log) takes a core at the moment the claim needs one. A start that
 * comes from the copy (fast start off in the worker, or paused) comes this much later.
 */
export const FAST_START_HEAD_START_MS_DEFAULT = 2;

/** The engine settings (EngineSettings) that decide the head start. */
export interface FastStartSettings {
  fastStart?: boolean;
  fastStartHeadStartMs?: number;
}

/**
 * The head start a process that enqueues gives an idle worker's claim, by its settings:
 * its jobs' messages wait this long (`reservedSendDelayMs`), and so do the events it
 * sends through the broker (`jobEventsHoldMs`). 0 with fast start off.
 */
export function fastStartHeadStartMs(settings: FastStartSettings): number {
  return settings.fastStart === false ? 0 : (settings.fastStartHeadStartMs ?? FAST_START_HEAD_START_MS_DEFAULT);
}

/**
 * How long a process's bus holds the job events it sends through the broker
 * (RabbitMqEventBusOptions.holdMs): the head start in a process that enqueues, whose
 * `ENQUEUED` event would otherwise take the broker's core just when an idle worker's
 * claim needs it; 0 in a worker-only process, where nothing it sends races a claim and
 * a hold would only delay its subscribers' events.
 */
export function jobEventsHoldMs(settings: FastStartSettings, enqueues: boolean): number {
  return enqueues ? fastStartHeadStartMs(settings) : 0;
}

export interface PublisherSettings {
  /** The safety-net poll when nothing wakes the publisher. */
  pollMs: number;
  batchSize: number;
  /** How long `sendReserved` waits before it publishes (see FAST_START_HEAD_START_MS_DEFAULT); 0 or absent: at once. */
  reservedSendDelayMs?: number;
}

/**
 * Moves PENDING outbox rows to the transport: claim a batch (SKIP LOCKED, so any
 * number of processes can run one), publish with confirms, mark PUBLISHED. It drains
 * without pausing while there is work, then sleeps until woken — in-process by
 * `wake()`, across processes by LISTEN/NOTIFY — or until the next retry falls due,
 * or the slow poll.
 */
export class OutboxPublisher {
  private readonly sql: Sql;
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  /** Wakes this publisher on enqueues of other processes; after a reconnect it wakes once for what it missed. */
  private readonly listener: ListenConnection;
  /** Sends of rows enqueued here as PUBLISHING (see `sendReserved`), awaited by `stop`. */
  private readonly reservedSends = new Set<Promise<void>>();
  /** Confirmed reserved rows whose PUBLISHED mark waits (see RESERVED_MARK_DELAY_MS). */
  private unmarked: string[] = [];
  private markTimer: NodeJS.Timeout | null = null;
  private marking: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      /** Its marks need no fsync: a mark lost in a database crash only means a duplicate publish. */
      relaxedPool: Pool;
      listenConnection: ClientConfig;
      transport: JobTransport;
      metrics: EngineMetrics;
      logger: Logger;
      settings: PublisherSettings;
    },
  ) {
    this.sql = poolSql(deps.relaxedPool);
    this.listener = new ListenConnection({
      connection: deps.listenConnection,
      channel: OUTBOX_CHANNEL,
      logger: deps.logger,
      onNotification: () => this.wake(),
      onListening: () => this.wake(),
    });
  }

  /**
   * Whether rows enqueued in this process may be written PUBLISHING and handed to
   * `sendReserved`: while this publisher runs and its transport is connected and not
   * blocked by a broker alarm. With the broker away or blocked, enqueues write PENDING
   * rows for the publisher's passes, which back off (each reserved send would fail —
   * blocked, after its whole deadline — log and write its rows back, one enqueue at a time).
   */
  takesReserved(): boolean {
    return this.running && this.deps.transport.connectionState() === 'connected' && !this.deps.transport.publishBlocked();
  }

  async start(): Promise<void> {
    this.running = true;
    await this.listener.start();
    this.loop = this.run();
  }

  /** Something was enqueued: drain now (cheap to call often; wakes at most one pass). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    // Bounded by the transport's publish timeout; a row left PUBLISHING is the republisher's.
    await Promise.all([...this.reservedSends]);
    await this.markUnmarked();
    await this.listener.stop();
  }

  /**
   * Publishes rows this process has just enqueued as PUBLISHING (see InsertedOutboxState):
   * the job's message leaves as soon as its insert has committed, without a NOTIFY, a
   * publisher pass and its claim — a round trip and a wake-up less before a worker can
   * start it. Confirmed rows are marked PUBLISHED; refused ones go back to PENDING for a
   * pass to send again, as a pass's own refusals do. Never throws.
   */
  sendReserved(messages: readonly JobMessage[]): void {
    if (messages.length === 0) return;
    const delayMs = this.deps.settings.reservedSendDelayMs ?? 0;
    // Held back, the rows stay PUBLISHING: a fast start may claim them meanwhile, and
    // should this process die first, the outbox republisher sends them.
    const sending = delayMs > 0 ? sleep(delayMs).then(() => this.publishReserved(messages)) : this.publishReserved(messages);
    this.reservedSends.add(sending);
    void sending.finally(() => this.reservedSends.delete(sending));
  }

  /**
   * The insert of reserved rows failed, perhaps after it committed (a reply lost with its
   * connection): rows that exist go back to PENDING for a pass, rather than waiting for
   * the republisher. Best effort — with the database away, the republisher has them.
   */
  releaseReserved(outboxIds: readonly string[]): void {
    void markPublishFailed(this.sql, outboxIds, 'the enqueue that reserved this row failed', 0).then(
      () => this.wake(),
      () => undefined,
    );
  }

  private async publishReserved(messages: readonly JobMessage[]): Promise<void> {
    try {
      const { confirmed, error } = await this.publishBatch(messages);
      this.markSoon(confirmed);
      if (error) this.wake();
    } catch (markError) {
      this.deps.logger.warn({ err: markError }, 'could not record a refused publish; the outbox republisher will send those rows again');
    }
  }

  /**
   * Publishes with confirms. On a failure, only what the transport did not take goes back
   * to PENDING (a refusal names it; anything else counts for the whole batch): the rest is
   * in the broker, and comes back as `confirmed` beside the `error`.
   */
  private async publishBatch(messages: readonly JobMessage[]): Promise<{ confirmed: string[]; error: unknown }> {
    const ids = messages.map((m) => m.outboxId as string);
    const started = performance.now();
    try {
      await this.deps.transport.publish(messages);
    } catch (error) {
      const refused = error instanceof PublishRefusedError ? new Set<string>(error.refusedOutboxIds) : new Set(ids);
      const failed = ids.filter((id) => refused.has(id));
      const confirmed = ids.filter((id) => !refused.has(id));
      this.deps.logger.warn({ err: error, count: failed.length }, 'publish failed; rows go back to PENDING');
      await markPublishFailed(this.sql, failed, error instanceof Error ? error.message : String(error), PUBLISH_RETRY_MS);
      this.deps.metrics.published.add(confirmed.length);
      return { confirmed, error };
    }
    this.deps.metrics.publishDuration.record((performance.now() - started) / 1_000);
    this.deps.metrics.published.add(ids.length);
    return { confirmed: ids, error: null };
  }

  private markSoon(ids: readonly string[]): void {
    this.unmarked.push(...ids);
    if (this.unmarked.length >= this.deps.settings.batchSize) void this.markUnmarked();
    else if (!this.markTimer && this.unmarked.length > 0) {
      this.markTimer = setTimeout(() => void this.markUnmarked(), RESERVED_MARK_DELAY_MS);
      this.markTimer.unref();
    }
  }

  /** One mark statement at a time. A mark that fails leaves rows PUBLISHING: at worst the republisher sends a copy. */
  private markUnmarked(): Promise<void> {
    if (this.markTimer) clearTimeout(this.markTimer);
    this.markTimer = null;
    this.marking = this.marking.then(async () => {
      while (this.unmarked.length > 0) {
        const ids = this.unmarked.splice(0, this.deps.settings.batchSize);
        await markPublished(this.sql, ids).catch((error: unknown) => this.deps.logger.debug({ err: error, count: ids.length }, 'PUBLISHED marks not written'));
      }
    });
    return this.marking;
  }

  /** One pass: publish every due row, batch after batch. Returns how many were published. */
  async drain(): Promise<number> {
    let total = 0;
    // Confirmed rows are marked PUBLISHED after the next claim, not at once: by then
    // their consumers have usually claimed them, and the mark skips what they hold.
    let confirmed: string[] = [];
    try {
      for (;;) {
        const rows = await claimForPublish(this.sql, this.deps.settings.batchSize);
        // The rows just claimed are PUBLISHING and must be sent whatever the mark of the
        // last batch does: a mark that fails is kept for the next one (and the pass's
        // end), not allowed to leave them without a message until the republisher's age.
        confirmed = await markPublished(this.sql, confirmed).then(
          () => [],
          (error: unknown) => {
            this.deps.logger.debug({ err: error, count: confirmed.length }, 'PUBLISHED marks not written; trying again after the next batch');
            return confirmed;
          },
        );
        if (rows.length === 0) return total;
        const messages: JobMessage[] = rows.map((r) => ({ outboxId: asOutboxId(r.id), jobId: asJobId(r.job_id), kind: r.kind }));
        const outcome = await this.publishBatch(messages);
        confirmed = [...confirmed, ...outcome.confirmed];
        if (outcome.error) throw outcome.error;
        total += rows.length;
      }
    } finally {
      // Whatever happens next, what the broker confirmed is recorded (best effort: the
      // republisher treats PUBLISHING and PUBLISHED alike).
      await markPublished(this.sql, confirmed).catch(() => undefined);
    }
  }

  private async run(): Promise<void> {
    let failureDelayMs = 0;
    while (this.running) {
      this.woken = false;
      let sleepMs = this.deps.settings.pollMs;
      try {
        await this.drain();
        failureDelayMs = 0;
        const due = await nextPendingDueAt(this.sql);
        if (due) sleepMs = Math.min(sleepMs, Math.max(0, due.getTime() - Date.now()));
      } catch (error) {
        // Database or broker away: back off, but keep trying — recovery needs no operator.
        failureDelayMs = Math.min(Math.max(failureDelayMs * 2, 250), 5_000);
        sleepMs = failureDelayMs;
        this.deps.logger.warn({ err: error, retryInMs: sleepMs }, 'outbox publisher pass failed');
      }
      if (!this.running) break;
      if (this.woken && failureDelayMs === 0) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, sleepMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = done;
      });
      this.wakeUp = null;
    }
  }
}

/**
 * Wakes a publisher after an enqueue commits. In a process that runs a publisher the
 * wake is a function call; elsewhere one NOTIFY is sent for any number of enqueues
 * that commit while a previous NOTIFY is still on its way — never one per job.
 */
export class OutboxWaker {
  private notifying = false;
  private again = false;

  constructor(
    private readonly pool: Pool,
    private readonly localPublisher: OutboxPublisher | null,
    private readonly logger: Logger,
  ) {}

  committed(): void {
    if (this.localPublisher) {
      this.localPublisher.wake();
      return;
    }
    if (this.notifying) {
      this.again = true;
      return;
    }
    this.notifying = true;
    void this.notify();
  }

  private async notify(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.pool.query(`SELECT pg_notify('${OUTBOX_CHANNEL}', '')`);
      } catch (error) {
        // The slow poll picks the job up; nothing is lost.
        this.logger.debug({ err: error }, 'outbox NOTIFY failed');
      }
    } while (this.again);
    this.notifying = false;
  }
}
