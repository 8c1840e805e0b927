import { Entity, Unique } from '@mikro-orm/core';
import { TermRecord } from './term-record';

/** A teacher of one term; unavailability and courses point here. */
@Entity({ tableName: 'academic_teachers' })
@Unique({ name: 'academic_teachers_term_code_unique', properties: ['term', 'code'] })
export class Teacher extends TermRecord {}
