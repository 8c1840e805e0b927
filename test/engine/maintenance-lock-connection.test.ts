/**
 * The maintenance pass holds its advisory lock on one connection that sits idle while
 * the services work. When the server ends that connection (a restart sends 57P01 to
 * every session), the process must not die of an unhandled 'error' event, the broken
 * connection must not go back to the pool, and the next pass must run.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/engine/logger';
import { MAINTENANCE_LOCK_KEY, MaintenanceScheduler } from '../../src/engine/maintenance/maintenance-scheduler';
import { createTestDb } from '../support/engine-harness';

let ctx: Awaited<ReturnType<typeof createTestDb>>;

beforeAll(async () => {
  ctx = await createTestDb('maintenance_lock_conn');
});
afterAll(async () => {
  await ctx?.close();
});

it('survives the server ending the lock connection mid-pass, and runs the next pass', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  let releaseService: () => void = () => undefined;
  let calls = 0;
  const scheduler = new MaintenanceScheduler({
    pool: ctx.db.pool,
    logger: silentLogger,
    intervalMs: 60_000,
    services: [
      {
        name: 'held',
        runOnce: async () => {
          calls++;
          if (calls === 1) await new Promise<void>((resolve) => (releaseService = resolve));
          return 'ok';
        },
      },
    ],
  });
  try {
    const first = scheduler.runOnce();
    // Wait until the pass holds the lock, then end that session as a server restart would.
    const holder = async () =>
      (
        await ctx.db.pool.query<{ pid: number }>(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND (classid::bigint << 32 | objid::bigint) = $1`,
          [MAINTENANCE_LOCK_KEY],
        )
      ).rows[0]?.pid;
    let pid: number | undefined;
    for (const deadline = Date.now() + 20_000; pid === undefined && Date.now() < deadline; ) {
      pid = await holder();
      if (pid === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(pid, 'the pass took the advisory lock').toBeDefined();
    await ctx.db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await new Promise((r) => setTimeout(r, 300)); // the 'error' event reaches the idle client
    releaseService();
    await first; // the pass ends (its unlock fails on the dead connection) instead of hanging
    expect(uncaught).toEqual([]);

    // The broken connection was destroyed: the next pass takes the lock anew and runs.
    const second = await scheduler.runOnce();
    expect(second).toEqual({ held: 'ok' });
    expect(await holder()).toBeUndefined();
  } finally {
    releaseService();
    process.off('uncaughtException', onUncaught);
    await scheduler.stop();
  }
});
