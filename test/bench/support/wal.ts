/** Runs one statement and gives its rows (a pg Pool's or client's `query`). */
type Query = (text: string) => Promise<{ rows: Record<string, unknown>[] }>;

/**
 * The write-ahead log PostgreSQL writes from now on: a measure of a drain's writes
 * (rows, index entries, page images) that CPU noise does not blur. Cluster-wide, so read
 * it with nothing else writing. Returns a reader of the bytes written since the mark.
 */
export async function walMark(query: Query): Promise<() => Promise<number>> {
  const lsn = async () => String((await query('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]!.lsn);
  const start = await lsn();
  return async () => Number((await query(`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '${start}')::float8 AS bytes`)).rows[0]!.bytes);
}

/** Bytes per job, in KB with one decimal. */
export const walPerJob = (bytes: number, jobs: number): string => `${(bytes / jobs / 1024).toFixed(1)} KB of WAL per job`;
