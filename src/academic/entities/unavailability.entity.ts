import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Course } from './course.entity';
import { Teacher } from './teacher.entity';
import { AcademicTerm } from './term.entity';

/** A course or a teacher (exactly one) cannot be scheduled at (day, period), both 0-based. */
@Entity({ tableName: 'academic_unavailabilities' })
@Check({ name: 'academic_unavailabilities_target_check', expression: '(course_id is null) <> (teacher_id is null)' })
/** The term's rows, and the API's pages of them (keyset on day, period, id). */
@Index({ name: 'academic_unavailabilities_term_day_period_index', properties: ['term', 'day', 'period', 'id'] })
export class Unavailability {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => AcademicTerm, { deleteRule: 'cascade' })
  term!: AcademicTerm;

  @ManyToOne(() => Course, { nullable: true, deleteRule: 'cascade' })
  course?: Course | null;

  @ManyToOne(() => Teacher, { nullable: true, deleteRule: 'cascade' })
  teacher?: Teacher | null;

  @Property({ type: 'integer' })
  day!: number;

  @Property({ type: 'integer' })
  period!: number;
}
