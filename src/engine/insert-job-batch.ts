import { statementPerBatch, type ItemFailure } from './db/batcher';
import type { Sql } from './db/sql';
import { insertJob, type InsertJobArgs } from './queries/insert-job';
import { insertJobs } from './queries/insert-jobs';
import type { JobRow } from './queries/job-row';

/**
 * Runs the enqueues that met in time as one statement (see Batcher): under load, N
 * callers cost one round trip and one commit instead of N. A job whose key is taken
 * gets no row (its caller reads why); a job the statement refuses is retried alone, so
 * it never fails the jobs batched with it.
 */
export function insertJobBatch(sql: Sql): (requests: InsertJobArgs[]) => Promise<Array<JobRow | ItemFailure | undefined>> {
  return statementPerBatch({
    many: (requests) => insertJobs(sql, requests),
    one: (request) => insertJob(sql, request),
    rowKey: (row) => row.id,
    requestKey: (request) => request.jobId,
  });
}
