import { randomUUID } from 'node:crypto';
import { ArrayType, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AcademicTerm } from '../../academic/entities/term.entity';
import { SchedulePlan } from './schedule-plan.entity';

/**
 * The published timetable of a term, one row per lecture, denormalised for the
 * "by teacher / by curriculum / by room" look-ups. Rebuilt in the publishing
 * transaction, so it always matches the term's PUBLISHED plan. Ids are plain columns:
 * the view is a snapshot and must not change when the academic data is edited later.
 */
@Entity({ tableName: 'published_timetable_entries' })
@Index({ name: 'published_timetable_entries_term_teacher_index', properties: ['term', 'teacherId'] })
@Index({ name: 'published_timetable_entries_term_room_index', properties: ['term', 'roomId'] })
/** Serves the API's pages of a whole term's timetable (keyset on day, period, id). */
@Index({ name: 'published_timetable_entries_term_day_period_index', properties: ['term', 'day', 'period', 'id'] })
@Index({
  name: 'published_timetable_entries_curricula_index',
  expression: 'create index "published_timetable_entries_curricula_index" on "published_timetable_entries" using gin ("curriculum_ids")',
})
export class PublishedTimetableEntry {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => AcademicTerm, { deleteRule: 'cascade' })
  term!: AcademicTerm;

  @ManyToOne(() => SchedulePlan, { deleteRule: 'cascade' })
  plan!: SchedulePlan;

  @Property({ type: 'integer' })
  day!: number;

  @Property({ type: 'integer' })
  period!: number;

  @Property({ type: 'text' })
  dayName!: string;

  @Property({ type: 'text' })
  periodLabel!: string;

  @Property({ type: 'uuid' })
  courseId!: string;

  @Property({ type: 'text' })
  courseCode!: string;

  @Property({ type: 'text' })
  courseName!: string;

  @Property({ type: 'integer' })
  lectureIndex!: number;

  @Property({ type: 'uuid' })
  teacherId!: string;

  @Property({ type: 'text' })
  teacherCode!: string;

  @Property({ type: 'text' })
  teacherName!: string;

  @Property({ type: 'uuid' })
  roomId!: string;

  @Property({ type: 'text' })
  roomCode!: string;

  @Property({ type: 'text' })
  roomName!: string;

  @Property({ type: ArrayType, columnType: 'text[]' })
  curriculumIds: string[] = [];

  @Property({ type: ArrayType, columnType: 'text[]' })
  curriculumCodes: string[] = [];
}
