import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { PUBLISH_RETRY_MS } from '../../src/engine/publisher';
import { InMemoryTransport } from '../../src/engine/transport/in-memory-transport';
import { PublishRefusedError, type ConnectionState } from '../../src/engine/transport/transport';
import { JobStatus, type JobMessage } from '../../src/engine/types';
import { buildEngine, createTestDb, outboxRows, waitForJob } from '../support/engine-harness';
import { countSql } from '../support/sql-counter';

/**
 * An enqueue in a process whose publisher runs writes the outbox row PUBLISHING and
 * hands it to that publisher at once: the message leaves without a publisher pass (no
 * claim of PENDING rows), which is what takes a round trip off a job's start.
 */

/** The in-memory broker, refusing the next `refusals` publishes as a broker refuses an unroutable message. */
class RefusingTransport extends InMemoryTransport {
  refusals = 0;
  /** As a broker connection that dropped: not connected, every publish fails. */
  away = false;
  publishCalls = 0;
  readonly published: JobMessage[] = [];
  override connectionState(): ConnectionState {
    return this.away ? 'disconnected' : super.connectionState();
  }
  override async publish(messages: readonly JobMessage[]): Promise<void> {
    this.publishCalls++;
    if (this.away) throw new Error('broker connection lost');
    if (this.refusals > 0) {
      this.refusals--;
      throw new PublishRefusedError('refused for the test', messages.map((m) => m.outboxId));
    }
    this.published.push(...messages);
    return super.publish(messages);
  }
}

const CLAIM_FOR_PUBLISH = "UPDATE job_outbox o SET state = 'PUBLISHING'";

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
const transport = new RefusingTransport();
const started: string[] = [];

/** Until the process sends no statement for `quietMs` (the publisher's first pass is over). */
async function quiet(quietMs = 300): Promise<void> {
  for (;;) {
    const { count } = await countSql(() => new Promise((resolve) => setTimeout(resolve, quietMs)));
    if (count.statements === 0) return;
  }
}

beforeAll(async () => {
  ctx = await createTestDb('reserved_publish');
  engine = buildEngine({
    db: ctx.db,
    transport,
    // A pass runs only when woken: one that ran during an enqueue would be this change's doing.
    settings: { publisherPollMs: 600_000 },
    registrations: [{ kind: 'PLAIN', defaults: { consumers: 2 }, processor: async ({ job }) => void started.push(job.id) }],
  });
  await engine.start();
  await quiet();
});
afterAll(async () => {
  await engine.stop(2_000);
  await ctx.close();
});

describe('enqueue in a process that publishes', () => {
  it('writes the outbox row PUBLISHING and sends it with no publisher pass; the job runs and the row completes', async () => {
    const { result, count } = await countSql(async () => {
      const { job } = await engine.enqueue({ kind: 'PLAIN', input: { n: 1 } });
      return waitForJob(engine, job.id);
    });
    expect(result.status).toBe(JobStatus.SUCCEEDED);
    expect(started).toContain(result.id);
    expect(transport.published.map((m) => m.jobId)).toContain(result.id);
    const insert = count.texts.find((t) => t.startsWith('WITH req'));
    expect(insert).toBeDefined();
    expect(count.texts.filter((t) => t.startsWith(CLAIM_FOR_PUBLISH))).toEqual([]);
    expect((await outboxRows(ctx.db.pool, result.id)).map((r) => r.state)).toEqual(['COMPLETED']);
  });

  it('a refused publish puts the row back to PENDING, and a publisher pass sends it again', async () => {
    transport.refusals = 1;
    const enqueuedAt = Date.now();
    const { job } = await engine.enqueue({ kind: 'PLAIN', input: { n: 2 } });
    const done = await waitForJob(engine, job.id);
    expect(done.status).toBe(JobStatus.SUCCEEDED);
    expect(transport.refusals).toBe(0);
    // Sent once, by the pass that the refusal woke, once the row fell due again.
    expect(transport.published.filter((m) => m.jobId === job.id)).toHaveLength(1);
    expect(Date.now() - enqueuedAt).toBeGreaterThanOrEqual(PUBLISH_RETRY_MS - 100);
    expect((await outboxRows(ctx.db.pool, job.id)).map((r) => r.state)).toEqual(['COMPLETED']);
  });

  it('while the broker is away, an enqueue writes a PENDING row and tries no send of its own; a publisher pass sends it once the broker is back', async () => {
    // Each statement text is prepared under a name of its own: the insert that writes
    // PUBLISHING rows is named apart from the one that writes PENDING rows.
    const insertName = (count: { texts: string[]; names: (string | null)[] }) => count.names[count.texts.findIndex((t) => t.startsWith('WITH req'))];
    const connected = await countSql(() => engine.enqueue({ kind: 'PLAIN', input: { n: 30 } }));
    await waitForJob(engine, connected.result.job.id);
    transport.away = true;
    let jobId: string;
    try {
      const callsBefore = transport.publishCalls;
      const { result, count } = await countSql(() => engine.enqueue({ kind: 'PLAIN', input: { n: 3 } }));
      jobId = result.job.id;
      expect(insertName(count)).toBeTruthy();
      expect(insertName(count)).not.toBe(insertName(connected.count));
      // At most the pass the enqueue woke tried (and failed, and backs off); no send per enqueue.
      expect(transport.publishCalls - callsBefore).toBeLessThanOrEqual(1);
    } finally {
      transport.away = false;
    }
    expect((await waitForJob(engine, jobId)).status).toBe(JobStatus.SUCCEEDED);
    expect(transport.published.filter((m) => m.jobId === jobId)).toHaveLength(1);
  });

  it('a burst of enqueues is sent as each insert commits, every job exactly once', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, n) => engine.enqueue({ kind: 'PLAIN', input: { burst: n } })));
    const jobs = await Promise.all(results.map((r) => waitForJob(engine, r.job.id)));
    expect(jobs.every((j) => j.status === JobStatus.SUCCEEDED)).toBe(true);
    for (const r of results) expect(transport.published.filter((m) => m.jobId === r.job.id)).toHaveLength(1);
  });

  it('a row sent this way and still in the queue is marked PUBLISHED (at the latest when the publisher stops)', async () => {
    const queueOnly = new RefusingTransport();
    const publisherOnly = buildEngine({
      db: ctx.db,
      transport: queueOnly,
      settings: { publisherPollMs: 600_000 },
      roles: { worker: false },
      registrations: [{ kind: 'QUEUED_ONLY', defaults: { consumers: 1 }, processor: async () => undefined }],
    });
    await publisherOnly.start();
    const results = await Promise.all([1, 2, 3].map((n) => publisherOnly.enqueue({ kind: 'QUEUED_ONLY', input: { n } })));
    await publisherOnly.stop(1_000);
    expect(queueOnly.published.map((m) => m.jobId).sort()).toEqual(results.map((r) => r.job.id).sort());
    for (const r of results) expect((await outboxRows(ctx.db.pool, r.job.id)).map((row) => row.state)).toEqual(['PUBLISHED']);
  });
});
