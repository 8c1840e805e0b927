import { columnsOf, type Sql } from '../db/sql';
import { asJobText, type JobText } from '../types';
import { jobColumnsOf, type JobRow } from './job-row';

export interface CompleteArgs {
  outboxId: string;
  token: string;
  result: unknown;
  message: string | null;
  /** The step not yet written by a heartbeat (sentence and code); null or absent keeps the last one. */
  currentStep?: string | JobText | null;
  /** The attempt was spared before the delivery was acknowledged (spare-attempt.ts): count it again. */
  restoreAttempt?: boolean;
}

/**
 * Success: the outbox row COMPLETED and the job SUCCEEDED with its result, fenced by
 * the token — a runner whose lease was stolen gets no row back and changes nothing.
 * The exclusive key is cleared so the next job for the same plan or term may start.
 *
 * Completes many at once (one row per completion that held its lease, with
 * `completed_outbox_id`): the runner batches the completions that arrive while one is
 * in flight, so N jobs cost one commit.
 */
export async function completeJobs(sql: Sql, completions: readonly CompleteArgs[]): Promise<Array<JobRow & { completed_outbox_id: string }>> {
  if (completions.length === 0) return [];
  return sql<JobRow & { completed_outbox_id: string }>(
    COMPLETE_MANY_SQL,
    columnsOf(completions, completeValues),
  );
}

/**
 * One completion (a lone job, or one inside the processor's own transaction): the same
 * statement over scalar parameters, whose plan PostgreSQL keeps (see claimMessage). No
 * row back means the lease was lost.
 */
export async function completeJob(sql: Sql, args: CompleteArgs): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(COMPLETE_ONE_SQL, completeValues(args));
  return rows[0];
}

const COMPLETE_MANY_SQL = completeSql(`SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::jsonb[], $4::text[], $5::text[], $6::boolean[], $7::text[])`);
const COMPLETE_ONE_SQL = completeSql(`SELECT $1::uuid, $2::uuid, $3::jsonb, $4::text, $5::text, $6::boolean, $7::text`);

/** A completion's values in the order of `completeSql`'s columns. */
function completeValues(c: CompleteArgs): unknown[] {
  const step = c.currentStep == null ? null : asJobText(c.currentStep);
  return [c.outboxId, c.token, JSON.stringify(c.result ?? null), c.message, step?.text ?? null, c.restoreAttempt === true, step?.code ?? null];
}

/** The completion over `source`: rows of (outbox id, token, result, message, step, restore attempt, step code). */
function completeSql(source: string): string {
  return `WITH req AS (
       SELECT * FROM (${source}) AS r(outbox_id, token, result, message, current_step, restore_attempt, current_step_code)
     ), done AS (
       UPDATE job_outbox o SET state = 'COMPLETED', processing_token = NULL, lease_expires_at = NULL,
         processing_attempts = o.processing_attempts + CASE WHEN req.restore_attempt THEN 1 ELSE 0 END,
         completed_at = now(), updated_at = now()
       FROM req
       WHERE o.id = req.outbox_id AND o.state = 'PROCESSING' AND o.processing_token = req.token
       RETURNING o.id AS outbox_id, o.job_id
     )
     UPDATE jobs j SET status = 'SUCCEEDED', progress = 1, result = req.result, message = coalesce(req.message, 'Completed'),
       message_code = CASE WHEN req.message IS NULL THEN 'job.completed' END, message_params = NULL,
       current_step = coalesce(req.current_step, j.current_step),
       current_step_code = CASE WHEN req.current_step IS NULL THEN j.current_step_code ELSE req.current_step_code END,
       error_message = NULL, error_code = NULL, error_params = NULL, completed_at = now(), updated_at = now(), exclusive_key = NULL, sequence = j.sequence + 1
     FROM done JOIN req ON req.outbox_id = done.outbox_id
     WHERE j.id = done.job_id AND j.status = 'RUNNING'
     RETURNING ${jobColumnsOf('j')}, done.outbox_id AS completed_outbox_id`;
}
