import { Migration } from '@mikro-orm/migrations';

/**
 * At most one live (not COMPLETED) outbox row per job: the job_id index of live rows
 * becomes unique, so two processes' startup recoveries (or any other writer) cannot
 * give one job two deliveries that run at once. A database that already holds such a
 * pair keeps one row per job — the one a runner holds (latest lease), else the newest —
 * and completes the others first; the job itself is untouched.
 */
export class Migration20261201090000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update "job_outbox" o set "state" = 'COMPLETED', "processing_token" = null, "lease_expires_at" = null,
      "completed_at" = now(), "updated_at" = now(),
      "last_error" = coalesce(o."last_error", 'Completed as a duplicate: another live delivery record of this job was kept')
    from (
      select "id", row_number() over (
        partition by "job_id"
        order by ("state" = 'PROCESSING') desc, "lease_expires_at" desc nulls last, "created_at" desc, "id"
      ) as "rank"
      from "job_outbox" where "state" <> 'COMPLETED'
    ) ranked
    where o."id" = ranked."id" and ranked."rank" > 1;`);
    this.addSql(`drop index "job_outbox_live_job_id_index";`);
    this.addSql(`create unique index "job_outbox_live_job_id_unique" on "job_outbox" ("job_id") where "state" <> 'COMPLETED';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "job_outbox_live_job_id_unique";`);
    this.addSql(`create index "job_outbox_live_job_id_index" on "job_outbox" ("job_id") where "state" <> 'COMPLETED';`);
  }
}
