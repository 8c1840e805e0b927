import { Migration } from '@mikro-orm/migrations';

/**
 * Engine indexes that let most job and outbox writes be HOT updates: no index is keyed
 * on a column that every write changes (updated_at, lease_expires_at), the active-jobs
 * index is partial on completed_at instead of status, and completed outbox rows leave
 * the job_id index. (MikroORM's diff does not see a partial index's predicate change,
 * so the two redefined indexes are written out by hand.)
 */
export class Migration20261129203640 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index "job_outbox_job_id_index";`);
    this.addSql(`drop index "job_outbox_processing_lease_index";`);
    this.addSql(`create index "job_outbox_live_job_id_index" on "job_outbox" ("job_id") where "state" <> 'COMPLETED';`);
    this.addSql(`create index "job_outbox_processing_index" on "job_outbox" ("created_at") where "state" = 'PROCESSING';`);
    this.addSql(`drop index "job_outbox_in_flight_index";`);
    this.addSql(`create index "job_outbox_in_flight_index" on "job_outbox" ("available_at") where "state" in ('PUBLISHING', 'PUBLISHED');`);
    this.addSql(`drop index "jobs_active_index";`);
    this.addSql(`create index "jobs_active_index" on "jobs" ("created_at") where "completed_at" is null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "jobs_active_index";`);
    this.addSql(`create index "jobs_active_index" on "jobs" ("created_at") where "status" in ('QUEUED', 'RUNNING');`);
    this.addSql(`drop index "job_outbox_in_flight_index";`);
    this.addSql(`create index "job_outbox_in_flight_index" on "job_outbox" ("updated_at") where "state" in ('PUBLISHING', 'PUBLISHED');`);
    this.addSql(`drop index "job_outbox_live_job_id_index";`);
    this.addSql(`drop index "job_outbox_processing_index";`);
    this.addSql(`create index "job_outbox_job_id_index" on "job_outbox" ("job_id");`);
    this.addSql(`create index "job_outbox_processing_lease_index" on "job_outbox" ("lease_expires_at") where "state" = 'PROCESSING';`);
  }
}
