import { Check, Entity, Property, Unique } from '@mikro-orm/core';
import { TermRecord } from './term-record';

@Entity({ tableName: 'academic_rooms' })
@Unique({ name: 'academic_rooms_term_code_unique', properties: ['term', 'code'] })
@Check({ name: 'academic_rooms_capacity_check', expression: 'capacity >= 1' })
export class Room extends TermRecord {
  @Property({ type: 'integer' })
  capacity!: number;
}
