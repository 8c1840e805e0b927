import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AcademicTerm } from './term.entity';

@Entity({ tableName: 'academic_teachers' })
@Unique({ name: 'academic_teachers_term_code_unique', properties: ['term', 'code'] })
export class Teacher {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => AcademicTerm, { deleteRule: 'cascade' })
  term!: AcademicTerm;

  @Property({ type: 'text' })
  code!: string;

  @Property({ type: 'text' })
  name!: string;
}
