import { randomUUID } from 'node:crypto';
import { Check, Entity, Enum, Index, ManyToOne, PrimaryKey, Unique } from '@mikro-orm/core';
import { PeriodConstraintKind } from '../model/exam-model';
import { MakeupExam } from './makeup-exam.entity';
import { MakeupExamSession } from './makeup-exam-session.entity';

/**
 * A hard constraint between the periods of two exams of a session. AFTER: `first` in a
 * later period than `second`. SAME_PERIOD and DIFFERENT_PERIOD are stored with the
 * smaller exam id first, so one pair is one row.
 */
@Entity({ tableName: 'makeup_exam_constraints' })
@Unique({ name: 'makeup_exam_constraints_pair_unique', properties: ['first', 'second', 'kind'] })
@Index({ name: 'makeup_exam_constraints_session_index', properties: ['session'] })
@Index({ name: 'makeup_exam_constraints_second_index', properties: ['second'] })
@Check({ name: 'makeup_exam_constraints_distinct_check', expression: 'first_id <> second_id' })
export class MakeupExamConstraint {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => MakeupExamSession, { deleteRule: 'cascade' })
  session!: MakeupExamSession;

  @Enum({ items: () => PeriodConstraintKind, type: 'text' })
  kind!: PeriodConstraintKind;

  @ManyToOne(() => MakeupExam, { deleteRule: 'cascade' })
  first!: MakeupExam;

  @ManyToOne(() => MakeupExam, { deleteRule: 'cascade' })
  second!: MakeupExam;
}
