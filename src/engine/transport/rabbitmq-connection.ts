import { EventEmitter } from 'node:events';
import { coalesceWrites } from './coalesced-writes';
import { connect, type ChannelModel, type RecoveringChannelModel } from 'amqplib';
import type { Logger } from 'pino';
import type { ConnectionState } from './transport';

export interface RabbitMqRecoverySettings {
  /** First reconnect delay (ms). Default 200. */
  initialDelay?: number;
  /** Longest reconnect delay (ms). Default 5000. */
  maxDelay?: number;
  /** Backoff multiplier. Default 2. */
  factor?: number;
  /** Jitter (0–1). Default 0.2. */
  jitter?: number;
  /** Attempts before the first connection is given up (start() rejects). Default 10. Reconnects after that never give up. */
  initialMaxRetries?: number;
}

export interface RabbitMqConnectionOptions {
  url: string;
  logger: Logger;
  /** Shown in the management UI / `rabbitmqctl list_connections client_properties`. */
  connectionName?: string;
  recovery?: RabbitMqRecoverySettings;
  /** AMQP heartbeat (s) when the URL sets none, so a dead peer is noticed. Default 10. */
  heartbeatSeconds?: number;
}

/** Runs on every (re)connect, on the fresh connection, before it counts as connected. */
export type SetupStep = (model: ChannelModel) => Promise<void>;

/**
 * One AMQP connection with amqplib 2's opt-in recovery: on a lost connection (broker
 * restart, network cut, missed heartbeats) amqplib reconnects with exponential
 * backoff and jitter, then calls `setup`, which runs every registered `SetupStep` on
 * the new connection — the owners redeclare their topology and re-attach their
 * consumers there. A failing step closes that connection and schedules another try.
 *
 * amqplib recovers the *connection* only: channels belong to one connection and die
 * with it. Owners keep their channels themselves (see the transport and the bus),
 * including channels the server closes while the connection stays up.
 *
 * During a memory or disk alarm RabbitMQ blocks a connection once it publishes: it stops
 * reading its socket (every channel's frames wait, acks too) and says so with
 * `connection.blocked`; `blocked` is true from then until `connection.unblocked` or
 * the next (re)connect.
 *
 * Events: 'connected' (model), 'disconnected' (error), 'blocked' (reason), 'unblocked'.
 */
export class RabbitMqConnection extends EventEmitter {
  private recovering: RecoveringChannelModel | null = null;
  private current: ChannelModel | null = null;
  private readonly steps: SetupStep[] = [];
  private stateValue: ConnectionState = 'disconnected';
  private closing = false;
  private opening: Promise<void> | null = null;
  private blockedValue = false;

  constructor(private readonly options: RabbitMqConnectionOptions) {
    super();
  }

  get state(): ConnectionState {
    return this.stateValue;
  }

  /** True while the broker blocks this connection (a resource alarm, after a publish on it). */
  get blocked(): boolean {
    return this.blockedValue;
  }

  /** The live connection, or null while (re)connecting or closed. */
  get model(): ChannelModel | null {
    return this.stateValue === 'connected' || this.stateValue === 'connecting' ? this.current : null;
  }

  /** Registers a step for every (re)connect. Register before `open()`. */
  onSetup(step: SetupStep): void {
    this.steps.push(step);
  }

  /** Connects (retrying with backoff); resolves once the first connection is set up. */
  open(): Promise<void> {
    // A first connection that gave up may be tried again by a later call.
    this.opening ??= this.doOpen().catch((error: unknown) => {
      this.opening = null;
      throw error;
    });
    return this.opening;
  }

