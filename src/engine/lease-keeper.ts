import type { Logger } from 'pino';
import type { Sql } from './db/sql';
import type { EventBus } from './events/event-bus';
import { heartbeatIntervalMs } from './progress-reporter';
import { toSnapshot } from './queries/job-row';
import { touchJob } from './queries/touch-job';
import { eventOf, JobEventReason } from './types';

/**
 * Keeps a finished job's lease while its outcome is still being written — a completion
 * repeated through a database outage — with the running job's own heartbeat: the same
 * fenced statement at the same interval. So neither the lease rescuer nor another worker
 * takes over a job whose worker is alive and only waiting for the database, and when the
 * database is back the heartbeat re-takes the lease (its token still matches) even if it
 * ran out meanwhile. A commit that lands at once (the usual case) never sees a beat.
 */
export function keepLease(deps: {
  sql: Sql;
  bus: Pick<EventBus, 'publish'>;
  logger: Logger;
  outboxId: string;
  token: string;
  leaseSeconds: number;
  /**
   * False while the outcome's own write is in flight: a transaction that holds the
   * outbox row needs no beat (the rescuer and claims pass over a locked row), and a beat
   * would only queue behind its lock.
   */
  mayBeat?: () => boolean;
}): { stop(): void } {
  let beating = false;
  const timer = setInterval(() => {
    if (beating || deps.mayBeat?.() === false) return;
    beating = true;
    touchJob(deps.sql, { outboxId: deps.outboxId, token: deps.token, leaseSeconds: deps.leaseSeconds, currentStep: null, progress: null, message: null })
      .then((row) => {
        // No row: the lease is gone; the outcome's own fenced write will find that too.
        if (row) deps.bus.publish(eventOf(toSnapshot(row), JobEventReason.HEARTBEAT));
      })
      .catch((error: unknown) => deps.logger.warn({ err: error, outboxId: deps.outboxId }, 'heartbeat of a finished job failed; its outcome is still being written'))
      .finally(() => (beating = false));
  }, heartbeatIntervalMs(deps.leaseSeconds));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
