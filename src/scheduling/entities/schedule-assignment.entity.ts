import { randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Course } from '../../academic/entities/course.entity';
import { Room } from '../../academic/entities/room.entity';
import { SchedulePlan } from './schedule-plan.entity';

/** One lecture of a course placed at (day, period) in a room; `locked` means the solver keeps it. */
@Entity({ tableName: 'schedule_assignments' })
@Unique({ name: 'schedule_assignments_plan_course_lecture_unique', properties: ['plan', 'course', 'lectureIndex'] })
/** Serves the API's pages of a plan's lectures (keyset on day, period, id). */
@Index({ name: 'schedule_assignments_plan_day_period_index', properties: ['plan', 'day', 'period', 'id'] })
export class ScheduleAssignment {
  [OptionalProps]?: 'locked';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => SchedulePlan, { deleteRule: 'cascade' })
  plan!: SchedulePlan;

  @ManyToOne(() => Course, { deleteRule: 'cascade' })
  course!: Course;

  /** 0-based, below the course's lectures per week. */
  @Property({ type: 'integer' })
  lectureIndex!: number;

  @Property({ type: 'integer' })
  day!: number;

  @Property({ type: 'integer' })
  period!: number;

  @ManyToOne(() => Room, { deleteRule: 'cascade' })
  room!: Room;

  @Property({ type: 'boolean', default: false })
  locked: boolean = false;
}
