/**
 * A real service process for fault and multi-process tests: the service's own
 * `startApp`, plus stand-ins for the kinds in JIAOWU_TEST_KINDS and one test kind, TEST_SLEEP, whose effect is a row in `test_effects` written in the same
 * transaction as the job's completion — so "ran to completion" is countable.
 * With JIAOWU_CHAOS_KINDS=1 the chaos stand-ins (chaos-kinds.ts) run in place of the
 * service's own kinds.
 * Started by `spawnService()` (spawn-service.ts); prints `READY <url>` when it serves.
 */
import 'reflect-metadata';
import { startApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/engine/logger';
import type { KindRegistration } from '../../src/engine/registry';
import { assertChaosKinds, CHAOS_KINDS_ENV, chaosKindsFor } from './chaos-kinds';
import { TEST_KINDS_ENV, testKindRegistrations } from './test-kinds';

export const TEST_SLEEP_KIND = 'TEST_SLEEP';

export interface TestSleepInput {
  ms: number;
}

const testSleep: KindRegistration<TestSleepInput, { pid: number }> = {
  kind: TEST_SLEEP_KIND,
  defaults: { consumers: Number(process.env.TEST_SLEEP_CONSUMERS ?? 4) },
  processor: async ({ job, input, progress, signal, completeWithin }) => {
    progress.step(`running in pid ${process.pid}`);
    const until = Date.now() + input.ms;
    while (Date.now() < until) {
      if (signal.aborted) throw signal.reason;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return completeWithin(async (em) => {
      await em
        .getConnection()
        .execute('INSERT INTO test_effects (job_id, pid) VALUES (?, ?)', [job.id, process.pid], 'run', em.getTransactionContext());
      return { pid: process.pid };
    });
  },
};

async function main(): Promise<void> {
  // The test or benchmark that started us died without stopping us (stdin is its pipe):
  // no orphans, not even while still starting.
  process.stdin.on('end', () => process.exit(1));
  process.stdin.resume();
  const config = loadConfig();
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn', format: 'json' });
  // Stand-ins for the kinds named in JIAOWU_TEST_KINDS: each takes the place of the service's own processor of that kind.
  const standIns = new Set((process.env[TEST_KINDS_ENV] ?? '').split(',').filter(Boolean));
  const chaos = process.env[CHAOS_KINDS_ENV] === '1';
  const extraKinds: KindRegistration<any, any>[] = chaos
    ? chaosKindsFor((kind) => config.engine.kinds[kind].consumers)
    : [testSleep, ...testKindRegistrations().filter((r) => standIns.has(r.kind))];
  const app = await startApp(config, logger, { extraKinds });
  if (chaos) assertChaosKinds(app.engine.registry);
  process.stdout.write(`READY ${app.http.url}\n`);
  const stop = () => {
    app.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`service process failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
