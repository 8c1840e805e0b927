import { ItemFailure } from './db/batcher';
import type { Sql } from './db/sql';
import { isTransientDbError } from './db/transient-error';
import { claimMessage, claimMessages, type ClaimArgs, type ClaimRow } from './queries/claim-message';

/**
 * Runs the claims that met in time as one statement (see Batcher). A statement that
 * fails for a reason other than the database being away (a value it refuses) is run
 * again claim by claim, so that one bad claim fails alone and never the claims
 * batched with it.
 */
export function claimBatch(sql: Sql): (requests: ClaimArgs[]) => Promise<Array<ClaimRow | ItemFailure | undefined>> {
  return async (requests) => {
    try {
      const rows = await claimMessages(sql, requests);
      const byOutbox = new Map(rows.map((row) => [row.claimed_outbox_id, row]));
      return requests.map((r) => byOutbox.get(r.outboxId));
    } catch (error) {
      if (requests.length === 1 || isTransientDbError(error)) throw error;
      return Promise.all(requests.map((r) => claimMessage(sql, r).catch((itemError: unknown) => new ItemFailure(itemError))));
    }
  };
}
