import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isTransientDbError } from '../../src/engine/db/transient-error';
import { createTestDb } from '../support/engine-harness';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isTransientDbError', () => {
  it('repeats what can succeed later and nothing else', () => {
    for (const transient of [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('57P01'),
      withCode('57P03'),
      withCode('08006'),
      withCode('53300'),
      withCode('40001'),
      withCode('40P01'),
      withCode('25006'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      expect(isTransientDbError(transient), transient.message + ' ' + (transient as { code?: string }).code).toBe(true);
    }
    for (const permanent of [
      withCode('22P05'), // \u0000 in jsonb
      withCode('23505'), // unique violation
      withCode('40002'), // integrity constraint at commit
      withCode('57P04'), // database dropped
      withCode('42P01'), // undefined table
      new TypeError('Do not know how to serialize a BigInt'),
      new TypeError('Converting circular structure to JSON (Connection object)'),
      'not an error',
    ]) {
      expect(isTransientDbError(permanent), String(permanent)).toBe(false);
    }
  });

  it('classifies what real PostgreSQL and pg answer', async () => {
    const ctx = await createTestDb('transient_error');
    try {
      const refused = await ctx.db.pool.query(`SELECT $1::jsonb`, ['"nul \\u0000"']).catch((e: unknown) => e);
      expect(isTransientDbError(refused)).toBe(false);
      // A connection to a port where nothing listens.
      const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' });
      const down = await client.connect().catch((e: unknown) => e);
      expect(isTransientDbError(down)).toBe(true);
    } finally {
      await ctx.close();
    }
  });
});
