import { createRequire } from 'node:module';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const require = createRequire(import.meta.url);

/**
 * Seconds each of the slowest test files took in a full run (2026-12-07, two files at a
 * time on two cores). CI runs on a clean checkout, where vitest has no timings of its
 * own and orders files by size, so a one-minute file could start last and run alone at
 * the end; started first (longest first, the rest after), the two workers finish
 * together. Rough figures are enough: only the order matters.
 */
const SLOW_FILES: Readonly<Record<string, number>> = {
  'test/benchmarks.test.ts': 79,
  'test/engine/process-faults.test.ts': 77,
  'test/engine/fast-start.test.ts': 62,
  'test/engine/chaos.test.ts': 42,
  'test/engine/rabbitmq-transport.test.ts': 32,
  'test/engine/database-restart-resume.test.ts': 31,
  'test/web/timetabling-pages.test.ts': 29,
  'test/engine/delivery-durability.test.ts': 26,
  'test/web/jobs-page.test.ts': 25,
  'test/api/subscription-resync.test.ts': 22,
  'test/api/send-timeout.test.ts': 20,
  'test/engine/last-attempt-kill.test.ts': 16,
  'test/support-selftest/private-rabbit.test.ts': 16,
  'test/embedded-default.test.ts': 15,
  'test/exams/makeup-exam-arrangement.test.ts': 15,
};

/** Runs the known slow files first, longest first; every other file after them, in vitest's own order. */
class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const seconds = (file: TestSpecification) => SLOW_FILES[path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join('/')] ?? 0;
    // Array.prototype.sort is stable: files of equal weight keep vitest's order.
    return [...sorted].sort((a, b) => seconds(b) - seconds(a));
  }
}

export default defineConfig({
  resolve: {
    // One copy of graphql for the whole run, or type-graphql and the tests load two
    // ("Cannot use GraphQLObjectType … from another module or realm").
    alias: { graphql: require.resolve('graphql') },
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    // A worker runs its files one after another in one module graph: the service's
    // modules (MikroORM, Apollo, type-graphql and the rest) load once per worker, not
    // once per file — 160 s of the suite's 600 went to loading them again. So a test file
    // must leave nothing behind: it closes what it opened (servers, engines, pools,
    // sockets, child processes) in afterAll and restores any global it changes
    // (process.env, a prototype, a spy), as the files here do.
    isolate: false,
    sequence: { sequencer: SlowFirstSequencer },
  },
});
