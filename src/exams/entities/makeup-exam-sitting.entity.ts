import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { MakeupExamArrangement } from './makeup-exam-arrangement.entity';
import { MakeupExamInvigilator } from './makeup-exam-invigilator.entity';
import { MakeupExamPeriod } from './makeup-exam-period.entity';
import { MakeupExamRoom } from './makeup-exam-room.entity';
import { MakeupExam } from './makeup-exam.entity';

/**
 * An exam placed in a period: one row per room it uses (a split exam has several), with
 * the seats there and the room's invigilator; room and invigilator are null in an
 * uncapacitated session.
 */
@Entity({ tableName: 'makeup_exam_sittings' })
@Index({ name: 'makeup_exam_sittings_arrangement_index', properties: ['arrangement', 'period', 'room'] })
@Index({ name: 'makeup_exam_sittings_exam_index', properties: ['exam'] })
@Index({ name: 'makeup_exam_sittings_period_index', properties: ['period'] })
@Index({ name: 'makeup_exam_sittings_room_index', properties: ['room'] })
@Index({ name: 'makeup_exam_sittings_invigilator_index', properties: ['invigilator'] })
export class MakeupExamSitting {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => MakeupExamArrangement, { deleteRule: 'cascade' })
  arrangement!: MakeupExamArrangement;

  @ManyToOne(() => MakeupExam, { deleteRule: 'cascade' })
  exam!: MakeupExam;

  @ManyToOne(() => MakeupExamPeriod, { deleteRule: 'cascade' })
  period!: MakeupExamPeriod;

  @ManyToOne(() => MakeupExamRoom, { nullable: true, deleteRule: 'cascade' })
  room?: MakeupExamRoom | null;

  @Property({ type: 'integer' })
  seats!: number;

  @ManyToOne(() => MakeupExamInvigilator, { nullable: true, deleteRule: 'set null' })
  invigilator?: MakeupExamInvigilator | null;
}
