import { Migration } from '@mikro-orm/migrations';

/**
 * How many times an outbox row's last attempt has been spared (spare-attempt.ts): the
 * spare is allowed a bounded number of times, so a job whose worker dies every time
 * after its processor returned still ends at the attempt limit.
 */
export class Migration20261203100000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "job_outbox" add column "spared_attempts" int not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "job_outbox" drop column "spared_attempts";`);
  }
}
