import type { Database } from '../../src/database';
import type { JobEngine } from '../../src/engine/engine';
import type { KindRegistration } from '../../src/engine/registry';
import { JobKind } from '../../src/job-kinds';
import { automaticScheduleRegistration, type AutomaticScheduleOptions } from '../../src/scheduling/automatic-schedule';
import { createGeneratedTerm, generateTerm, type GeneratedTermSize } from '../../src/scheduling/demo-data';
import { schedulePublishRegistration, type SchedulePublishOptions } from '../../src/scheduling/schedule-publish';
import { buildEngine } from '../support/engine-harness';

export const SMALL_TERM: GeneratedTermSize = { courses: 16, rooms: 4, curricula: 8, teachers: 12, days: 5, periodsPerDay: 4 };

export async function smallTerm(db: Database, code: string, seed = 7, size: GeneratedTermSize = SMALL_TERM) {
  return createGeneratedTerm(db.orm.em.fork(), generateTerm(size, seed, code));
}

export function schedulingEngine(
  db: Database,
  options: { schedule?: AutomaticScheduleOptions; publish?: SchedulePublishOptions; extra?: KindRegistration<any, any>[]; settings?: Parameters<typeof buildEngine>[0]['settings'] } = {},
): JobEngine {
  return buildEngine({
    db,
    registrations: [
      automaticScheduleRegistration({ consumers: 2 }, options.schedule),
      schedulePublishRegistration({ consumers: 1 }, options.publish),
      ...(options.extra ?? []),
    ],
    settings: { attemptLimit: 1, ...options.settings },
  });
}

export const em = (db: Database) => db.orm.em.fork();
export { JobKind };
