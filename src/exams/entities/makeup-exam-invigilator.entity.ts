import { randomUUID } from 'node:crypto';
import { Collection, Entity, Index, ManyToMany, ManyToOne, PrimaryKey, Unique } from '@mikro-orm/core';
import { Teacher } from '../../academic/entities/teacher.entity';
import { MakeupExamPeriod } from './makeup-exam-period.entity';
import { MakeupExamSession } from './makeup-exam-session.entity';

/** A teacher of the session's term who can supervise exams in the periods listed. */
@Entity({ tableName: 'makeup_exam_invigilators' })
@Unique({ name: 'makeup_exam_invigilators_session_teacher_unique', properties: ['session', 'teacher'] })
// Read by a teacher's deletion: its cascade, and the trigger raising the sessions' revision (migrations).
@Index({ name: 'makeup_exam_invigilators_teacher_index', properties: ['teacher'] })
export class MakeupExamInvigilator {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => MakeupExamSession, { deleteRule: 'cascade' })
  session!: MakeupExamSession;

  @ManyToOne(() => Teacher, { deleteRule: 'cascade' })
  teacher!: Teacher;

  @ManyToMany(() => MakeupExamPeriod, undefined, {
    pivotTable: 'makeup_exam_invigilator_periods',
    joinColumn: 'invigilator_id',
    inverseJoinColumn: 'period_id',
    deleteRule: 'cascade',
  })
  availablePeriods = new Collection<MakeupExamPeriod>(this);
}
