import 'reflect-metadata';
import { ReflectMetadataProvider } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { allEntities } from './entities';
import { migrationsList } from '../migrations';

/**
 * The MikroORM configuration, shared by the service and the CLI. Migrations are
 * listed explicitly (migrations/index.ts) so the same list runs from the TypeScript
 * sources under test and from the compiled service; `npm run migration:create`
 * writes new files into migrations/ (add them to the list).
 */
export function ormConfig(clientUrl: string, overrides: Partial<Options> = {}): Options {
  const { driverOptions, ...rest } = overrides;
  return defineConfig({
    clientUrl,
    // MikroORM takes only the host, port, user, password and database from `clientUrl`;
    // handed the URL as well, pg reads the rest as it does for the engine's pools
    // (`sslmode`, a socket directory in `host`, `options`, `application_name`).
    driverOptions: { ...driverOptions, connection: { connectionString: clientUrl, ...driverOptions?.connection } },
    entities: allEntities,
    metadataProvider: ReflectMetadataProvider,
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: true },
    migrations: {
      path: 'migrations',
      pathTs: 'migrations',
      glob: 'Migration*.{js,ts}',
      migrationsList,
      snapshot: false,
      transactional: true,
      allOrNothing: true,
      silent: true,
    },
    pool: { min: 0, max: 10 },
    debug: false,
    ...rest,
  });
}

// The MikroORM CLI reads this default export.
export default ormConfig(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/jiaowu');
