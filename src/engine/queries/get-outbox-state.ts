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
 * committed state. Many at once for the copies whose claims lost in one turn (a worker that
 * did not run their jobs, under fast start, meets one per job), one alone over a scalar
 * parameter, whose plan PostgreSQL keeps. No row: deleted after retention.
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
