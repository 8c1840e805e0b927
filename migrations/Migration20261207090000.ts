import { Migration } from '@mikro-orm/migrations';

/**
 * A term's revision: what a timetable solve compares at its end, to save nothing computed
 * from data changed since. And an arrangement's move count as a bigint: a long run on a
 * small session passes an int's 2^31.
 */
export class Migration20261207090000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "academic_terms" add column "revision" int not null default 0;`);
    this.addSql(`alter table "makeup_exam_arrangements" alter column "iterations" type bigint using ("iterations"::bigint);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "makeup_exam_arrangements" alter column "iterations" type int using ("iterations"::int);`);
    this.addSql(`alter table "academic_terms" drop column "revision";`);
  }
}
