import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox's partial indexes read `stage`, a column PostgreSQL computes from `state`,
 * instead of `state` itself: PUBLISHING and PUBLISHED share a stage, so the broker's
 * confirm changes no column an index reads and is a HOT update (no new index entries).
 * The indexes keep their names, columns and readers.
 */
export class Migration20261204090000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "job_outbox" add column "stage" text not null generated always as (case when state = any (array['PUBLISHING', 'PUBLISHED']) then 'SENT' else state end) stored;`,
    );
    this.recreateIndexes('stage', `'SENT'`);
  }

  override async down(): Promise<void> {
    this.recreateIndexes('state', `any (array['PUBLISHING', 'PUBLISHED'])`);
    this.addSql(`alter table "job_outbox" drop column "stage";`);
  }

  /** The five partial indexes over `column`; `sent` is what the in-flight index's predicate compares it with. */
  private recreateIndexes(column: 'stage' | 'state', sent: string): void {
    this.addSql(`drop index "job_outbox_pending_index";`);
    this.addSql(`create index "job_outbox_pending_index" on "job_outbox" ("available_at", "created_at") where "${column}" = 'PENDING';`);
    this.addSql(`drop index "job_outbox_processing_index";`);
    this.addSql(`create index "job_outbox_processing_index" on "job_outbox" ("created_at") where "${column}" = 'PROCESSING';`);
    this.addSql(`drop index "job_outbox_in_flight_index";`);
    this.addSql(`create index "job_outbox_in_flight_index" on "job_outbox" ("available_at") where "${column}" = ${sent};`);
    this.addSql(`drop index "job_outbox_completed_index";`);
    this.addSql(`create index "job_outbox_completed_index" on "job_outbox" ("completed_at") where "${column}" = 'COMPLETED';`);
    this.addSql(`drop index "job_outbox_live_job_id_unique";`);
    this.addSql(`create unique index "job_outbox_live_job_id_unique" on "job_outbox" ("job_id") where "${column}" <> 'COMPLETED';`);
  }
}
