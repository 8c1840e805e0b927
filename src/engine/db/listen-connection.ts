import { Client, type ClientConfig } from 'pg';
import type { Logger } from 'pino';

/** The first pause before a lost LISTEN connection is opened again; it doubles up to the next. */
const LISTEN_RECONNECT_MIN_MS = 250;
const LISTEN_RECONNECT_MAX_MS = 10_000;

/**
 * One connection of its own LISTENing on a channel, opened again with back-off whenever
 * it is lost. A notification sent while it was away is gone: whoever listens must have
 * another way to the same work (a poll, the broker), and `onListening` runs after every
 * (re)connect so it can look for what it missed.
 */
export class ListenConnection {
  private client: Client | null = null;
  private running = false;
  private retryMs = LISTEN_RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      connection: ClientConfig;
      channel: string;
      logger: Logger;
      onNotification: (payload: string) => void;
      onListening?: () => void;
    },
  ) {}

  /** Connects and LISTENs; a failure is logged and retried in the background, never thrown. */
  async start(): Promise<void> {
    this.running = true;
    await this.listen().catch((error) => {
      this.deps.logger.warn({ err: error, channel: this.deps.channel }, 'LISTEN failed; trying again with back-off');
      this.scheduleListen();
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const client = new Client(this.deps.connection);
    client.on('notification', (notification) => this.deps.onNotification(notification.payload ?? ''));
    client.on('error', (error) => {
      this.deps.logger.warn({ err: error, channel: this.deps.channel }, 'LISTEN connection lost');
      this.drop(client);
    });
    client.on('end', () => this.drop(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.deps.channel}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (!this.running) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = LISTEN_RECONNECT_MIN_MS;
    this.deps.onListening?.();
  }

  private drop(client: Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.scheduleListen();
  }

  private scheduleListen(): void {
    if (!this.running || this.timer) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, LISTEN_RECONNECT_MAX_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.running) this.listen().catch(() => this.scheduleListen());
    }, delay);
  }
}
