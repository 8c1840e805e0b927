import { Entity, Index, ManyToOne, Property, Unique } from '@mikro-orm/core';
import { Teacher } from './teacher.entity';
import { TermRecord } from './term-record';

/** A course of one term: who teaches it, how often a week, to how many students. */
@Entity({ tableName: 'academic_courses' })
@Unique({ name: 'academic_courses_term_code_unique', properties: ['term', 'code'] })
@Index({ name: 'academic_courses_teacher_index', properties: ['teacher'] })
export class Course extends TermRecord {
  /** Teachers with courses cannot be deleted (restrict): move the courses first. */
  @ManyToOne(() => Teacher, { deleteRule: 'restrict' })
  teacher!: Teacher;

  @Property({ type: 'integer' })
  lecturesPerWeek!: number;

  @Property({ type: 'integer' })
  minWorkingDays!: number;

  @Property({ type: 'integer' })
  students!: number;
}
