import { Migration } from '@mikro-orm/migrations';

/**
 * Make-up exam sessions (periods, rooms, invigilators, exams with their enrolments,
 * constraints between exams) and their arrangements (sittings with rooms and invigilators).
 */
export class Migration20261202130000 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "makeup_exam_sessions" ("id" uuid not null, "code" text not null, "name" text not null, "format" text check ("format" in ('TERM', 'ITC2007_EXAM', 'TORONTO')) not null, "term_id" uuid null, "passing_score" double precision not null default 60, "default_exam_duration" int not null default 120, "capacitated" boolean not null, "room_splitting" boolean not null, "weightings" jsonb not null, "revision" int not null default 0, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "makeup_exam_sessions_pkey" primary key ("id"), constraint makeup_exam_sessions_default_duration_check check (default_exam_duration >= 1));`);
    this.addSql(`create index "makeup_exam_sessions_term_index" on "makeup_exam_sessions" ("term_id");`);
    this.addSql(`alter table "makeup_exam_sessions" add constraint "makeup_exam_sessions_code_unique" unique ("code");`);

    this.addSql(`create table "makeup_exam_rooms" ("id" uuid not null, "session_id" uuid not null, "position" int not null, "code" text not null, "name" text not null, "capacity" int not null, "penalty" int not null default 0, constraint "makeup_exam_rooms_pkey" primary key ("id"), constraint makeup_exam_rooms_capacity_check check (capacity >= 1 and penalty >= 0));`);
    this.addSql(`create index "makeup_exam_rooms_session_position_index" on "makeup_exam_rooms" ("session_id", "position");`);
    this.addSql(`alter table "makeup_exam_rooms" add constraint "makeup_exam_rooms_session_code_unique" unique ("session_id", "code");`);

    this.addSql(`create table "makeup_exam_periods" ("id" uuid not null, "session_id" uuid not null, "position" int not null, "date" date null, "start_time" time(0) null, "duration" int not null, "penalty" int not null default 0, constraint "makeup_exam_periods_pkey" primary key ("id"), constraint makeup_exam_periods_duration_check check (duration >= 0 and penalty >= 0));`);
    this.addSql(`create index "makeup_exam_periods_session_position_index" on "makeup_exam_periods" ("session_id", "position");`);

    this.addSql(`create table "makeup_exam_arrangements" ("id" uuid not null, "session_id" uuid not null, "session_revision" int not null, "job_id" uuid null, "seed" int not null, "hard_violations" int not null, "cost" double precision not null, "evaluation" jsonb not null, "unplaced_exams" jsonb not null, "time_used_ms" int not null, "iterations" int not null, "created_at" timestamptz not null default now(), constraint "makeup_exam_arrangements_pkey" primary key ("id"));`);
    this.addSql(`alter table "makeup_exam_arrangements" add constraint "makeup_exam_arrangements_session_unique" unique ("session_id");`);

    this.addSql(`create table "makeup_exam_invigilators" ("id" uuid not null, "session_id" uuid not null, "teacher_id" uuid not null, constraint "makeup_exam_invigilators_pkey" primary key ("id"));`);
    this.addSql(`alter table "makeup_exam_invigilators" add constraint "makeup_exam_invigilators_session_teacher_unique" unique ("session_id", "teacher_id");`);

    this.addSql(`create table "makeup_exam_invigilator_periods" ("invigilator_id" uuid not null, "period_id" uuid not null, constraint "makeup_exam_invigilator_periods_pkey" primary key ("invigilator_id", "period_id"));`);

    this.addSql(`create table "makeup_exams" ("id" uuid not null, "session_id" uuid not null, "position" int not null, "code" text not null, "course_id" uuid null, "duration" int null, "room_exclusive" boolean not null default false, constraint "makeup_exams_pkey" primary key ("id"), constraint makeup_exams_duration_check check (duration is null or duration >= 0));`);
    this.addSql(`create index "makeup_exams_session_position_index" on "makeup_exams" ("session_id", "position");`);
    this.addSql(`alter table "makeup_exams" add constraint "makeup_exams_session_course_unique" unique ("session_id", "course_id");`);
    this.addSql(`alter table "makeup_exams" add constraint "makeup_exams_session_code_unique" unique ("session_id", "code");`);

    this.addSql(`create table "makeup_exam_sittings" ("id" uuid not null, "arrangement_id" uuid not null, "exam_id" uuid not null, "period_id" uuid not null, "room_id" uuid null, "seats" int not null, "invigilator_id" uuid null, constraint "makeup_exam_sittings_pkey" primary key ("id"));`);
    this.addSql(`create index "makeup_exam_sittings_invigilator_index" on "makeup_exam_sittings" ("invigilator_id");`);
    this.addSql(`create index "makeup_exam_sittings_room_index" on "makeup_exam_sittings" ("room_id");`);
    this.addSql(`create index "makeup_exam_sittings_period_index" on "makeup_exam_sittings" ("period_id");`);
    this.addSql(`create index "makeup_exam_sittings_exam_index" on "makeup_exam_sittings" ("exam_id");`);
    this.addSql(`create index "makeup_exam_sittings_arrangement_index" on "makeup_exam_sittings" ("arrangement_id", "period_id", "room_id");`);

    this.addSql(`create table "makeup_exam_enrolments" ("id" uuid not null, "exam_id" uuid not null, "student_code" text not null, "score" double precision null, constraint "makeup_exam_enrolments_pkey" primary key ("id"));`);
    this.addSql(`alter table "makeup_exam_enrolments" add constraint "makeup_exam_enrolments_exam_student_unique" unique ("exam_id", "student_code");`);

    this.addSql(`create table "makeup_exam_constraints" ("id" uuid not null, "session_id" uuid not null, "kind" text check ("kind" in ('SAME_PERIOD', 'DIFFERENT_PERIOD', 'AFTER')) not null, "first_id" uuid not null, "second_id" uuid not null, constraint "makeup_exam_constraints_pkey" primary key ("id"), constraint makeup_exam_constraints_distinct_check check (first_id <> second_id));`);
    this.addSql(`create index "makeup_exam_constraints_second_index" on "makeup_exam_constraints" ("second_id");`);
    this.addSql(`create index "makeup_exam_constraints_session_index" on "makeup_exam_constraints" ("session_id");`);
    this.addSql(`alter table "makeup_exam_constraints" add constraint "makeup_exam_constraints_pair_unique" unique ("first_id", "second_id", "kind");`);

    this.addSql(`alter table "makeup_exam_sessions" add constraint "makeup_exam_sessions_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exam_rooms" add constraint "makeup_exam_rooms_session_id_foreign" foreign key ("session_id") references "makeup_exam_sessions" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exam_periods" add constraint "makeup_exam_periods_session_id_foreign" foreign key ("session_id") references "makeup_exam_sessions" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exam_arrangements" add constraint "makeup_exam_arrangements_session_id_foreign" foreign key ("session_id") references "makeup_exam_sessions" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exam_invigilators" add constraint "makeup_exam_invigilators_session_id_foreign" foreign key ("session_id") references "makeup_exam_sessions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_invigilators" add constraint "makeup_exam_invigilators_teacher_id_foreign" foreign key ("teacher_id") references "academic_teachers" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exam_invigilator_periods" add constraint "makeup_exam_invigilator_periods_invigilator_id_foreign" foreign key ("invigilator_id") references "makeup_exam_invigilators" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_invigilator_periods" add constraint "makeup_exam_invigilator_periods_period_id_foreign" foreign key ("period_id") references "makeup_exam_periods" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exams" add constraint "makeup_exams_session_id_foreign" foreign key ("session_id") references "makeup_exam_sessions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exams" add constraint "makeup_exams_course_id_foreign" foreign key ("course_id") references "academic_courses" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exam_sittings" add constraint "makeup_exam_sittings_arrangement_id_foreign" foreign key ("arrangement_id") references "makeup_exam_arrangements" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_sittings" add constraint "makeup_exam_sittings_exam_id_foreign" foreign key ("exam_id") references "makeup_exams" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_sittings" add constraint "makeup_exam_sittings_period_id_foreign" foreign key ("period_id") references "makeup_exam_periods" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_sittings" add constraint "makeup_exam_sittings_room_id_foreign" foreign key ("room_id") references "makeup_exam_rooms" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_sittings" add constraint "makeup_exam_sittings_invigilator_id_foreign" foreign key ("invigilator_id") references "makeup_exam_invigilators" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "makeup_exam_enrolments" add constraint "makeup_exam_enrolments_exam_id_foreign" foreign key ("exam_id") references "makeup_exams" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "makeup_exam_constraints" add constraint "makeup_exam_constraints_session_id_foreign" foreign key ("session_id") references "makeup_exam_sessions" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_constraints" add constraint "makeup_exam_constraints_first_id_foreign" foreign key ("first_id") references "makeup_exams" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "makeup_exam_constraints" add constraint "makeup_exam_constraints_second_id_foreign" foreign key ("second_id") references "makeup_exams" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    for (const table of [
      'makeup_exam_sittings',
      'makeup_exam_arrangements',
      'makeup_exam_constraints',
      'makeup_exam_enrolments',
      'makeup_exams',
      'makeup_exam_invigilator_periods',
      'makeup_exam_invigilators',
      'makeup_exam_rooms',
      'makeup_exam_periods',
      'makeup_exam_sessions',
    ]) {
      this.addSql(`drop table if exists "${table}" cascade;`);
    }
  }
}
