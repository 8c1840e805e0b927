import { randomUUID } from 'node:crypto';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolSql, type Sql } from '../../src/engine/db/sql';
import { cancelJob } from '../../src/engine/queries/cancel-job';
import { claimForPublish, nextPendingDueAt } from '../../src/engine/queries/claim-for-publish';
import { deleteCompletedBatch } from '../../src/engine/queries/delete-completed';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { lockLiveOutbox } from '../../src/engine/queries/lock-live-outbox';
import { markPublished } from '../../src/engine/queries/mark-published';
import { messagingFigures } from '../../src/engine/queries/messaging-health';
import { recoverOnStartup } from '../../src/engine/queries/recover-on-startup';
import { republishStranded } from '../../src/engine/queries/republish-stranded';
import { rescueExpiredLeases } from '../../src/engine/queries/rescue-expired-leases';
import { createTestDb, newJobArgs } from '../support/engine-harness';

/**
 * The outbox's partial indexes read `stage`, a column computed from `state`
 * (entities/outbox-message.entity.ts), so that the broker's confirm is a HOT update; every
 * reader must then ask in `stage` terms, or the planner cannot match its index and scans
 * the table. Checked here from PostgreSQL itself: the table's update counters, and each
 * reader's plan.
 */
let ctx: Awaited<ReturnType<typeof createTestDb>>;

beforeAll(async () => {
  ctx = await createTestDb('engine_outbox_indexes');
});
afterAll(async () => {
  await ctx?.close();
});

/** The outbox table's updates so far, all and HOT (flushed by `client`, the connection that wrote them). */
async function outboxUpdates(client: PoolClient): Promise<{ all: number; hot: number }> {
  await client.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await ctx.db.pool.query(
    `SELECT pg_stat_clear_snapshot(), n_tup_upd::int AS all, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'job_outbox'`,
  );
  return { all: rows[0].all, hot: rows[0].hot };
}

describe("the broker's confirm", () => {
  it('marks rows PUBLISHED in place (HOT: no index entry written), where the publisher’s claim is not', async () => {
    const client = await ctx.db.pool.connect();
    try {
      const sql = poolSql(client);
      const kind = 'HOT_KIND';
      const jobs = Array.from({ length: 10 }, (_, i) => newJobArgs(kind, { i }));
      await insertJobs(sql, jobs);
      const start = await outboxUpdates(client);
      const claimed = await claimForPublish(sql, 10);
      expect(claimed).toHaveLength(10);
      const afterClaim = await outboxUpdates(client);
      // PENDING → PUBLISHING changes the stage: each row moves from one index to another.
      expect(afterClaim.all - start.all).toBe(10);
      expect(afterClaim.hot - start.hot).toBe(0);
      await markPublished(
        sql,
        claimed.map((row) => row.id),
      );
      const afterConfirm = await outboxUpdates(client);
      expect(afterConfirm.all - afterClaim.all).toBe(10);
      expect(afterConfirm.hot - afterClaim.hot).toBe(10);
      const { rows } = await client.query(`SELECT state, stage, published_at IS NOT NULL AS confirmed FROM job_outbox WHERE kind = $1`, [kind]);
      expect(rows).toEqual(Array.from({ length: 10 }, () => ({ state: 'PUBLISHED', stage: 'SENT', confirmed: true })));
    } finally {
      client.release();
    }
  });
});

/** Every statement `read` runs, with its parameters (nothing is executed). */
async function statementsOf(read: (sql: Sql) => Promise<unknown>): Promise<{ text: string; params: readonly unknown[] }[]> {
  const seen: { text: string; params: readonly unknown[] }[] = [];
  const recording: Sql = async (text, params = []) => {
    seen.push({ text, params });
    return [{}] as never[];
  };
  await read(recording);
  return seen;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** The nodes of a statement's plan, with sequential scans priced out so that any usable index is taken. */
async function planOf(statement: { text: string; params: readonly unknown[] }): Promise<PlanNode[]> {
  const client = await ctx.db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL enable_seqscan = off');
    const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params as unknown[]);
    return nodesOf((rows[0]['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('each reader of the outbox is served by its partial index', () => {
  const jobId = randomUUID();
  const readers: [string, (sql: Sql) => Promise<unknown>, string[]][] = [
    ['the publisher: claimForPublish', (sql) => claimForPublish(sql, 100), ['job_outbox_pending_index']],
    ["the publisher's timer: nextPendingDueAt", (sql) => nextPendingDueAt(sql), ['job_outbox_pending_index']],
    ['the lease rescuer', (sql) => rescueExpiredLeases(sql, 100), ['job_outbox_processing_index']],
    ['the outbox republisher', (sql) => republishStranded(sql, { olderThanSeconds: 300, limit: 100, backloggedKinds: ['K'], maxWaitSeconds: 900 }), ['job_outbox_in_flight_index']],
    ['the retention cleaner', (sql) => deleteCompletedBatch(sql, { retentionDays: 7, batchSize: 100 }), ['job_outbox_completed_index']],
    ['cancel: lockLiveOutbox and cancelJob', async (sql) => (await lockLiveOutbox(sql, jobId), cancelJob(sql, jobId)), ['job_outbox_live_job_id_unique']],
    ['the health figures', (sql) => messagingFigures(sql), ['job_outbox_pending_index', 'job_outbox_in_flight_index', 'job_outbox_processing_index']],
    ['startup recovery', (sql) => recoverOnStartup(sql, { durableTransport: false }), ['job_outbox_live_job_id_unique', 'job_outbox_in_flight_index']],
  ];
  for (const [name, read, indexes] of readers) {
    it(`${name}: ${indexes.join(', ')}, and no scan of the whole table`, async () => {
      const nodes = (await Promise.all((await statementsOf(read)).map(planOf))).flat();
      const used = new Set(nodes.map((node) => node['Index Name']).filter(Boolean));
      for (const index of indexes) expect(used, `${name} should use ${index}`).toContain(index);
      const seqScans = nodes.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'job_outbox');
      expect(seqScans, `${name} scans job_outbox whole`).toEqual([]);
    });
  }
});
