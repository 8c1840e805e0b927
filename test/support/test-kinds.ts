import type { KindRegistration } from '../../src/engine/registry';
import { ALL_JOB_KINDS } from '../../src/job-kinds';

/**
 * Stand-in processors for the job kinds, for end-to-end tests of the API and of
 * several processes without the real domain processors. A spawned service process
 * (service-process.ts) registers them for the kinds listed in `JIAOWU_TEST_KINDS`.
 *
 * Input: `{ steps?: number (3), stepMs?: number (200), fail?: string }` — walks
 * through `steps` named steps ("step 1"…), reporting progress, checking cancellation
 * between steps; throws `fail` as the error message when given.
 */
export interface TestKindInput {
  steps?: number;
  stepMs?: number;
  fail?: string;
}

export const TEST_KINDS_ENV = 'JIAOWU_TEST_KINDS';

export function testKindRegistrations(): KindRegistration<TestKindInput, { steps: number; pid: number }>[] {
  return ALL_JOB_KINDS.map((kind) => ({
    kind,
    defaults: { consumers: 2 },
    processor: async ({ input, progress, signal }) => {
      const steps = Math.max(0, Math.min(100, Number(input?.steps ?? 3)));
      const stepMs = Math.max(0, Math.min(60_000, Number(input?.stepMs ?? 200)));
      for (let i = 1; i <= steps; i++) {
        if (signal.aborted) throw new Error('cancelled');
        progress.step(`step ${i}`, `step ${i} of ${steps}`);
        await sleep(stepMs, signal);
        progress.report(i / steps, `finished step ${i}`);
      }
      if (input?.fail) throw new Error(input.fail);
      return { steps, pid: process.pid };
    },
  }));
}


function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
