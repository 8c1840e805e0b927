import { Entity, Enum, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { JobStatus } from '../types';

/**
 * One row per job of every kind: the user-facing record, kept after the job ends.
 * The engine writes it with plain SQL (see ../queries); the entity exists so that
 * the schema, migrations and domain queries have one definition to agree with.
 */
@Entity({ tableName: 'jobs' })
@Unique({
  name: 'jobs_idempotency_key_unique',
  expression: 'create unique index "jobs_idempotency_key_unique" on "jobs" ("kind", "idempotency_key") where "idempotency_key" is not null',
})
@Unique({
  // One active job per exclusive key; the engine clears the key on any terminal status.
  name: 'jobs_exclusive_key_active_unique',
  expression: 'create unique index "jobs_exclusive_key_active_unique" on "jobs" ("exclusive_key") where "exclusive_key" is not null',
})
// startup recovery and the oldest-waiting-job figure: active jobs only. Keyed on
// completed_at rather than status so that QUEUED → RUNNING and every progress write
// stay HOT updates (no index changes).
@Index({
  name: 'jobs_active_index',
  expression: `create index "jobs_active_index" on "jobs" ("created_at") where "completed_at" is null`,
})
@Index({ name: 'jobs_created_at_index', properties: ['createdAt', 'id'] })
@Index({ name: 'jobs_kind_created_at_index', properties: ['kind', 'createdAt'] })
@Index({ name: 'jobs_requested_by_created_at_index', properties: ['requestedBy', 'createdAt'] })
export class JobEntity {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @Property({ type: 'text' })
  kind!: string;

  @Enum({ items: () => JobStatus, nativeEnumName: undefined, type: 'text' })
  status: JobStatus = JobStatus.QUEUED;

  @Property({ type: 'text', nullable: true })
  currentStep?: string | null;

  /** The stable code of the current step (see src/i18n); the sentence above is its English. */
  @Property({ type: 'text', nullable: true })
  currentStepCode?: string | null;

  @Property({ type: 'double', default: 0 })
  progress: number = 0;

  @Property({ type: 'text', nullable: true })
  message?: string | null;

  @Property({ type: 'text', nullable: true })
  messageCode?: string | null;

  /** The named values of the message's code, as a JSON object. */
  @Property({ type: 'jsonb', nullable: true })
  messageParams?: Record<string, unknown> | null;

  /** Incremented by every write; orders a job's events. */
  @Property({ type: 'bigint', default: 1 })
  sequence: number = 1;

  @Property({ type: 'integer', default: 0 })
  attempts: number = 0;

  @Property({ type: 'text', nullable: true })
  errorMessage?: string | null;

  @Property({ type: 'text', nullable: true })
  errorCode?: string | null;

  @Property({ type: 'jsonb', nullable: true })
  errorParams?: Record<string, unknown> | null;

  @Property({ type: 'text', nullable: true })
  requestedBy?: string | null;

  @Property({ type: 'text', nullable: true })
  idempotencyKey?: string | null;

  /** Set while the job is active; null once terminal (frees the key). */
  @Property({ type: 'text', nullable: true })
  exclusiveKey?: string | null;

  /** The key the job was started with, kept so a retry can take it again. */
  @Property({ type: 'text', nullable: true })
  exclusiveScope?: string | null;

  @Property({ type: 'jsonb' })
  input!: unknown;

  @Property({ type: 'jsonb', nullable: true })
  result?: unknown;

  @Property({ type: 'timestamptz', nullable: true })
  cancelRequestedAt?: Date | null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt!: Date;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  updatedAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  startedAt?: Date | null;

  @Property({ type: 'timestamptz', nullable: true })
  completedAt?: Date | null;
}
