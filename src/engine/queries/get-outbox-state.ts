import type { Sql } from '../db/sql';

/** What a losing claimer reads to decide what to do with its delivery. */
export interface OutboxStateRow {
  id: string;
  state: string;
  job_id: string;
  kind: string;
  /** Time left on the holder's lease (PROCESSING), negative once expired. */
  lease_ms_left: number | null;
  /** Time until the row is due (`available_at`), negative once due. */
  due_ms: number;
}

/**
 * What a losing claimer needs to decide: is the message done, held by a live lease, not
 * yet due, or not what it says? A plain read after the claim lost, so it sees the winner's
 * committed state; no row means deleted after retention. One row over a scalar parameter,
 * whose plan PostgreSQL keeps; many for the claims that lost in one turn (outbox-state-batch).
 */
export async function getOutboxState(sql: Sql, outboxId: string): Promise<OutboxStateRow | undefined> {
  const rows = await sql<OutboxStateRow>(`${SELECT_STATE} WHERE id = $1`, [outboxId]);
  return rows[0];
}

export async function getOutboxStates(sql: Sql, outboxIds: readonly string[]): Promise<OutboxStateRow[]> {
  return sql<OutboxStateRow>(`${SELECT_STATE} WHERE id = ANY($1::uuid[])`, [outboxIds]);
}

const SELECT_STATE = `SELECT id, state, job_id, kind,
       (extract(epoch FROM (lease_expires_at - now())) * 1000)::float8 AS lease_ms_left,
       (extract(epoch FROM (available_at - now())) * 1000)::float8 AS due_ms
     FROM job_outbox`;