  private async doOpen(): Promise<void> {
    if (this.closing) throw new Error('rabbitmq connection is closed');
    const { logger, connectionName: connection } = this.options;
    const recovery = this.options.recovery ?? {};
    this.stateValue = 'connecting';
    const recovering = await connect(withHeartbeat(this.options.url, this.options.heartbeatSeconds ?? 10), {
      clientProperties: this.options.connectionName ? { connection_name: this.options.connectionName } : undefined,
      timeout: 10_000,
      // Without it Nagle's algorithm meets the broker's delayed ACKs and small frames
      // (a publish, a confirm, an ack) wait ~40 ms: the start latency would be 10× worse.
      noDelay: true,
      recovery: {
        initialDelay: recovery.initialDelay ?? 200,
        maxDelay: recovery.maxDelay ?? 5_000,
        factor: recovery.factor ?? 2,
        jitter: recovery.jitter ?? 0.2,
        maxRetries: Infinity,
        initialMaxRetries: recovery.initialMaxRetries ?? 10,
        waitForConnect: false,
        setup: async (model: ChannelModel) => {
          model.on('error', (error: Error) => logger.warn({ err: error }, 'rabbitmq connection error'));
          coalesceWrites(model);
          this.current = model;
          // amqplib listens for the connection's close only once setup has resolved: a
          // connection lost during a step that swallows the loss (a bounded channel close)
          // would count as connected for ever. Failing the setup makes amqplib try again.
          let lost: Error | null = null;
          const onClose = (error?: Error) => (lost = error ?? new Error('rabbitmq connection closed during setup'));
          model.once('close', onClose);
          try {
            for (const step of this.steps) await step(model);
          } finally {
            model.removeListener('close', onClose);
          }
          if (lost) throw lost;
        },
      },
    });
    this.recovering = recovering;
    recovering.on('error', (error: Error) => logger.debug({ err: error }, 'rabbitmq connection error'));
    recovering.on('handler-error', (error: Error, event: string) =>
      logger.error({ err: error, event }, 'rabbitmq connection listener threw'),
    );
    recovering.on('connect', (model: ChannelModel) => {
      this.current = model;
      this.stateValue = 'connected';
      this.blockedValue = false;
      logger.info({ connection }, 'rabbitmq connected');
      this.emit('connected', model);
    });
    recovering.on('disconnect', (error: Error) => {
      this.current = null;
      this.blockedValue = false;
      if (this.closing) return;
      this.stateValue = 'connecting';
      logger.warn({ err: error, connection }, 'rabbitmq connection lost; reconnecting');
      this.emit('disconnected', error);
    });
    let lastWarning = { text: '', at: 0 };
    recovering.on('connect-failed', (error: Error) => {
      this.current = null;
      // Includes a failing setup step (e.g. a queue declared elsewhere with other arguments):
      // visible, but at most once a minute for the same error while the broker stays away.
      const text = String(error?.message);
      if (text !== lastWarning.text || Date.now() - lastWarning.at > 60_000) {
        lastWarning = { text, at: Date.now() };
        logger.warn({ err: error, connection }, 'rabbitmq connection attempt failed; retrying with backoff');
      } else {
        logger.debug({ err: error, connection }, 'rabbitmq connection attempt failed');
      }
    });
    recovering.on('blocked', (reason: string) => {
      this.blockedValue = true;
      logger.warn({ reason, connection }, 'rabbitmq blocked this connection (resource alarm)');
      this.emit('blocked', reason);
    });
    recovering.on('unblocked', () => {
      this.blockedValue = false;
      logger.info({ connection }, 'rabbitmq unblocked this connection');
      this.emit('unblocked');
    });
    recovering.on('reconnect-scheduled', (info: { attempt: number; delay: number; error: Error }) => {
      if (!this.closing) this.stateValue = 'connecting';
      logger.debug({ attempt: info.attempt, delayMs: info.delay, err: info.error }, 'rabbitmq reconnect scheduled');
    });
    recovering.on('reconnect-failed', (error: Error) => {
      this.current = null;
      if (!this.closing) this.stateValue = 'disconnected';
      logger.error({ err: error, connection }, 'rabbitmq recovery gave up');
    });
    try {
      await recovering.waitForConnect();
    } catch (error) {
      await recovering.close().catch(() => undefined);
      if (!this.closing) this.stateValue = 'disconnected';
      throw error;
    }
  }

  /** Closes the connection for good: no reconnect afterwards. */
  async close(): Promise<void> {
    this.closing = true;
    this.stateValue = 'closed';
    this.current = null;
    const recovering = this.recovering;
    this.recovering = null;
    await recovering?.close().catch(() => undefined);
  }
}

function withHeartbeat(url: string, seconds: number): string {
  try {
    const parsed = new URL(url);
    if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(seconds));
    return parsed.toString();
  } catch {
    return url;
  }
}
