import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261129190810 } from './Migration20261129190810';
import { Migration20261129191301 } from './Migration20261129191301';
import { Migration20261129203640 } from './Migration20261129203640';
import { Migration20261201090000 } from './Migration20261201090000';
import { Migration20261202120000 } from './Migration20261202120000';
import { Migration20261202130000 } from './Migration20261202130000';
import { Migration20261203090000 } from './Migration20261203090000';
import { Migration20261203100000 } from './Migration20261203100000';
import { Migration20261204090000 } from './Migration20261204090000';
import { Migration20261207090000 } from './Migration20261207090000';
import { Migration20261208090000 } from './Migration20261208090000';

/** Every migration, in order. A new file from `npm run migration:create` must be added here. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261129190810', class: Migration20261129190810 },
  { name: 'Migration20261129191301', class: Migration20261129191301 },
  { name: 'Migration20261129203640', class: Migration20261129203640 },
  { name: 'Migration20261201090000', class: Migration20261201090000 },
  { name: 'Migration20261202120000', class: Migration20261202120000 },
  { name: 'Migration20261202130000', class: Migration20261202130000 },
  { name: 'Migration20261203090000', class: Migration20261203090000 },
  { name: 'Migration20261203100000', class: Migration20261203100000 },
  { name: 'Migration20261204090000', class: Migration20261204090000 },
  { name: 'Migration20261207090000', class: Migration20261207090000 },
  { name: 'Migration20261208090000', class: Migration20261208090000 },
];
