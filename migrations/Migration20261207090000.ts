import { Migration } from '@mikro-orm/migrations';

/** A term's revision: what a timetable solve compares at its end, to save nothing computed from data changed since. */
export class Migration20261207090000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "academic_terms" add column "revision" int not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "academic_terms" drop column "revision";`);
  }
}
