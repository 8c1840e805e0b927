import { academicEntities } from './academic/entities';
import { engineEntities } from './engine/entities';
import { examEntities } from './exams/entities';
import { schedulingEntities } from './scheduling/entities';

/** Every MikroORM entity of the service; domain modules add theirs here. */
export const allEntities = [...engineEntities, ...academicEntities, ...schedulingEntities, ...examEntities];
