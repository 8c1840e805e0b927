import type { Sql } from '../db/sql';
import { OutboxState } from '../types';
import { JOB_COLUMNS, type JobRow } from './job-row';

export interface InsertJobArgs {
  jobId: string;
  outboxId: string;
  kind: string;
  input: unknown;
  requestedBy: string | null;
  idempotencyKey: string | null;
  exclusiveKey: string | null;
}

/**
 * The job row and its outbox row in one statement, in the caller's transaction or on
 * its own. A job whose idempotency key is already used for its kind, or whose exclusive
 * key is active, inserts nothing and returns no row (`ON CONFLICT DO NOTHING` without a
 * target): the caller reads why, and its transaction, never aborted by a unique
 * violation, stays usable. Scalar parameters: PostgreSQL keeps the statement's plan.
 */
export async function insertJob(sql: Sql, args: InsertJobArgs, outboxState: InsertedOutboxState = OutboxState.PENDING): Promise<JobRow | undefined> {
  const rows = await sql<JobRow>(INSERT_ONE_SQL[outboxState], insertJobValues(args));
  return rows[0];
}

/** A job's values in the order of `insertJobsSql`'s columns (its `ord` aside). */
export const insertJobValues = (j: InsertJobArgs) => [j.jobId, j.outboxId, j.kind, JSON.stringify(j.input ?? null), j.requestedBy, j.idempotencyKey, j.exclusiveKey];

/**
 * The state an outbox row is written in. PENDING: the outbox publisher claims it once it
 * is due. PUBLISHING: the enqueuing process publishes it itself as soon as the insert
 * has committed (see `OutboxPublisher.sendReserved`), skipping the publisher's claim —
 * the state the claim would have given it, so a process that dies before the broker
 * confirms leaves the row exactly as a publisher dying mid-publish does: the outbox
 * republisher sends it again once it is stranded.
 */
export type InsertedOutboxState = OutboxState.PENDING | OutboxState.PUBLISHING;

/**
 * Every enqueue NOTIFYs this channel once per job, at its commit, with the payload
 * `<outbox id> <job id> <kind>`: an idle worker of the kind may start the job at once
 * (see FastStartListener) instead of waiting for its message to cross the broker. The
 * message is sent all the same; a notification only saves time, so one that is lost
 * (no listener, a dropped connection) loses nothing.
 */
export const JOB_READY_CHANNEL = 'jiaowu_job_ready';

/**
 * The statement of `insertJob` and `insertJobs`, given the rows to insert as
 * (job_id, outbox_id, kind, input, requested_by, idempotency_key, exclusive_key, ord),
 * built once for each state the outbox row may be written in.
 */
export const insertJobsSqlByState = (rows: string): Record<InsertedOutboxState, string> => ({
  [OutboxState.PENDING]: insertJobsSql(rows, OutboxState.PENDING),
  [OutboxState.PUBLISHING]: insertJobsSql(rows, OutboxState.PUBLISHING),
});

const insertJobsSql = (rows: string, outboxState: InsertedOutboxState) => `WITH req (job_id, outbox_id, kind, input, requested_by, idempotency_key, exclusive_key, ord) AS (
       ${rows}
     ), job AS (
       INSERT INTO jobs (id, kind, status, input, requested_by, idempotency_key, exclusive_key, exclusive_scope, message, message_code)
       SELECT job_id, kind, 'QUEUED', input, requested_by, idempotency_key, exclusive_key, exclusive_key, 'Waiting for a worker', 'job.queued'
         FROM req ORDER BY ord
       ON CONFLICT DO NOTHING
       RETURNING ${JOB_COLUMNS}
     ), outbox AS (
       INSERT INTO job_outbox (id, job_id, kind, state)
       SELECT req.outbox_id, job.id, job.kind, '${outboxState}' FROM job JOIN req ON req.job_id = job.id
       RETURNING id, job_id, kind
     )
     -- The sub-query runs once, for its NOTIFYs (a SELECT in WITH would run only if read).
     SELECT * FROM job
     WHERE (SELECT count(pg_notify('${JOB_READY_CHANNEL}', o.id || ' ' || o.job_id || ' ' || o.kind)) FROM outbox o) >= 0`;

/** One job over scalar parameters. */
const INSERT_ONE_SQL = insertJobsSqlByState(`SELECT $1::uuid, $2::uuid, $3::text, $4::jsonb, $5::text, $6::text, $7::text, 1`);
