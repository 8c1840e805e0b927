import { randomUUID } from 'node:crypto';
import { Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { MakeupExam } from './makeup-exam.entity';

/**
 * A student enrolled in an exam's course with the score they got (TERM sessions: below the
 * passing score, they sit the make-up exam; no score, they do not), or a student listed
 * for an imported exam (score null; they sit it).
 */
@Entity({ tableName: 'makeup_exam_enrolments' })
@Unique({ name: 'makeup_exam_enrolments_exam_student_unique', properties: ['exam', 'studentCode'] })
export class MakeupExamEnrolment {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => MakeupExam, { deleteRule: 'cascade' })
  exam!: MakeupExam;

  @Property({ type: 'text' })
  studentCode!: string;

  @Property({ type: 'double', nullable: true })
  score?: number | null;
}
