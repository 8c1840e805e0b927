import type { Pool } from 'pg';
import type { Logger } from 'pino';

/** Any constant: one advisory lock for the whole maintenance pass, across all processes. */
export const MAINTENANCE_LOCK_KEY = 7_261_837_001;

export interface MaintenanceService {
  readonly name: string;
  runOnce(): Promise<unknown>;
}

/**
 * Runs the maintenance services every `intervalMs`, in one process at a time: a pass
 * first takes a PostgreSQL advisory lock and skips when another process holds it.
 */
export class MaintenanceScheduler {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> | null = null;

  constructor(
    private readonly deps: { pool: Pool; logger: Logger; services: MaintenanceService[]; intervalMs: number },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.current;
  }

  /** One pass; returns each service's result, or null when another process holds the lock. */
  async runOnce(): Promise<Record<string, unknown> | null> {
    if (this.current) return null;
    const pass = this.pass();
    this.current = pass;
    try {
      return await pass;
    } finally {
      this.current = null;
    }
  }

  private async pass(): Promise<Record<string, unknown> | null> {
    let client;
    try {
      client = await this.deps.pool.connect();
    } catch (error) {
      this.deps.logger.warn({ err: error }, 'maintenance skipped: database unavailable');
      return null;
    }
    // The lock's connection sits idle through the whole pass while the services use
    // others. A connection the server ends meanwhile (a restart: 57P01) reports on this
    // client, which the pool listens to only while idle: without a listener of our own
    // the error would end the process. The session is gone with its lock; the pass's
    // unlock then fails and the connection is dropped below.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
      this.deps.logger.warn({ err: error }, 'maintenance lock connection lost');
    };
    client.on('error', onError);
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [MAINTENANCE_LOCK_KEY]);
      if (!rows[0]?.locked) return null;
      const results: Record<string, unknown> = {};
      try {
        for (const service of this.deps.services) {
          try {
            results[service.name] = await service.runOnce();
          } catch (error) {
            results[service.name] = { error: String(error) };
            this.deps.logger.error({ err: error, service: service.name }, 'maintenance service failed');
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MAINTENANCE_LOCK_KEY]);
      }
      return results;
    } catch (error) {
      broken ??= error instanceof Error ? error : new Error(String(error));
      this.deps.logger.warn({ err: error }, 'maintenance pass failed');
      return null;
    } finally {
      client.off('error', onError);
      // A connection that failed is destroyed, not handed to the next borrower.
      client.release(broken);
    }
  }
}
