import { randomUUID } from 'node:crypto';
import { Collection, Entity, ManyToMany, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Course } from './course.entity';
import { AcademicTerm } from './term.entity';

/** A class group: its courses must never be taught at the same time. */
@Entity({ tableName: 'academic_curricula' })
@Unique({ name: 'academic_curricula_term_code_unique', properties: ['term', 'code'] })
export class Curriculum {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => AcademicTerm, { deleteRule: 'cascade' })
  term!: AcademicTerm;

  @Property({ type: 'text' })
  code!: string;

  @Property({ type: 'text' })
  name!: string;

  @ManyToMany(() => Course, undefined, { pivotTable: 'academic_curriculum_courses', joinColumn: 'curriculum_id', inverseJoinColumn: 'course_id', deleteRule: 'cascade' })
  courses = new Collection<Course>(this);
}
