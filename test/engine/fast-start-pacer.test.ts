/**
 * A worker stops listening for job-ready notifications while it hears more jobs a second
 * than fast start is worth, and listens again after a pause: the rule on its own
 * (FastStartPacer), then FastStartListener on a real PostgreSQL connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolSql } from '../../src/engine/db/sql';
import { FastStartListener } from '../../src/engine/fast-start-listener';
import { FastStartPacer } from '../../src/engine/fast-start-pacer';
import { silentLogger } from '../../src/engine/logger';
import { insertJob } from '../../src/engine/queries/insert-job';
import { insertJobs } from '../../src/engine/queries/insert-jobs';
import { OutboxState, type JobMessage } from '../../src/engine/types';
import { createTestDb, newJobArgs, until } from '../support/engine-harness';

describe('fast start pacer (pure)', () => {
  it('pauses on the job that makes more than the maximum in one second, and not before', () => {
    const pacer = new FastStartPacer(3);
    expect([0, 100, 200].map((t) => pacer.heardJob(t))).toEqual([false, false, false]);
    expect(pacer.heardJob(999)).toBe(true);
  });

  it('counts each second apart: the same jobs spread wider never pause', () => {
    const pacer = new FastStartPacer(3);
    const times = Array.from({ length: 30 }, (_, i) => i * 400);
    expect(times.map((t) => pacer.heardJob(t)).some(Boolean)).toBe(false);
  });

  it('counts afresh after a pause', () => {
    const pacer = new FastStartPacer(2);
    expect([0, 1, 2].map((t) => pacer.heardJob(t))).toEqual([false, false, true]);
    // The next jobs heard (after the pause) start a new second of their own.
    expect([10_500, 10_501].map((t) => pacer.heardJob(t))).toEqual([false, false]);
    expect(pacer.heardJob(10_502)).toBe(true);
  });

  it('0 never pauses', () => {
    const pacer = new FastStartPacer(0);
    expect(Array.from({ length: 10_000 }, () => pacer.heardJob(0)).some(Boolean)).toBe(false);
  });
});

describe('fast start listener', () => {
  let ctx: Awaited<ReturnType<typeof createTestDb>>;
  beforeAll(async () => {
    ctx = await createTestDb('engine_fast_start_pacer');
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('stops listening once it hears more than its maximum in a second, offers nothing meanwhile, and listens again after the pause', async () => {
    const offered: JobMessage[] = [];
    let pauses = 0;
    const listener = new FastStartListener({
      connection: { connectionString: ctx.db.url },
      logger: silentLogger,
      offer: (message) => offered.push(message),
      maxRate: 4,
      // Long beside any stall of a loaded machine between the fifth offer and the checks of the pause below.
      pauseMs: 4_000,
      onPause: () => pauses++,
    });
    await listener.start();
    try {
      const sql = poolSql(ctx.db.pool);
      const notify = async () => {
        const args = newJobArgs('PACED', {});
        await insertJob(sql, args, OutboxState.PUBLISHING);
        return args.jobId;
      };
      // Six in one statement, heard together: the fifth is one more than 4 in a second. It
      // is still offered (it was heard); the sixth is not, nor is anything while the pause lasts.
      const jobs = Array.from({ length: 6 }, (_, i) => newJobArgs('PACED', { i }));
      await insertJobs(sql, jobs, OutboxState.PUBLISHING);
      const burst = jobs.map((j) => j.jobId);
      await until('the fifth job offered', () => offered.length >= 5);
      expect(pauses).toBe(1);
      expect(listener.listening).toBe(false);
      const duringPause = await notify();
      // Any notification a listening connection got would have been offered by now.
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Five of the burst's six, and nothing else.
      expect(offered).toHaveLength(5);
      expect(burst.filter((id) => offered.some((m) => m.jobId === id))).toHaveLength(5);

      // Listening again after the pause: one job every 500 ms (2 a second, under 4) until one is offered.
      const after: string[] = [];
      await until(
        'a job offered after the pause',
        async () => {
          after.push(await notify());
          await new Promise((resolve) => setTimeout(resolve, 500));
          return offered.length > 5;
        },
        30_000,
        0,
      );
      expect(listener.listening).toBe(true);
      expect(after).toContain(offered[5]!.jobId);
      expect(offered.map((m) => m.jobId)).not.toContain(duringPause);
      expect(pauses).toBe(1);
    } finally {
      await listener.stop();
    }
    expect(listener.listening).toBe(false);
  });
});
