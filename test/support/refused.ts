import { expect } from 'vitest';
import { EngineError } from '../../src/engine/errors';

/** Expects `promise` to be refused with an EngineError of `code` whose message matches. */
export async function refused(promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, String(message)).toBeInstanceOf(EngineError);
  expect((error as EngineError).code, (error as Error).message).toBe(code);
  expect((error as EngineError).message).toMatch(message);
}
