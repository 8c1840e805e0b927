import { randomUUID } from 'node:crypto';
import { BigIntType, Entity, OneToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import type { ExamEvaluation } from '../evaluation/evaluator';
import { MakeupExamSession } from './makeup-exam-session.entity';

/**
 * The arrangement of a session (at most one: a new one replaces it), with the evaluation
 * it had when saved and what produced it. Its sittings and duties are rows of their own.
 */
@Entity({ tableName: 'makeup_exam_arrangements' })
export class MakeupExamArrangement {
  [OptionalProps]?: 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @OneToOne(() => MakeupExamSession, { owner: true, deleteRule: 'cascade', unique: 'makeup_exam_arrangements_session_unique' })
  session!: MakeupExamSession;

  /** The session's revision the arrangement was computed for. */
  @Property({ type: 'integer' })
  sessionRevision!: number;

  /** The MAKEUP_EXAM_AUTO job that produced it (an id only: jobs belong to the engine). */
  @Property({ type: 'uuid', nullable: true })
  jobId?: string | null;

  @Property({ type: 'integer' })
  seed!: number;

  @Property({ type: 'integer' })
  hardViolations!: number;

  @Property({ type: 'double' })
  cost!: number;

  /** The independent evaluator's result when saved. */
  @Property({ type: 'jsonb' })
  evaluation!: ExamEvaluation;

  /** Exams that fit nowhere, by code. */
  @Property({ type: 'jsonb' })
  unplacedExams!: string[];

  @Property({ type: 'integer' })
  timeUsedMs!: number;

  /** A long run on a small session makes billions of moves: past an int column's 2^31. */
  @Property({ type: new BigIntType('number') })
  iterations!: number;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
