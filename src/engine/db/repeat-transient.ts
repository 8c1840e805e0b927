import { isTransientDbError } from './transient-error';

/** The first repeat of a statement that failed transiently comes after this, then twice as long each time. */
export const FIRST_REPEAT_MS = 100;
/** Repeats never wait longer than this: a database that comes back is used within it. */
export const MAX_REPEAT_MS = 2_000;

/**
 * Runs `attempt` until it succeeds, repeating it after a transient database failure
 * (an outage, a lost connection, a deadlock) with a back-off from FIRST_REPEAT_MS to
 * MAX_REPEAT_MS, for as long as `giveUp()` is false — there is no deadline: the caller
 * decides when to stop (a shutdown, a cancelled job). What is not transient is thrown at
 * once; so is the last transient failure once `giveUp()` turns true. `attempt` learns
 * whether it is a repeat, so it can recognise its own earlier write whose reply was lost.
 */
export async function repeatWhileTransient<T>(attempt: (repeated: boolean) => Promise<T>, giveUp: () => boolean): Promise<T> {
  for (let delay = FIRST_REPEAT_MS, repeated = false; ; delay = Math.min(delay * 2, MAX_REPEAT_MS), repeated = true) {
    try {
      return await attempt(repeated);
    } catch (error) {
      if (!isTransientDbError(error) || giveUp()) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (giveUp()) throw error;
    }
  }
}
