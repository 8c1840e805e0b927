import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { poolSql } from '../db/sql';
import type { EngineMetrics } from '../metrics';
import type { JobTransport } from '../transport/transport';
import { republishStranded } from '../queries/republish-stranded';

export const OUTBOX_REPUBLISHER_STRANDED_AFTER_SECONDS_DEFAULT = 300;
/**
 * The longest a PUBLISHED row waits for its claim before it is sent again even while
 * its kind's queue holds a backlog. A lost message of a kind that never drains waits
 * at most this plus one maintenance interval; a message still queued that long gets
 * one duplicate per period (a failed claim). Set it above the longest wait in a queue
 * that the service meets in normal work.
 */
export const OUTBOX_REPUBLISHER_PUBLISHED_MAX_WAIT_SECONDS_DEFAULT = 900;
export const OUTBOX_REPUBLISHER_BATCH_SIZE_DEFAULT = 500;
export const OUTBOX_REPUBLISHER_MAX_BATCHES_DEFAULT = 20;

export interface OutboxRepublisherConfig {
  /** A message PUBLISHING/PUBLISHED (and due) longer than this is taken as lost. */
  strandedAfterSeconds: number;
  /** A PUBLISHED row waiting longer than this is sent again, even with a backlog in its queue. */
  publishedMaxWaitSeconds: number;
  batchSize: number;
  maxBatches: number;
}

export function validateOutboxRepublisherConfig(config: Partial<OutboxRepublisherConfig> = {}): OutboxRepublisherConfig {
  const result = {
    strandedAfterSeconds: config.strandedAfterSeconds ?? OUTBOX_REPUBLISHER_STRANDED_AFTER_SECONDS_DEFAULT,
    publishedMaxWaitSeconds: config.publishedMaxWaitSeconds ?? OUTBOX_REPUBLISHER_PUBLISHED_MAX_WAIT_SECONDS_DEFAULT,
    batchSize: config.batchSize ?? OUTBOX_REPUBLISHER_BATCH_SIZE_DEFAULT,
    maxBatches: config.maxBatches ?? OUTBOX_REPUBLISHER_MAX_BATCHES_DEFAULT,
  };
  if (!(result.strandedAfterSeconds >= 1)) throw new Error(`strandedAfterSeconds must be at least 1, got ${result.strandedAfterSeconds}`);
  if (!(result.publishedMaxWaitSeconds >= result.strandedAfterSeconds)) {
    throw new Error(`publishedMaxWaitSeconds must be at least strandedAfterSeconds (${result.strandedAfterSeconds}), got ${result.publishedMaxWaitSeconds}`);
  }
  if (!(result.batchSize >= 1)) throw new Error(`batchSize must be at least 1, got ${result.batchSize}`);
  if (!(result.maxBatches >= 1)) throw new Error(`maxBatches must be at least 1, got ${result.maxBatches}`);
  return result;
}

/** Sends again what left for the broker but never arrived, or has waited for its claim past the bound (see the query). */
export class OutboxRepublisher {
  readonly name = 'outbox-republisher';
  private readonly config: OutboxRepublisherConfig;

  constructor(
    private readonly deps: {
      pool: Pool;
      transport: Pick<JobTransport, 'waiting'>;
      /** The kinds whose queues to look at. */
      kinds: () => readonly string[];
      metrics: EngineMetrics;
      logger: Logger;
      onRepublished?: () => void;
    },
    config: Partial<OutboxRepublisherConfig> = {},
  ) {
    this.config = validateOutboxRepublisherConfig(config);
  }

  async runOnce(): Promise<number> {
    const sql = poolSql(this.deps.pool);
    const backloggedKinds = await this.backloggedKinds();
    let total = 0;
    for (let batch = 0; batch < this.config.maxBatches; batch++) {
      const count = await republishStranded(sql, {
        olderThanSeconds: this.config.strandedAfterSeconds,
        limit: this.config.batchSize,
        backloggedKinds,
        maxWaitSeconds: this.config.publishedMaxWaitSeconds,
      });
      total += count;
      if (count < this.config.batchSize) break;
    }
    if (total > 0) {
      this.deps.metrics.republished.add(total);
      this.deps.logger.warn({ republished: total }, 'stranded outbox messages sent again');
      this.deps.onRepublished?.();
    }
    return total;
  }

  /** Kinds whose queue holds messages now; unknown (transport away) counts as backlogged. */
  private async backloggedKinds(): Promise<string[]> {
    const kinds = this.deps.kinds();
    const waiting = await Promise.all(kinds.map((kind) => this.deps.transport.waiting(kind).catch(() => Infinity)));
    return kinds.filter((_kind, i) => waiting[i]! > 0);
  }
}
