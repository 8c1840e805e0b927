import { randomBytes } from 'node:crypto';
import { EngineError } from './errors';
import { jobTextOf, PermanentJobError } from './registry';

/** A short id tying what a reader sees to the log line with the cause. */
export const newErrorRef = (): string => randomBytes(6).toString('hex');

/** A failure as the job's readers see it, and the ref of the log line that holds its cause. */
export interface FailureText {
  text: string;
  /** Set when `text` stands in for the cause: log the error with it. */
  ref: string | null;
}

/**
 * What a job's readers are told of a failure — its `errorMessage`, the retry `message`
 * and every event carrying them, which any viewer of the job reads. A failure raised for
 * them keeps its words: coded text (`jobText`), an EngineError (a domain's refusal of
 * what was asked) or a PermanentJobError. Any other error speaks to operators, not to
 * the office — a driver's error quotes the SQL and its values, a connection error names
 * a host — so readers are told only that the job met an internal error, with the ref
 * the log line carries; the outbox row's `last_error` keeps the cause too.
 */
export function failureText(error: unknown): FailureText {
  const coded = jobTextOf(error);
  if (coded) return { text: coded.text, ref: null };
  if ((error instanceof EngineError || error instanceof PermanentJobError) && error.message !== '') return { text: error.message, ref: null };
  const ref = newErrorRef();
  return { text: `Internal error (ref ${ref}): the service's log has its cause`, ref };
}
