/**
 * The benchmarks are deliverables too: they must keep building and running. Each runs
 * here once on a tiny workload, compiled as `npm run bench:*` compiles them (into a
 * folder of its own, so it never races another test's build of dist/). No figure is
 * judged here; speed is judged by running the benchmarks themselves.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HAVE_CTT_DATA } from './scheduling/ctt/datasets';
import { requireRabbit } from './support/services';

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'node_modules', '.cache', 'bench-smoke');
const rabbit = requireRabbit();

function run(bench: string, args: string[], timeoutMs = 120_000): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [path.join(OUT, 'test', 'bench', `${bench}.bench.js`), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

beforeAll(() => {
  const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.bench.json', '--outDir', OUT], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
}, 120_000);

describe('the benchmarks build and run', () => {
  it('bench:engine', () => {
    const { status, output } = run('engine', ['--jobs', '300', '--transports', 'in-memory']);
    expect(status, output).toBe(0);
    expect(output).toMatch(/in-memory\s+drain, 1 kind × 16 consumers\s+\d+ jobs\/s/);
    expect(output).toContain('reproduce: npm run bench:engine -- --jobs 300 --transports in-memory');
  }, 120_000);

  it.runIf(HAVE_CTT_DATA)('bench:ctt', () => {
    const { status, output } = run('ctt', ['1', 'comp01']);
    expect(status, output).toBe(0);
    expect(output).toMatch(/\| comp01 \| 0 \|/);
    expect(output).toContain('all solutions feasible');
  }, 120_000);

  it.runIf(rabbit)('bench:subscriptions', () => {
    const { status, output } = run('subscriptions', ['--clients', '20', '--rate', '50', '--seconds', '2', '--warmup', '0']);
    expect(status, output).toBe(0);
    expect(output).toMatch(/lost \(job subscribers \/ dashboard\)\s+0 \/ 0/);
    expect(output).toMatch(/duplicated \(job subscribers \/ dashboard\)\s+0 \/ 0/);
  }, 120_000);

  // Builds and runs (a private PostgreSQL and RabbitMQ node, two processes, no faults);
  // the faults and the bar are exercised by test/engine/chaos.test.ts.
  it.runIf(rabbit)('bench:chaos', () => {
    const args = ['--jobs', '200', '--subscriptions', '10', '--apis', '1', '--workers', '1', '--kills', '0', '--broker-restarts', '0', '--postgres-restarts', '0'];
    const { status, output } = run('chaos', args, 200_000);
    expect(status, output).toBe(0);
    expect(output).toMatch(/lost \(not finished by the deadline\)\s+0/);
    expect(output).toContain('BAR MET');
    expect(output).toContain(`Reproduce: npm run bench:chaos -- ${args.join(' ')}`);
  }, 210_000);
});
