import { Migration } from '@mikro-orm/migrations';

export class Migration20261129191301 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "academic_terms" ("id" uuid not null, "code" text not null, "name" text not null, "days_per_week" int not null, "periods_per_day" int not null, "period_labels" jsonb not null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "academic_terms_pkey" primary key ("id"));`);
    this.addSql(`alter table "academic_terms" add constraint "academic_terms_code_unique" unique ("code");`);

    this.addSql(`create table "academic_curricula" ("id" uuid not null, "term_id" uuid not null, "code" text not null, "name" text not null, constraint "academic_curricula_pkey" primary key ("id"));`);
    this.addSql(`alter table "academic_curricula" add constraint "academic_curricula_term_code_unique" unique ("term_id", "code");`);

    this.addSql(`create table "academic_rooms" ("id" uuid not null, "term_id" uuid not null, "code" text not null, "name" text not null, "capacity" int not null, constraint "academic_rooms_pkey" primary key ("id"), constraint academic_rooms_capacity_check check (capacity >= 1));`);
    this.addSql(`alter table "academic_rooms" add constraint "academic_rooms_term_code_unique" unique ("term_id", "code");`);

    this.addSql(`create table "schedule_plans" ("id" uuid not null, "term_id" uuid not null, "name" text not null, "status" text check ("status" in ('DRAFT', 'PUBLISHED', 'ARCHIVED')) not null default 'DRAFT', "copied_from_id" uuid null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), "published_at" timestamptz null, "archived_at" timestamptz null, constraint "schedule_plans_pkey" primary key ("id"));`);
    this.addSql(`create index "schedule_plans_term_created_at_index" on "schedule_plans" ("term_id", "created_at");`);
    this.addSql(`create unique index "schedule_plans_one_published_per_term" on "schedule_plans" ("term_id") where "status" = 'PUBLISHED';`);

    this.addSql(`create table "published_timetable_entries" ("id" uuid not null, "term_id" uuid not null, "plan_id" uuid not null, "day" int not null, "period" int not null, "day_name" text not null, "period_label" text not null, "course_id" uuid not null, "course_code" text not null, "course_name" text not null, "lecture_index" int not null, "teacher_id" uuid not null, "teacher_code" text not null, "teacher_name" text not null, "room_id" uuid not null, "room_code" text not null, "room_name" text not null, "curriculum_ids" text[] not null, "curriculum_codes" text[] not null, constraint "published_timetable_entries_pkey" primary key ("id"));`);
    this.addSql(`create index "published_timetable_entries_curricula_index" on "published_timetable_entries" using gin ("curriculum_ids");`);
    this.addSql(`create index "published_timetable_entries_term_room_index" on "published_timetable_entries" ("term_id", "room_id");`);
    this.addSql(`create index "published_timetable_entries_term_teacher_index" on "published_timetable_entries" ("term_id", "teacher_id");`);

    this.addSql(`create table "academic_teachers" ("id" uuid not null, "term_id" uuid not null, "code" text not null, "name" text not null, constraint "academic_teachers_pkey" primary key ("id"));`);
    this.addSql(`alter table "academic_teachers" add constraint "academic_teachers_term_code_unique" unique ("term_id", "code");`);

    this.addSql(`create table "academic_courses" ("id" uuid not null, "term_id" uuid not null, "code" text not null, "name" text not null, "teacher_id" uuid not null, "lectures_per_week" int not null, "min_working_days" int not null, "students" int not null, constraint "academic_courses_pkey" primary key ("id"));`);
    this.addSql(`create index "academic_courses_teacher_index" on "academic_courses" ("teacher_id");`);
    this.addSql(`alter table "academic_courses" add constraint "academic_courses_term_code_unique" unique ("term_id", "code");`);

    this.addSql(`create table "schedule_assignments" ("id" uuid not null, "plan_id" uuid not null, "course_id" uuid not null, "lecture_index" int not null, "day" int not null, "period" int not null, "room_id" uuid not null, "locked" boolean not null default false, constraint "schedule_assignments_pkey" primary key ("id"));`);
    this.addSql(`alter table "schedule_assignments" add constraint "schedule_assignments_plan_course_lecture_unique" unique ("plan_id", "course_id", "lecture_index");`);

    this.addSql(`create table "academic_curriculum_courses" ("curriculum_id" uuid not null, "course_id" uuid not null, constraint "academic_curriculum_courses_pkey" primary key ("curriculum_id", "course_id"));`);

    this.addSql(`create table "academic_unavailabilities" ("id" uuid not null, "term_id" uuid not null, "course_id" uuid null, "teacher_id" uuid null, "day" int not null, "period" int not null, constraint "academic_unavailabilities_pkey" primary key ("id"), constraint academic_unavailabilities_target_check check ((course_id is null) <> (teacher_id is null)));`);
    this.addSql(`create index "academic_unavailabilities_term_index" on "academic_unavailabilities" ("term_id");`);

    this.addSql(`alter table "academic_curricula" add constraint "academic_curricula_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "academic_rooms" add constraint "academic_rooms_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "schedule_plans" add constraint "schedule_plans_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "published_timetable_entries" add constraint "published_timetable_entries_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "published_timetable_entries" add constraint "published_timetable_entries_plan_id_foreign" foreign key ("plan_id") references "schedule_plans" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "academic_teachers" add constraint "academic_teachers_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "academic_courses" add constraint "academic_courses_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "academic_courses" add constraint "academic_courses_teacher_id_foreign" foreign key ("teacher_id") references "academic_teachers" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "schedule_assignments" add constraint "schedule_assignments_plan_id_foreign" foreign key ("plan_id") references "schedule_plans" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "schedule_assignments" add constraint "schedule_assignments_course_id_foreign" foreign key ("course_id") references "academic_courses" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "schedule_assignments" add constraint "schedule_assignments_room_id_foreign" foreign key ("room_id") references "academic_rooms" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "academic_curriculum_courses" add constraint "academic_curriculum_courses_curriculum_id_foreign" foreign key ("curriculum_id") references "academic_curricula" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "academic_curriculum_courses" add constraint "academic_curriculum_courses_course_id_foreign" foreign key ("course_id") references "academic_courses" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "academic_unavailabilities" add constraint "academic_unavailabilities_term_id_foreign" foreign key ("term_id") references "academic_terms" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "academic_unavailabilities" add constraint "academic_unavailabilities_course_id_foreign" foreign key ("course_id") references "academic_courses" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "academic_unavailabilities" add constraint "academic_unavailabilities_teacher_id_foreign" foreign key ("teacher_id") references "academic_teachers" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "academic_curricula" drop constraint "academic_curricula_term_id_foreign";`);

    this.addSql(`alter table "academic_rooms" drop constraint "academic_rooms_term_id_foreign";`);

    this.addSql(`alter table "schedule_plans" drop constraint "schedule_plans_term_id_foreign";`);

    this.addSql(`alter table "published_timetable_entries" drop constraint "published_timetable_entries_term_id_foreign";`);

    this.addSql(`alter table "academic_teachers" drop constraint "academic_teachers_term_id_foreign";`);

    this.addSql(`alter table "academic_courses" drop constraint "academic_courses_term_id_foreign";`);

    this.addSql(`alter table "academic_unavailabilities" drop constraint "academic_unavailabilities_term_id_foreign";`);

    this.addSql(`alter table "academic_curriculum_courses" drop constraint "academic_curriculum_courses_curriculum_id_foreign";`);

    this.addSql(`alter table "schedule_assignments" drop constraint "schedule_assignments_room_id_foreign";`);

    this.addSql(`alter table "published_timetable_entries" drop constraint "published_timetable_entries_plan_id_foreign";`);

    this.addSql(`alter table "schedule_assignments" drop constraint "schedule_assignments_plan_id_foreign";`);

    this.addSql(`alter table "academic_courses" drop constraint "academic_courses_teacher_id_foreign";`);

    this.addSql(`alter table "academic_unavailabilities" drop constraint "academic_unavailabilities_teacher_id_foreign";`);

    this.addSql(`alter table "schedule_assignments" drop constraint "schedule_assignments_course_id_foreign";`);

    this.addSql(`alter table "academic_curriculum_courses" drop constraint "academic_curriculum_courses_course_id_foreign";`);

    this.addSql(`alter table "academic_unavailabilities" drop constraint "academic_unavailabilities_course_id_foreign";`);

    this.addSql(`drop table if exists "academic_terms" cascade;`);

    this.addSql(`drop table if exists "academic_curricula" cascade;`);

    this.addSql(`drop table if exists "academic_rooms" cascade;`);

    this.addSql(`drop table if exists "schedule_plans" cascade;`);

    this.addSql(`drop table if exists "published_timetable_entries" cascade;`);

    this.addSql(`drop table if exists "academic_teachers" cascade;`);

    this.addSql(`drop table if exists "academic_courses" cascade;`);

    this.addSql(`drop table if exists "schedule_assignments" cascade;`);

    this.addSql(`drop table if exists "academic_curriculum_courses" cascade;`);

    this.addSql(`drop table if exists "academic_unavailabilities" cascade;`);
  }

}
