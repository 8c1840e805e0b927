import type { ClientConfig } from 'pg';
import type { Logger } from 'pino';
import { ListenConnection } from './db/listen-connection';
import { FAST_START_MAX_RATE_DEFAULT, FAST_START_PAUSE_MS, FastStartPacer } from './fast-start-pacer';
import { JOB_READY_CHANNEL } from './queries/insert-job';
import { asJobId, asOutboxId, type JobMessage } from './types';

/**
 * Starts a job the moment its enqueue commits, in a worker with a free slot for its
 * kind, instead of after its message has crossed the broker (a quorum queue writes the
 * message to its log before delivering it: about 1.5 ms here, more than the claim).
 *
 * Each enqueue NOTIFYs `JOB_READY_CHANNEL`; every worker process LISTENs and offers the
 * job to its runner, which claims it with the usual fenced claim — so among several idle
 * workers one wins and the others' claims find it taken. The broker message is sent all
 * the same and stays the guarantee: a notification lost (this connection down, no slot
 * free) costs only time, and the message's copy of a job already started is settled
 * with it (see KindConsumer.offer). Under a stream of jobs a worker stops listening for
 * a while (see FastStartPacer), where fast start would cost more than it saves.
 */
export class FastStartListener {
  private readonly connection: ListenConnection;
  private readonly pacer: FastStartPacer;
  private running = false;
  private resumeTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      connection: ClientConfig;
      logger: Logger;
      offer: (message: JobMessage) => void;
      /** Jobs heard in a second above which this worker stops listening for a while (see FastStartPacer; 0: never). */
      maxRate?: number;
      /** How long a pause lasts (default FAST_START_PAUSE_MS). */
      pauseMs?: number;
      /** Called each time this worker stops listening (the `fast_start_paused` metric). */
      onPause?: () => void;
    },
  ) {
    this.pacer = new FastStartPacer(deps.maxRate ?? FAST_START_MAX_RATE_DEFAULT);
    this.connection = new ListenConnection({
      connection: deps.connection,
      channel: JOB_READY_CHANNEL,
      logger: deps.logger,
      onNotification: (payload) => this.heard(payload),
    });
  }

  async start(): Promise<void> {
    this.running = true;
    await this.connection.start();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    await this.connection.stop();
  }

  /** Listening now (not stopped, not paused). */
  get listening(): boolean {
    return this.running && this.resumeTimer === null;
  }

  private heard(payload: string): void {
    if (!this.listening) return;
    const message = parseJobReady(payload);
    if (message) this.deps.offer(message);
    else this.deps.logger.debug({ payload: payload.slice(0, 200) }, 'job-ready notification not understood; ignored');
    if (this.pacer.heardJob(Date.now())) this.pause();
  }

  private pause(): void {
    const pauseMs = this.deps.pauseMs ?? FAST_START_PAUSE_MS;
    this.deps.logger.debug({ pauseMs }, 'more jobs heard than fast start is worth; listening again later');
    this.deps.onPause?.();
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = null;
      void this.connection.start();
    }, pauseMs);
    this.resumeTimer.unref();
    void this.connection.stop();
  }
}

/** `<outbox id> <job id> <kind>` (see JOB_READY_CHANNEL), or undefined for anything else. */
export function parseJobReady(payload: string): JobMessage | undefined {
  const [outboxId, jobId, kind, ...rest] = payload.split(' ');
  if (!outboxId || !jobId || !kind || rest.length > 0 || !UUID.test(outboxId) || !UUID.test(jobId)) return undefined;
  return { outboxId: asOutboxId(outboxId), jobId: asJobId(jobId), kind };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
