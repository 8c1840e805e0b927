import { randomUUID } from 'node:crypto';
import type { Database } from '../../../src/database';
import { poolSql } from '../../../src/engine/db/sql';
import { claimMessage } from '../../../src/engine/queries/claim-message';
import { insertJob } from '../../../src/engine/queries/insert-job';
import { FAST_SETTINGS, newJobArgs } from '../../support/engine-harness';

/**
 * PostgreSQL's share of a start: the runner's claim (`claimMessage`, the statement a lone
 * delivery runs) alone, over the pool the runner claims on (`relaxedPool`), one at a time
 * at the latency figure's pace: 10 ms idle, a job's insert, then its claim at once — as
 * in a start, where only the broker's hop comes between the two (after an idle wait every
 * process on the path wakes slower, so a claim timed long after its insert would be
 * overstated). With the broker's hop it is the floor under the start latency on
 * RabbitMQ: a runner must receive a job's message and win its claim before the processor
 * may start. Returns the samples (ms) after `warmup` ones.
 */
export async function measureLoneClaim(db: Database, kind: string, samples: number, warmup: number): Promise<number[]> {
  const sql = poolSql(db.pool);
  const relaxedSql = poolSql(db.relaxedPool);
  const claims: number[] = [];
  for (let i = 0; i < samples + warmup; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const args = newJobArgs(kind, { i });
    await insertJob(sql, args);
    const started = performance.now();
    const row = await claimMessage(relaxedSql, {
      outboxId: args.outboxId,
      jobId: args.jobId,
      kind,
      token: randomUUID(),
      // The lease and attempt limit the bench's engines claim with.
      leaseSeconds: FAST_SETTINGS.leaseSeconds,
      attemptLimit: FAST_SETTINGS.attemptLimit,
    });
    const took = performance.now() - started;
    if (row?.id !== args.jobId) throw new Error(`the lone claim of job ${args.jobId} did not start it: ${JSON.stringify(row)}`);
    claims.push(took);
  }
  return claims.slice(warmup);
}
