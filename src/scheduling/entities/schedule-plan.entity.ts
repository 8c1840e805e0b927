import { randomUUID } from 'node:crypto';
import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AcademicTerm } from '../../academic/entities/term.entity';

export enum SchedulePlanStatus {
  DRAFT = 'DRAFT',
  PUBLISHED = 'PUBLISHED',
  ARCHIVED = 'ARCHIVED',
}

/** A timetable of a term. Only a DRAFT is scheduled; at most one plan per term is PUBLISHED. */
@Entity({ tableName: 'schedule_plans' })
@Unique({
  name: 'schedule_plans_one_published_per_term',
  expression: `create unique index "schedule_plans_one_published_per_term" on "schedule_plans" ("term_id") where "status" = 'PUBLISHED'`,
})
@Index({ name: 'schedule_plans_term_created_at_index', properties: ['term', 'createdAt'] })
export class SchedulePlan {
  [OptionalProps]?: 'status' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => AcademicTerm, { deleteRule: 'cascade' })
  term!: AcademicTerm;

  @Property({ type: 'text' })
  name!: string;

  @Enum({ items: () => SchedulePlanStatus, type: 'text' })
  status: SchedulePlanStatus = SchedulePlanStatus.DRAFT;

  /** The plan this one was copied from, if any (kept as an id: the source may be deleted). */
  @Property({ type: 'uuid', nullable: true })
  copiedFromId?: string | null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  publishedAt?: Date | null;

  @Property({ type: 'timestamptz', nullable: true })
  archivedAt?: Date | null;
}
