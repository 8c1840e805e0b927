import { engineEntities } from './engine/entities';

/** Every MikroORM entity of the service; domain modules add theirs here. */
export const allEntities = [...engineEntities];
