import 'reflect-metadata';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApiSchema, printApiSchema, SCHEMA_FILE } from './build-schema';

/** `npm run schema:emit` writes schema/schema.graphql; with `--check`, fails when it is stale. */
async function main(): Promise<void> {
  const file = path.resolve(__dirname, '../../..', SCHEMA_FILE).replace(`${path.sep}dist${path.sep}`, path.sep);
  const sdl = printApiSchema(await buildApiSchema());
  if (process.argv.includes('--check')) {
    const current = await readFile(file, 'utf8').catch(() => '');
    if (current !== sdl) {
      process.stderr.write(`${SCHEMA_FILE} is stale: run \`npm run schema:emit\` and commit it.\n`);
      process.exit(1);
    }
    process.stdout.write(`${SCHEMA_FILE} is up to date.\n`);
    return;
  }
  await writeFile(file, sdl);
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
