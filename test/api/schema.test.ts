import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { generate } from '@graphql-codegen/cli';
import { describe, expect, it } from 'vitest';
import { buildApiSchema, printApiSchema, SCHEMA_FILE } from '../../src/api/graphql/build-schema';
import codegenConfig from '../../codegen';

const root = path.resolve(__dirname, '../..');

describe('committed schema and generated documents', () => {
  it('schema/schema.graphql matches the resolvers (run `npm run schema:emit` when this fails)', async () => {
    const committed = await readFile(path.join(root, SCHEMA_FILE), 'utf8');
    expect(printApiSchema(await buildApiSchema())).toBe(committed);
  });

  it('test/api/generated matches the schema and the .graphql operations (run `npm run codegen` when this fails)', async () => {
    const outputs = await generate({ ...codegenConfig, cwd: root, silent: true }, false);
    expect(outputs.length).toBeGreaterThan(0);
    for (const output of outputs) {
      const committed = await readFile(path.resolve(root, output.filename), 'utf8').catch(() => '(missing)');
      expect(committed, `${output.filename} is stale`).toBe(output.content);
    }
  });

  it('the check scripts agree', () => {
    expect(() => execFileSync('npm', ['run', '--silent', 'codegen:check'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  }, 120_000);
});
