import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { MakeupExamSession } from './makeup-exam-session.entity';

/**
 * An exam period. Periods are in `position` order (0-based; what solution files number),
 * which is time order: periods on one date form a day. Toronto periods have no date.
 */
@Entity({ tableName: 'makeup_exam_periods' })
@Index({ name: 'makeup_exam_periods_session_position_index', properties: ['session', 'position'] })
@Check({ name: 'makeup_exam_periods_duration_check', expression: 'duration >= 0 and penalty >= 0' })
export class MakeupExamPeriod {
  [OptionalProps]?: 'penalty';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => MakeupExamSession, { deleteRule: 'cascade' })
  session!: MakeupExamSession;

  @Property({ type: 'integer' })
  position!: number;

  /** `YYYY-MM-DD`. */
  @Property({ type: 'date', nullable: true })
  date?: string | null;

  /** `HH:MM:SS`. */
  @Property({ type: 'time', nullable: true })
  startTime?: string | null;

  /** Minutes; an exam longer than its period may not sit in it. */
  @Property({ type: 'integer' })
  duration!: number;

  /** Soft: added for every exam placed in this period. */
  @Property({ type: 'integer', default: 0 })
  penalty: number = 0;
}
