import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { MakeupExamSession } from './makeup-exam-session.entity';

/** An exam room: seats and a soft penalty per exam seated in it. `position` orders the rooms (solution files number them). */
@Entity({ tableName: 'makeup_exam_rooms' })
@Unique({ name: 'makeup_exam_rooms_session_code_unique', properties: ['session', 'code'] })
@Index({ name: 'makeup_exam_rooms_session_position_index', properties: ['session', 'position'] })
@Check({ name: 'makeup_exam_rooms_capacity_check', expression: 'capacity >= 1 and penalty >= 0' })
export class MakeupExamRoom {
  [OptionalProps]?: 'penalty';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => MakeupExamSession, { deleteRule: 'cascade' })
  session!: MakeupExamSession;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'text' })
  code!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'integer' })
  capacity!: number;

  @Property({ type: 'integer', default: 0 })
  penalty: number = 0;
}
