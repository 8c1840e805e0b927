import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { poolSql } from '../db/sql';
import type { EngineMetrics } from '../metrics';
import { deleteCompletedBatch } from '../queries/delete-completed';

export const RETENTION_CLEANER_RETENTION_DAYS_DEFAULT = 14;
export const RETENTION_CLEANER_BATCH_SIZE_DEFAULT = 500;
export const RETENTION_CLEANER_MAX_BATCHES_DEFAULT = 100;

export interface RetentionCleanerConfig {
  retentionDays: number;
  /** Rows per DELETE: small enough to keep locks and WAL bursts short. */
  batchSize: number;
  maxBatches: number;
}

export function validateRetentionCleanerConfig(config: Partial<RetentionCleanerConfig> = {}): RetentionCleanerConfig {
  const result = {
    retentionDays: config.retentionDays ?? RETENTION_CLEANER_RETENTION_DAYS_DEFAULT,
    batchSize: config.batchSize ?? RETENTION_CLEANER_BATCH_SIZE_DEFAULT,
    maxBatches: config.maxBatches ?? RETENTION_CLEANER_MAX_BATCHES_DEFAULT,
  };
  if (!(result.retentionDays >= 0)) throw new Error(`retentionDays must be 0 or more, got ${result.retentionDays}`);
  if (!(result.batchSize >= 1)) throw new Error(`batchSize must be at least 1, got ${result.batchSize}`);
  if (!(result.maxBatches >= 1)) throw new Error(`maxBatches must be at least 1, got ${result.maxBatches}`);
  return result;
}

/** Deletes COMPLETED outbox rows older than the retention period; jobs themselves are kept. */
export class RetentionCleaner {
  readonly name = 'retention-cleaner';
  private readonly config: RetentionCleanerConfig;

  constructor(
    private readonly deps: { pool: Pool; metrics: EngineMetrics; logger: Logger },
    config: Partial<RetentionCleanerConfig> = {},
  ) {
    this.config = validateRetentionCleanerConfig(config);
  }

  /** Returns the number deleted and the batch sizes, in order (for tests and logs). */
  async runOnce(): Promise<{ deleted: number; batches: number[] }> {
    const sql = poolSql(this.deps.pool);
    const batches: number[] = [];
    for (let i = 0; i < this.config.maxBatches; i++) {
      const count = await deleteCompletedBatch(sql, this.config);
      if (count > 0) batches.push(count);
      if (count < this.config.batchSize) break;
    }
    const deleted = batches.reduce((a, b) => a + b, 0);
    if (deleted > 0) {
      this.deps.metrics.cleanedUp.add(deleted);
      this.deps.logger.info({ deleted, batches: batches.length }, 'deleted completed outbox messages past retention');
    }
    return { deleted, batches };
  }
}
