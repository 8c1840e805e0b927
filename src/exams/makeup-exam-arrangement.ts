/**
 * The MAKEUP_EXAM_AUTO job. Its processor is not part of this build: every enqueue is
 * refused at once, rather than left queued for a processor that never comes.
 */
import { badInput } from '../engine/errors';
import { PermanentJobError, type KindDefaults, type KindRegistration } from '../engine/registry';
import { exclusivePer, JobKind } from '../job-kinds';

/** One active arrangement per make-up session. */
export const MAKEUP_EXAM_SESSION_KEY = exclusivePer('makeup-exam-session');

export function makeupExamArrangementRegistration(defaults: KindDefaults): KindRegistration<unknown, never> {
  return {
    kind: JobKind.MAKEUP_EXAM_AUTO,
    defaults,
    validateInput: () => {
      throw badInput('MAKEUP_EXAM_AUTO has no processor in this build', { kind: JobKind.MAKEUP_EXAM_AUTO });
    },
    processor: async () => {
      throw new PermanentJobError('MAKEUP_EXAM_AUTO has no processor in this build');
    },
  };
}
