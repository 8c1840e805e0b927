import { ItemFailure, statementPerBatch } from './db/batcher';
import type { Sql } from './db/sql';
import { insertJob, type InsertedOutboxState, type InsertJobArgs } from './queries/insert-job';
import { insertJobs } from './queries/insert-jobs';
import type { JobRow } from './queries/job-row';
import type { OutboxPublisher } from './publisher';
import { asJobId, asOutboxId, OutboxState } from './types';

type InsertBatch = (requests: InsertJobArgs[]) => Promise<Array<JobRow | ItemFailure | undefined>>;

/**
 * Runs the enqueues that met in time as one statement (see Batcher): under load, N
 * callers cost one round trip and one commit instead of N. A job whose key is taken
 * gets no row (its caller reads why); a job the statement refuses is retried alone, so
 * it never fails the jobs batched with it.
 */
export function insertJobBatch(sql: Sql, outboxState: InsertedOutboxState = OutboxState.PENDING): InsertBatch {
  return statementPerBatch({
    many: (requests) => insertJobs(sql, requests, outboxState),
    one: (request) => insertJob(sql, request, outboxState),
    rowKey: (row) => row.id,
    requestKey: (request) => request.jobId,
  });
}

/**
 * `insertJobBatch` in a process that publishes: while its publisher runs, the outbox
 * rows are written PUBLISHING and handed to it the moment the statement has committed
 * (`OutboxPublisher.sendReserved`), so a job's message leaves without waiting for a
 * publisher pass. Otherwise (not started yet, stopping) they are written PENDING and the
 * publisher is woken, as any enqueue wakes it.
 */
export function insertAndSendJobBatch(sql: Sql, publisher: OutboxPublisher): InsertBatch {
  const pending = insertJobBatch(sql, OutboxState.PENDING);
  const reserved = insertJobBatch(sql, OutboxState.PUBLISHING);
  return async (requests) => {
    if (!publisher.takesReserved()) {
      const results = await pending(requests);
      publisher.wake();
      return results;
    }
    let results: Array<JobRow | ItemFailure | undefined>;
    try {
      results = await reserved(requests);
    } catch (error) {
      publisher.releaseReserved(requests.map((r) => r.outboxId));
      throw error;
    }
    publisher.sendReserved(
      requests.flatMap((r, i) => {
        const row = results[i];
        return row && !(row instanceof ItemFailure) ? [{ outboxId: asOutboxId(r.outboxId), jobId: asJobId(r.jobId), kind: r.kind }] : [];
      }),
    );
    // A job that failed alone may have failed after its commit (see releaseReserved).
    const failed = requests.filter((_r, i) => results[i] instanceof ItemFailure);
    if (failed.length > 0) publisher.releaseReserved(failed.map((r) => r.outboxId));
    return results;
  };
}
