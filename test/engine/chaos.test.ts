/**
 * The chaos benchmark in small (test/bench/support/chaos-run.ts; `npm run bench:chaos`
 * is the full run, `npm run bench:chaos -- --small` this one): a private PostgreSQL and RabbitMQ node, 2 API and 3 worker
 * processes of the real service, a few hundred jobs of the three chaos kinds, and one
 * of each fault while they drain — a worker killed with SIGKILL, a broker restart, a
 * database restart — with jobProgress subscriptions open across both API processes.
 *
 * The bar: no job lost, stuck or completed twice, no final status changed afterwards,
 * and every subscription ended with its job's final status.
 *
 * Bounds: short leases and maintenance passes, so the slowest legitimate recovery (a
 * killed worker's lease running out, a maintenance pass, a republish, a retry back-off)
 * takes ~35 s; a job is lost only after nothing has finished for `drainQuietSeconds`
 * (~60 s) past the last fault. A typical run takes about a minute.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { smallChaosOptions } from '../bench/support/chaos-options';
import { Cleanup, runChaos } from '../bench/support/chaos-run';
import { requireRabbit } from '../support/services';
import { transpiledServiceEntry } from '../support/transpiled-service';

const rabbit = requireRabbit();
const cleanup = new Cleanup();
const lines: string[] = [];
const log = (line: string) => lines.push(`${new Date().toISOString().slice(11, 23)} ${line}`);

afterAll(() => cleanup.run(log), 120_000);

describe.runIf(rabbit)('chaos: one worker kill, one broker restart, one PostgreSQL restart', () => {
  it('loses, strands and doubles no job, and every subscription ends with its job’s final status', async () => {
    // Five processes and a replacement: transpile the service once, not in each of them.
    const serviceEntry = transpiledServiceEntry();
    const { verdict, report, data } = await runChaos(smallChaosOptions(), { log, cleanup, serviceEntry });
    const explain = `${report}\n--- run log ---\n${lines.join('\n')}`;
    expect(verdict.faultsDone, explain).toEqual({ 'worker kill': 1, 'broker restart': 1, 'PostgreSQL restart': 1 });
    // Each fault hit jobs in flight, or it proved nothing.
    expect(data.faults.map((f) => f.unfinishedJobs ?? 0).filter((n) => n === 0), explain).toEqual([]);
    expect(verdict.failures, explain).toEqual([]);
    expect(verdict.lost).toBe(0);
    expect(verdict.doubled).toBe(0);
    expect(verdict.stuck).toBe(0);
    expect(verdict.subscriptionFailures).toBe(0);
  }, 300_000);
});
