import { columnsOf, type Sql } from '../db/sql';
import { OutboxState } from '../types';
import type { JobRow } from './job-row';
import { insertJobsSqlByState, insertJobValues, type InsertedOutboxState, type InsertJobArgs } from './insert-job';

const INSERT_MANY_SQL = insertJobsSqlByState(`SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY`);

/**
 * Many jobs and their outbox rows in one statement that commits on its own (the
 * enqueues of one turn, see `insertJobBatch`). A job whose key is taken — in the table
 * or earlier in the same batch — inserts nothing and returns no row, as in `insertJob`,
 * so that one taken key never fails the others. Rows come back in no particular order;
 * match them by `id`.
 */
export async function insertJobs(sql: Sql, jobs: readonly InsertJobArgs[], outboxState: InsertedOutboxState = OutboxState.PENDING): Promise<JobRow[]> {
  if (jobs.length === 0) return [];
  return sql<JobRow>(
    INSERT_MANY_SQL[outboxState],
    columnsOf(jobs, insertJobValues),
  );
}
