import { statementPerBatch, type ItemFailure } from './db/batcher';
import type { Sql } from './db/sql';
import { claimMessage, claimMessages, type ClaimArgs, type ClaimRow } from './queries/claim-message';

/**
 * Runs the claims that met in time as one statement (see Batcher); a claim the
 * statement refuses is retried alone, so it never fails the claims batched with it.
 */
export function claimBatch(sql: Sql): (requests: ClaimArgs[]) => Promise<Array<ClaimRow | ItemFailure | undefined>> {
  return statementPerBatch({
    many: (requests) => claimMessages(sql, requests),
    one: (request) => claimMessage(sql, request),
    // By token too: of two claims of one row in a batch, only the one whose token the row took won it.
    rowKey: (row) => `${row.claimed_outbox_id} ${row.claimed_token}`,
    requestKey: (request) => `${request.outboxId} ${request.token}`,
  });
}
