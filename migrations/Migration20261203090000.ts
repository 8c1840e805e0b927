import { Migration } from '@mikro-orm/migrations';

/**
 * Stable codes and parameters beside a job's step, message and error sentences, so any
 * UI can say them in its own language. Nullable: rows written before keep their
 * sentences and have no code.
 */
export class Migration20261203090000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "jobs" add column "current_step_code" text null, add column "message_code" text null, add column "message_params" jsonb null, add column "error_code" text null, add column "error_params" jsonb null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "jobs" drop column "current_step_code", drop column "message_code", drop column "message_params", drop column "error_code", drop column "error_params";`,
    );
  }
}
