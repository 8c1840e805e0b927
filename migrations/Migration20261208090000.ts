import { Migration } from '@mikro-orm/migrations';

/**
 * A make-up session's revision rises when a course or teacher of its term is deleted and
 * takes one of its exams or invigilators with it (the foreign keys cascade), as it does
 * for every edit made through the session: an arrangement computed before is then not
 * saved over the session as it is now, and the stored one no longer reads as current.
 * The make-up exams' reaction to those deletions, kept beside the foreign keys that
 * cascade them; the academic code knows nothing of it.
 *
 * BEFORE the course's or teacher's row goes, so the session rows are locked before the
 * cascade locks their exam or invigilator rows: the order an arrangement's save takes
 * them (the session, then the rows its sittings reference), so a deletion and a save
 * wait for each other instead of deadlocking. Both look-ups go by an index of their own,
 * as the cascades do.
 */
export class Migration20261208090000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "makeup_exams_course_index" on "makeup_exams" ("course_id");`);
    this.addSql(`create index "makeup_exam_invigilators_teacher_index" on "makeup_exam_invigilators" ("teacher_id");`);
    this.addSql(`create function "makeup_exam_sessions_of_course_changed"() returns trigger language plpgsql as $$
begin
  update "makeup_exam_sessions" set "revision" = "revision" + 1, "updated_at" = now()
   where "id" in (select "session_id" from "makeup_exams" where "course_id" = old."id");
  return old;
end
$$;`);
    this.addSql(`create function "makeup_exam_sessions_of_teacher_changed"() returns trigger language plpgsql as $$
begin
  update "makeup_exam_sessions" set "revision" = "revision" + 1, "updated_at" = now()
   where "id" in (select "session_id" from "makeup_exam_invigilators" where "teacher_id" = old."id");
  return old;
end
$$;`);
    this.addSql(`create trigger "academic_courses_raise_makeup_session_revision" before delete on "academic_courses"
  for each row execute function "makeup_exam_sessions_of_course_changed"();`);
    this.addSql(`create trigger "academic_teachers_raise_makeup_session_revision" before delete on "academic_teachers"
  for each row execute function "makeup_exam_sessions_of_teacher_changed"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "academic_teachers_raise_makeup_session_revision" on "academic_teachers";`);
    this.addSql(`drop trigger "academic_courses_raise_makeup_session_revision" on "academic_courses";`);
    this.addSql(`drop function "makeup_exam_sessions_of_teacher_changed"();`);
    this.addSql(`drop function "makeup_exam_sessions_of_course_changed"();`);
    this.addSql(`drop index "makeup_exam_invigilators_teacher_index";`);
    this.addSql(`drop index "makeup_exams_course_index";`);
  }
}
