import { randomUUID } from 'node:crypto';
import { Entity, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';

/**
 * An academic term: the week grid every timetable of the term uses. Codes are kept
 * exactly as imported (e.g. from an ITC-2007 `.ctt` file) so exports match the source.
 * `revision` grows with every change a timetable of the term is computed from (see
 * `changesTimetables` in academic-service.ts), so a solve of an older revision is not
 * saved over the term's present state.
 */
@Entity({ tableName: 'academic_terms' })
export class AcademicTerm {
  [OptionalProps]?: 'periodLabels' | 'revision' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  @Unique({ name: 'academic_terms_code_unique' })
  code!: string;

  @Property({ type: 'text' })
  name!: string;

  @Property({ type: 'integer' })
  daysPerWeek!: number;

  @Property({ type: 'integer' })
  periodsPerDay!: number;

  /** One label per period of the day ("08:00–08:45"); empty means "period 1", "period 2", … */
  @Property({ type: 'jsonb' })
  periodLabels: string[] = [];

  @Property({ type: 'integer', default: 0 })
  revision: number = 0;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
