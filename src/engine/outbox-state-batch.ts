import { statementPerBatch, type ItemFailure } from './db/batcher';
import type { Sql } from './db/sql';
import { getOutboxState, getOutboxStates, type OutboxStateRow } from './queries/get-outbox-state';

/**
 * Reads the outbox rows of the deliveries whose claims lost in one turn as one statement
 * (see Batcher), as their claims were: under fast start with several workers of a kind,
 * many broker copies reach a worker that did not run their job, and each would otherwise
 * cost a round trip of its own.
 */
export function outboxStateBatch(sql: Sql): (outboxIds: string[]) => Promise<Array<OutboxStateRow | ItemFailure | undefined>> {
  return statementPerBatch({
    many: (outboxIds) => getOutboxStates(sql, outboxIds),
    one: (outboxId) => getOutboxState(sql, outboxId),
    rowKey: (row) => row.id,
    requestKey: (outboxId) => outboxId,
  });
}
