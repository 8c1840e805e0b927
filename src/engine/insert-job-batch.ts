import { ItemFailure } from './db/batcher';
import type { Sql } from './db/sql';
import { isTransientDbError } from './db/transient-error';
import { insertJob, type InsertJobArgs } from './queries/insert-job';
import { insertJobs } from './queries/insert-jobs';
import type { JobRow } from './queries/job-row';

/**
 * Runs the enqueues that met in time as one statement (see Batcher): under load, N
 * callers cost one round trip and one commit instead of N. A job whose key is taken
 * gets no row (its caller reads why). A statement that fails for a reason other than
 * the database being away (a value it refuses) is run again job by job, so that one bad
 * job fails alone and never the jobs batched with it.
 */
export function insertJobBatch(sql: Sql): (requests: InsertJobArgs[]) => Promise<Array<JobRow | ItemFailure | undefined>> {
  return async (requests) => {
    try {
      const rows = await insertJobs(sql, requests);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return requests.map((r) => byId.get(r.jobId));
    } catch (error) {
      if (requests.length === 1 || isTransientDbError(error)) throw error;
      return Promise.all(requests.map((r) => insertJob(sql, r).catch((itemError: unknown) => new ItemFailure(itemError))));
    }
  };
}
