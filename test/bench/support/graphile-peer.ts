/**
 * The peer in the engine benchmark: graphile-worker 0.17.3 (a PostgreSQL-only job queue)
 * on the same database, measured with the same jobs, consumers and clients as the
 * engine — once with its defaults and once batched, as its performance guide
 * suggests (`localQueue` fetches many jobs per query; completions and failures that
 * meet within `completeJobBatchDelay`/`failJobBatchDelay` share one statement).
 */
import pg from 'pg';
import { Logger, makeWorkerUtils, run, runMigrations, type Runner, type RunnerOptions, type Task, type WorkerUtils } from 'graphile-worker';
import { cpuSample, cpuSpent, type CpuSplit } from './cpu-split';
import { walMark } from './wal';

export type GraphileMode = 'default' | 'batched';

const silent = new Logger(() => () => undefined);

/** The batched ("perf") settings: 0.17's batching knobs, prepared statements on. */
function presetOf(mode: GraphileMode): RunnerOptions['preset'] {
  if (mode === 'default') return { worker: { preparedStatements: true } };
  return {
    worker: {
      preparedStatements: true,
      localQueue: { size: 500 },
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  };
}

export async function prepareGraphile(connectionString: string): Promise<void> {
  await runMigrations({ connectionString, logger: silent });
}

/**
 * A pool this module owns and ends: the benchmark drops its database with FORCE at the
 * end, and a connection graphile-worker left open must not crash the process then.
 */
function ownPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

async function startRunner(connectionString: string, mode: GraphileMode, concurrency: number, tasks: Record<string, Task>): Promise<{ runner: Runner; stop(): Promise<void> }> {
  // Its own default pool size (10): what its users run.
  const pgPool = ownPool(connectionString, 10);
  const runner = await run({
    pgPool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 2_000,
    logger: silent,
    taskList: tasks,
    preset: presetOf(mode),
  });
  return {
    runner,
    stop: async () => {
      await runner.stop();
      await pgPool.end();
    },
  };
}

async function withUtils<T>(connectionString: string, poolSize: number, work: (utils: WorkerUtils) => Promise<T>): Promise<T> {
  const pgPool = ownPool(connectionString, poolSize);
  const utils = await makeWorkerUtils({ pgPool, logger: silent });
  try {
    return await work(utils);
  } finally {
    await utils.release();
    await pgPool.end();
  }
}

async function clear(utils: WorkerUtils): Promise<void> {
  await utils.withPgClient((client) => client.query('TRUNCATE graphile_worker._private_jobs CASCADE'));
}

async function remaining(utils: WorkerUtils): Promise<number> {
  return utils.withPgClient(async (client) => (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM graphile_worker._private_jobs')).rows[0]!.n);
}

/** No-op jobs/s draining `jobs` queued jobs spread over `kinds` task names, `concurrency` at a time. */
export async function graphileDrain(
  connectionString: string,
  mode: GraphileMode,
  jobs: number,
  kinds: readonly string[],
  concurrency: number,
): Promise<{ rate: number; cpu: CpuSplit; seconds: number; walBytes: number }> {
  return withUtils(connectionString, 4, async (utils) => {
    await clear(utils);
    for (let start = 0; start < jobs; start += 1_000) {
      const specs = [];
      for (let i = start; i < Math.min(jobs, start + 1_000); i++) specs.push({ identifier: kinds[i % kinds.length]!, payload: { i } });
      await utils.addJobs(specs);
    }
    let ran = 0;
    let resolveAll!: () => void;
    const all = new Promise<void>((resolve) => (resolveAll = resolve));
    const noop: Task = async () => {
      if (++ran === jobs) resolveAll();
    };
    const wal = await walMark((text) => utils.withPgClient((client) => client.query(text)));
    const cpu0 = cpuSample();
    const started = performance.now();
    const runner = await startRunner(connectionString, mode, concurrency, Object.fromEntries(kinds.map((k) => [k, noop])));
    await all;
    // Done means deleted: batched completions commit after the task returns.
    while ((await remaining(utils)) > 0) await new Promise((r) => setTimeout(r, 5));
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSpent(cpu0, cpuSample());
    const walBytes = await wal();
    await runner.stop();
    return { rate: jobs / seconds, cpu, seconds, walBytes };
  });
}

/** `addJob`s/s from `clients` concurrent clients (each its own transaction), with a worker running. */
export async function graphileEnqueue(connectionString: string, seconds: number, clients: number, kinds: readonly string[]): Promise<number> {
  return withUtils(connectionString, clients, async (utils) => {
    await clear(utils);
    const noop: Task = async () => undefined;
    const runner = await startRunner(connectionString, 'default', 16, Object.fromEntries(kinds.map((k) => [k, noop])));
    const deadline = Date.now() + seconds * 1000;
    let done = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        while (Date.now() < deadline) {
          await utils.addJob(kinds[client % kinds.length]!, { client });
          done++;
        }
      }),
    );
    const rate = done / ((performance.now() - started) / 1000);
    await runner.stop();
    return rate;
  });
}

/** `addJob` commit → task start (ms), one job at a time on an idle worker; the first `warmup` are not counted. */
export async function graphileLatency(connectionString: string, mode: GraphileMode, samples: number, warmup: number): Promise<number[]> {
  return withUtils(connectionString, 2, async (utils) => {
    await clear(utils);
    const startedAt = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    const task: Task = async (payload) => {
      const key = String((payload as { i: number }).i);
      startedAt.set(key, performance.now());
      waiting.get(key)?.();
    };
    const runner = await startRunner(connectionString, mode, 16, { latency: task });
    const result: number[] = [];
    for (let i = 0; i < samples + warmup; i++) {
      const key = String(i);
      const run = new Promise<void>((resolve) => waiting.set(key, resolve));
      await utils.addJob('latency', { i });
      const committedAt = performance.now();
      if (!startedAt.has(key)) await run;
      if (i >= warmup) result.push(startedAt.get(key)! - committedAt);
      await new Promise((r) => setTimeout(r, 10));
    }
    await runner.stop();
    return result;
  });
}
