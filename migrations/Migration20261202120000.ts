import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes for the API's keyset pages of long lists: a plan's lectures, a term's
 * unavailability and its published timetable, each ordered by (day, period, id), so a
 * page reads the rows it returns and not the list before it. The term's unavailability
 * index replaces the one on term alone (its prefix).
 */
export class Migration20261202120000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "schedule_assignments_plan_day_period_index" on "schedule_assignments" ("plan_id", "day", "period", "id");`);
    this.addSql(`drop index "academic_unavailabilities_term_index";`);
    this.addSql(`create index "academic_unavailabilities_term_day_period_index" on "academic_unavailabilities" ("term_id", "day", "period", "id");`);
    this.addSql(`create index "published_timetable_entries_term_day_period_index" on "published_timetable_entries" ("term_id", "day", "period", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "published_timetable_entries_term_day_period_index";`);
    this.addSql(`drop index "academic_unavailabilities_term_day_period_index";`);
    this.addSql(`create index "academic_unavailabilities_term_index" on "academic_unavailabilities" ("term_id");`);
    this.addSql(`drop index "schedule_assignments_plan_day_period_index";`);
  }
}
