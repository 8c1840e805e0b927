import { randomUUID } from 'node:crypto';
import { ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AcademicTerm } from './term.entity';

/**
 * What every named record of a term shares (teachers, rooms, courses, curricula): an id,
 * the term it belongs to and is deleted with, a code unique within the term (each
 * entity declares that unique index, named for its table), and a display name.
 */
export abstract class TermRecord {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => AcademicTerm, { deleteRule: 'cascade' })
  term!: AcademicTerm;

  @Property({ type: 'text' })
  code!: string;

  @Property({ type: 'text' })
  name!: string;
}
