import { Entity, Enum, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { OutboxStage, OutboxState } from '../types';

/**
 * Delivery mechanics of one job attempt-series: written with the job in the
 * caller's transaction, published to the transport, claimed with a lease by a
 * runner, completed, and deleted after the retention period.
 * Each partial index below serves the readers named beside it. Their predicates read
 * `stage`, never `state`: PostgreSQL can update a row in place (HOT: no new index
 * entries) only when no column an index reads changes, and the broker's confirm
 * (PUBLISHING → PUBLISHED) leaves `stage` as it was, so it is such an update.
 */
@Entity({ tableName: 'job_outbox' })
// outbox publisher: the next due PENDING rows, oldest first; health: the longest due of them
@Index({
  name: 'job_outbox_pending_index',
  expression: `create index "job_outbox_pending_index" on "job_outbox" ("available_at", "created_at") where "stage" = 'PENDING'`,
})
// lease rescuer: PROCESSING rows (as many as jobs running; their leases are compared
// in the rows). Not keyed on lease_expires_at, so a heartbeat is a HOT update.
@Index({
  name: 'job_outbox_processing_index',
  expression: `create index "job_outbox_processing_index" on "job_outbox" ("created_at") where "stage" = 'PROCESSING'`,
})
// outbox republisher: rows stranded in PUBLISHING/PUBLISHED, by when they were due;
// health: the longest due of them (with the PENDING ones: the longest wait to start).
// Not keyed on updated_at, which every write changes.
@Index({
  name: 'job_outbox_in_flight_index',
  expression: `create index "job_outbox_in_flight_index" on "job_outbox" ("available_at") where "stage" = 'SENT'`,
})
// retention cleaner: completed rows by completion time (a partial index, so that live
// rows never touch it)
@Index({
  name: 'job_outbox_completed_index',
  expression: `create index "job_outbox_completed_index" on "job_outbox" ("completed_at") where "stage" = 'COMPLETED'`,
})
// cancel (locks a job's live row) and startup recovery (its ON CONFLICT target): a
// job's live outbox row. Unique, so a job never has two live deliveries that could run
// at once, whoever inserts them (completed rows need no entry).
@Unique({
  name: 'job_outbox_live_job_id_unique',
  expression: `create unique index "job_outbox_live_job_id_unique" on "job_outbox" ("job_id") where "stage" <> 'COMPLETED'`,
})
// (The health figures count live rows through the three partial indexes above; no
// index on stage alone, so a transition updates as few indexes as possible.)
export class OutboxMessageEntity {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @Property({ type: 'uuid' })
  jobId!: string;

  @Property({ type: 'text' })
  kind!: string;

  @Enum({ items: () => OutboxState, type: 'text' })
  state: OutboxState = OutboxState.PENDING;

  /**
   * Which reader's index holds the row, from `state` (PostgreSQL computes it): PENDING,
   * SENT (PUBLISHING and PUBLISHED alike), PROCESSING or COMPLETED. Queries that want a
   * partial index name it in `stage` terms, which is how the planner matches them.
   */
  @Property({ type: 'text', generated: `(case when state = any (array['PUBLISHING', 'PUBLISHED']) then 'SENT' else state end) stored` })
  readonly stage!: OutboxStage;

  @Property({ type: 'uuid', nullable: true })
  processingToken?: string | null;

  @Property({ type: 'timestamptz', nullable: true })
  leaseExpiresAt?: Date | null;

  @Property({ type: 'integer', default: 0 })
  processingAttempts: number = 0;

  /** Times its last attempt was spared (spare-attempt.ts), at most MAX_SPARED_ATTEMPTS. */
  @Property({ type: 'integer', default: 0 })
  sparedAttempts: number = 0;

  @Property({ type: 'text', nullable: true })
  lastError?: string | null;

  /** Not before this time may the publisher send it, nor a runner claim it (a retry's back-off). */
  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  availableAt!: Date;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt!: Date;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  updatedAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  publishedAt?: Date | null;

  @Property({ type: 'timestamptz', nullable: true })
  completedAt?: Date | null;
}
