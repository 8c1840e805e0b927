import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { poolSql } from '../db/sql';
import type { EventBus } from '../events/event-bus';
import type { EngineMetrics } from '../metrics';
import { toSnapshot } from '../queries/job-row';
import { rescueExpiredLeases } from '../queries/rescue-expired-leases';
import { eventOf, JobEventReason } from '../types';

export const LEASE_RESCUER_BATCH_SIZE_DEFAULT = 500;
export const LEASE_RESCUER_MAX_BATCHES_DEFAULT = 20;

export interface LeaseRescuerConfig {
  batchSize: number;
  /** Bounds one pass; what is left waits for the next pass. */
  maxBatches: number;
}

export function validateLeaseRescuerConfig(config: Partial<LeaseRescuerConfig> = {}): LeaseRescuerConfig {
  const batchSize = config.batchSize ?? LEASE_RESCUER_BATCH_SIZE_DEFAULT;
  const maxBatches = config.maxBatches ?? LEASE_RESCUER_MAX_BATCHES_DEFAULT;
  if (!(batchSize >= 1)) throw new Error(`lease rescuer batchSize must be at least 1, got ${batchSize}`);
  if (!(maxBatches >= 1)) throw new Error(`lease rescuer maxBatches must be at least 1, got ${maxBatches}`);
  return { batchSize, maxBatches };
}

/**
 * Puts messages whose worker stopped heartbeating back to PENDING (see the query for
 * why PENDING) and tells watchers: each job that went RUNNING → QUEUED is announced
 * with its new snapshot (one batch's events leave in one event-loop turn, which the
 * bus sends together).
 */
export class LeaseRescuer {
  readonly name = 'lease-rescuer';
  private readonly config: LeaseRescuerConfig;

  constructor(
    private readonly deps: { pool: Pool; bus: Pick<EventBus, 'publish'>; metrics: EngineMetrics; logger: Logger; onRescued?: () => void },
    config: Partial<LeaseRescuerConfig> = {},
  ) {
    this.config = validateLeaseRescuerConfig(config);
  }

  async runOnce(): Promise<number> {
    const sql = poolSql(this.deps.pool);
    let total = 0;
    for (let batch = 0; batch < this.config.maxBatches; batch++) {
      const rescued = await rescueExpiredLeases(sql, this.config.batchSize);
      total += rescued.length;
      for (const { job } of rescued) if (job) this.deps.bus.publish(eventOf(toSnapshot(job), JobEventReason.RETRY_SCHEDULED));
      if (rescued.length < this.config.batchSize) break;
    }
    if (total > 0) {
      this.deps.metrics.rescued.add(total);
      this.deps.logger.warn({ rescued: total }, 'rescued messages with expired leases');
      this.deps.onRescued?.();
    }
    return total;
  }
}
