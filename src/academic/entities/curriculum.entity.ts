import { Collection, Entity, ManyToMany, Unique } from '@mikro-orm/core';
import { Course } from './course.entity';
import { TermRecord } from './term-record';

/** A class group: its courses must never be taught at the same time. */
@Entity({ tableName: 'academic_curricula' })
@Unique({ name: 'academic_curricula_term_code_unique', properties: ['term', 'code'] })
export class Curriculum extends TermRecord {
  @ManyToMany(() => Course, undefined, { pivotTable: 'academic_curriculum_courses', joinColumn: 'curriculum_id', inverseJoinColumn: 'course_id', deleteRule: 'cascade' })
  courses = new Collection<Course>(this);
}
