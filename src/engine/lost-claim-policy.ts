import { claimLostDelayMs } from './backoff';
import type { OutboxStateRow } from './queries/get-outbox-state';
import { ParkReason, type Settlement } from './transport/transport';
import { OutboxState, type JobMessage } from './types';

/** How long a delivery waits when its row looked claimable yet the claim lost a race. */
export const CLAIM_RACE_RETRY_MS = 1_000;

/**
 * What to do with a delivery whose claim won nothing, from its outbox row as read
 * just after. Pure, so each case is tested on its own.
 *  - no row: deleted after retention — an old duplicate, nothing to run;
 *  - a row of another job or kind: the message is not what it says — park it, never run it;
 *  - COMPLETED: a duplicate of finished work;
 *  - PROCESSING: another runner holds it; come back when its lease would run out, so
 *    a dead holder's job is taken over without waiting for the lease rescuer (should
 *    this copy be lost, the rescuer still puts the row back);
 *  - PENDING: the row waits in the outbox (a retry's back-off); the publisher sends it
 *    when due, so this copy is not needed;
 *  - PUBLISHING/PUBLISHED: a race with a release, or a row not yet due: try again then.
 */
export function settleLostClaim(row: OutboxStateRow | undefined, message: JobMessage, leaseSeconds: number): Settlement {
  if (!row) return { type: 'ack' };
  if (!rowMatches(row, message)) {
    return {
      type: 'park',
      reason: ParkReason.MISMATCH,
      detail: `outbox row ${message.outboxId} belongs to job ${row.job_id} of kind ${row.kind}, not job ${message.jobId} of kind ${message.kind}`,
    };
  }
  switch (row.state) {
    case OutboxState.COMPLETED:
    case OutboxState.PENDING:
      return { type: 'ack' };
    case OutboxState.PROCESSING:
      return { type: 'retry', delayMs: claimLostDelayMs(row.lease_ms_left, leaseSeconds) };
    default:
      return { type: 'retry', delayMs: Math.max(CLAIM_RACE_RETRY_MS, Math.ceil(row.due_ms)) };
  }
}

/**
 * What the row said to a delivery whose claim lost, for the `claims_lost` metric: its
 * state in lower case, `gone` with no row, `mismatch` for a row of another job or kind.
 * Under fast start with several workers of a kind, `processing` and `completed` count the
 * broker copies that reached a worker other than the one running their job.
 */
export function lostClaimFinding(row: OutboxStateRow | undefined, message: JobMessage): LostClaimFinding {
  if (!row) return 'gone';
  if (!rowMatches(row, message)) return 'mismatch';
  return row.state.toLowerCase() as LostClaimFinding;
}

export type LostClaimFinding = 'gone' | 'mismatch' | Lowercase<`${OutboxState}`>;

/** The row belongs to the job and kind the message names (else the message is not what it says). */
const rowMatches = (row: OutboxStateRow, message: JobMessage) => row.job_id === message.jobId && row.kind === message.kind;
