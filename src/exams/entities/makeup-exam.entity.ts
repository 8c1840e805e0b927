import { randomUUID } from 'node:crypto';
import { Check, Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Course } from '../../academic/entities/course.entity';
import { MakeupExamSession } from './makeup-exam-session.entity';

/**
 * An exam of a session. In a TERM session it is a course's make-up exam (code = the
 * course's code) and its students are the enrolments that failed; an imported exam
 * keeps its file's id as code and every enrolment sits it. `position` orders the exams
 * (the `.sln` file has one line per exam in this order).
 */
@Entity({ tableName: 'makeup_exams' })
@Unique({ name: 'makeup_exams_session_code_unique', properties: ['session', 'code'] })
@Unique({ name: 'makeup_exams_session_course_unique', properties: ['session', 'course'] })
@Index({ name: 'makeup_exams_session_position_index', properties: ['session', 'position'] })
// Read by a course's deletion: its cascade, and the trigger raising the sessions' revision (migrations).
@Index({ name: 'makeup_exams_course_index', properties: ['course'] })
@Check({ name: 'makeup_exams_duration_check', expression: 'duration is null or duration >= 0' })
export class MakeupExam {
  [OptionalProps]?: 'roomExclusive';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => MakeupExamSession, { deleteRule: 'cascade' })
  session!: MakeupExamSession;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'text' })
  code!: string;

  @ManyToOne(() => Course, { nullable: true, deleteRule: 'cascade' })
  course?: Course | null;

  /** Minutes; null: the session's default. */
  @Property({ type: 'integer', nullable: true })
  duration?: number | null;

  /** No other exam in its room and period. */
  @Property({ type: 'boolean', default: false })
  roomExclusive: boolean = false;
}
