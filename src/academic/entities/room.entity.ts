import { randomUUID } from 'node:crypto';
import { Check, Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AcademicTerm } from './term.entity';

@Entity({ tableName: 'academic_rooms' })
@Unique({ name: 'academic_rooms_term_code_unique', properties: ['term', 'code'] })
@Check({ name: 'academic_rooms_capacity_check', expression: 'capacity >= 1' })
export class Room {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => AcademicTerm, { deleteRule: 'cascade' })
  term!: AcademicTerm;

  @Property({ type: 'text' })
  code!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'integer' })
  capacity!: number;
}
