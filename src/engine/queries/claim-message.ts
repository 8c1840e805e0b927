import { columnsOf, type Sql } from '../db/sql';
import { jobColumnsOf, type JobRow } from './job-row';
import { leaseRanOut } from './lease-ran-out';

export type ClaimRow = {
  claimed_outbox_id: string;
  claimed_token: string;
  processing_attempts: number;
  job_status: string | null;
  /** Whether the job was asked to cancel; read only when the claim did not start it. */
  job_cancel_requested: boolean | null;
} & Partial<JobRow>;

export interface ClaimArgs {
  outboxId: string;
  /** The job and kind the message names: the row must belong to both. */
  jobId: string;
  kind: string;
  token: string;
  leaseSeconds: number;
  attemptLimit: number;
  /**
   * Claimed on the job's enqueue notification, with no delivery in hand (see
   * FastStartListener): only a row whose message is in the broker or on its way
   * (PUBLISHING/PUBLISHED), so that a copy is there to start the job again should this
   * worker die. A PENDING row has none yet, and an expired lease is the broker copy's
   * (or the lease rescuer's) to take over.
   */
  offered?: boolean;
}

/**
 * The claim: one conditional UPDATE gives the row a fresh token and lease and counts
 * the attempt — only if nobody holds it (PENDING/PUBLISHING/PUBLISHED) or the
 * holder's lease ran out (`leaseRanOut`: not merely during a database outage, whose
 * live workers re-take their leases first). Exactly one concurrent claimer gets a row back.
 * Fenced on what the message says as well as its outbox id: the row must belong to
 * the message's job and kind (the runner passes the kind of the queue it consumes,
 * which the message must name), so a misrouted or forged message claims nothing and
 * no processor runs on another kind's job. An offered claim (no delivery in hand)
 * takes only a row whose message is sent or on its way (see `offered`). And not before the row is due: a stray
 * copy of a message whose retry waits out its back-off in the outbox (PENDING,
 * `available_at` ahead) cannot start it early.
 * In the same statement the job turns RUNNING, unless it is over the attempt
 * limit, already terminal or asked to cancel (then `id` is null and the caller
 * decides from `job_cancel_requested`, `processing_attempts` and `job_status`).
 *
 * Claims many messages at once (one row per claim won, keyed by `claimed_outbox_id` and
 * `claimed_token`): the runner batches the claims that arrive while one is in flight.
 * Two claims of one row in a batch (two copies of a message, or a copy and a fast start,
 * in one turn) update it once, with one of their tokens: that claim won, the other lost.
 */
export async function claimMessages(sql: Sql, claims: readonly ClaimArgs[]): Promise<ClaimRow[]> {
  if (claims.length === 0) return [];
  return sql<ClaimRow>(CLAIM_MANY_SQL, columnsOf(claims, claimValues));
}

/**
 * One claim (a lone delivery, e.g. on an idle service): the same statement over scalar
 * parameters, whose plan PostgreSQL keeps. The array form's generic plan is costed for
 * ten rows, so PostgreSQL plans it anew for every call — for one row, longer than
 * running it. No row back means the claim was lost.
 */
export async function claimMessage(sql: Sql, args: ClaimArgs): Promise<ClaimRow | undefined> {
  const rows = await sql<ClaimRow>(CLAIM_ONE_SQL, claimValues(args));
  return rows[0];
}

const CLAIM_MANY_SQL = claimSql(`SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::float8[], $4::int[], $5::uuid[], $6::text[], $7::bool[])`);
const CLAIM_ONE_SQL = claimSql(`SELECT $1::uuid, $2::uuid, $3::float8, $4::int, $5::uuid, $6::text, $7::bool`);

/** A claim's values in the order of `claimSql`'s columns. */
const claimValues = (c: ClaimArgs) => [c.outboxId, c.token, c.leaseSeconds, c.attemptLimit, c.jobId, c.kind, c.offered ?? false];

/** The claim over `source`: rows of (outbox id, token, lease seconds, attempt limit, job id, kind, offered). */
function claimSql(source: string): string {
  return `WITH req AS (
       SELECT * FROM (${source}) AS r(outbox_id, token, lease_seconds, attempt_limit, job_id, kind, offered)
     ), claimed AS (
       UPDATE job_outbox o
       SET state = 'PROCESSING', processing_token = req.token,
           lease_expires_at = now() + make_interval(secs => req.lease_seconds),
           processing_attempts = o.processing_attempts + 1, last_error = NULL, updated_at = now()
       FROM req
       WHERE o.id = req.outbox_id AND o.job_id = req.job_id AND o.kind = req.kind
         AND o.available_at <= now()
         AND (o.state IN ('PUBLISHING', 'PUBLISHED')
              OR (NOT req.offered AND (o.state = 'PENDING' OR (o.state = 'PROCESSING' AND ${leaseRanOut('o')}))))
       RETURNING o.id AS outbox_id, o.processing_token AS token, o.job_id, o.processing_attempts, req.attempt_limit
     ), started AS (
       UPDATE jobs j
       SET status = 'RUNNING', attempts = c.processing_attempts,
           started_at = coalesce(j.started_at, now()), updated_at = now(), sequence = j.sequence + 1,
           message = CASE WHEN c.processing_attempts > 1 THEN 'Attempt ' || c.processing_attempts || ' started' ELSE 'Started' END,
           message_code = CASE WHEN c.processing_attempts > 1 THEN 'job.attempt-started' ELSE 'job.started' END,
           message_params = CASE WHEN c.processing_attempts > 1 THEN jsonb_build_object('attempt', c.processing_attempts) END
       FROM claimed c
       WHERE j.id = c.job_id AND j.status IN ('QUEUED', 'RUNNING')
         AND j.cancel_requested_at IS NULL AND c.processing_attempts <= c.attempt_limit
       RETURNING ${jobColumnsOf('j')}
     )
     SELECT c.outbox_id AS claimed_outbox_id, c.token AS claimed_token, c.processing_attempts,
       -- only looked up when the job did not start (CASE evaluates the sub-query lazily)
       CASE WHEN s.id IS NULL THEN (SELECT status FROM jobs WHERE id = c.job_id) ELSE s.status END AS job_status,
       CASE WHEN s.id IS NULL THEN (SELECT cancel_requested_at IS NOT NULL FROM jobs WHERE id = c.job_id) END AS job_cancel_requested,
       s.*
     FROM claimed c LEFT JOIN started s ON s.id = c.job_id`;
}
