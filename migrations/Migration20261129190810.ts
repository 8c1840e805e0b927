import { Migration } from '@mikro-orm/migrations';

export class Migration20261129190810 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "jobs" ("id" uuid not null, "kind" text not null, "status" text check ("status" in ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED')) not null default 'QUEUED', "current_step" text null, "progress" double precision not null default 0, "message" text null, "sequence" bigint not null default 1, "attempts" int not null default 0, "error_message" text null, "requested_by" text null, "idempotency_key" text null, "exclusive_key" text null, "exclusive_scope" text null, "input" jsonb not null, "result" jsonb null, "cancel_requested_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "started_at" timestamptz null, "completed_at" timestamptz null, constraint "jobs_pkey" primary key ("id"));`);
    this.addSql(`create index "jobs_requested_by_created_at_index" on "jobs" ("requested_by", "created_at");`);
    this.addSql(`create index "jobs_kind_created_at_index" on "jobs" ("kind", "created_at");`);
    this.addSql(`create index "jobs_created_at_index" on "jobs" ("created_at", "id");`);
    this.addSql(`create index "jobs_active_index" on "jobs" ("created_at") where "status" in ('QUEUED', 'RUNNING');`);
    this.addSql(`create unique index "jobs_exclusive_key_active_unique" on "jobs" ("exclusive_key") where "exclusive_key" is not null;`);
    this.addSql(`create unique index "jobs_idempotency_key_unique" on "jobs" ("kind", "idempotency_key") where "idempotency_key" is not null;`);

    this.addSql(`create table "job_outbox" ("id" uuid not null, "job_id" uuid not null, "kind" text not null, "state" text check ("state" in ('PENDING', 'PUBLISHING', 'PUBLISHED', 'PROCESSING', 'COMPLETED')) not null default 'PENDING', "processing_token" uuid null, "lease_expires_at" timestamptz null, "processing_attempts" int not null default 0, "last_error" text null, "available_at" timestamptz not null default now(), "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "published_at" timestamptz null, "completed_at" timestamptz null, constraint "job_outbox_pkey" primary key ("id"));`);
    this.addSql(`create index "job_outbox_job_id_index" on "job_outbox" ("job_id");`);
    // Rows are updated several times each: room on their page keeps updates that touch no
    // indexed column (a job's progress, sequence, message) HOT.
    this.addSql(`alter table "jobs" set (fillfactor = 80);`);
    this.addSql(`alter table "job_outbox" set (fillfactor = 80);`);
    this.addSql(`create index "job_outbox_completed_index" on "job_outbox" ("completed_at") where "state" = 'COMPLETED';`);
    this.addSql(`create index "job_outbox_in_flight_index" on "job_outbox" ("updated_at") where "state" in ('PUBLISHING', 'PUBLISHED');`);
    this.addSql(`create index "job_outbox_processing_lease_index" on "job_outbox" ("lease_expires_at") where "state" = 'PROCESSING';`);
    this.addSql(`create index "job_outbox_pending_index" on "job_outbox" ("available_at", "created_at") where "state" = 'PENDING';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "jobs" cascade;`);

    this.addSql(`drop table if exists "job_outbox" cascade;`);
  }

}
