import { randomUUID } from 'node:crypto';
import { Check, Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AcademicTerm } from '../../academic/entities/term.entity';
import { DEFAULT_PASSING_SCORE } from '../model/makeup-session';
import type { ExamWeightings } from '../model/weightings';

/** Where a session's exams come from. */
export enum MakeupExamSessionFormat {
  /** A term's make-up session: one exam per course with failing students (enrolment scores below the passing score). */
  TERM = 'TERM',
  /** Imported from an ITC-2007 `.exam` file: its exams with their students, rooms, constraints and weights. */
  ITC2007_EXAM = 'ITC2007_EXAM',
  /** Imported from a Toronto `.crs` + `.stu` pair: uncapacitated, proximity cost only. */
  TORONTO = 'TORONTO',
}

/** Minutes of an exam whose course names none, unless the session says otherwise. */
export const DEFAULT_EXAM_DURATION = 120;

/**
 * A make-up exam session: its periods, rooms, invigilators, exams and the soft weights.
 * `revision` grows with every change to the session or its parts, so an arrangement
 * computed from an older revision is not saved over the session's present state.
 */
@Entity({ tableName: 'makeup_exam_sessions' })
@Unique({ name: 'makeup_exam_sessions_code_unique', properties: ['code'] })
@Index({ name: 'makeup_exam_sessions_term_index', properties: ['term'] })
@Check({ name: 'makeup_exam_sessions_default_duration_check', expression: 'default_exam_duration >= 1' })
export class MakeupExamSession {
  [OptionalProps]?: 'passingScore' | 'defaultExamDuration' | 'revision' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  code!: string;

  @Property({ type: 'text' })
  name!: string;

  @Enum({ items: () => MakeupExamSessionFormat, type: 'text' })
  format!: MakeupExamSessionFormat;

  /** The term whose courses, enrolments and teachers a TERM session uses; null for an imported one. */
  @ManyToOne(() => AcademicTerm, { nullable: true, deleteRule: 'cascade' })
  term?: AcademicTerm | null;

  /** A recorded score below this is a failure (TERM sessions). */
  @Property({ type: 'double', default: DEFAULT_PASSING_SCORE })
  passingScore: number = DEFAULT_PASSING_SCORE;

  @Property({ type: 'integer', default: DEFAULT_EXAM_DURATION })
  defaultExamDuration: number = DEFAULT_EXAM_DURATION;

  /** Exams need seats (false for Toronto sessions). */
  @Property({ type: 'boolean' })
  capacitated!: boolean;

  /** An exam larger than every room is split over several rooms (ITC-2007 forbids it). */
  @Property({ type: 'boolean' })
  roomSplitting!: boolean;

  /** The ITC-2007 institutional weights and the Toronto proximity multiplier. */
  @Property({ type: 'jsonb' })
  weightings!: ExamWeightings;

  @Property({ type: 'integer', default: 0 })
  revision: number = 0;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
