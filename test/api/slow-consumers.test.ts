/**
 * A client that stops reading its socket cannot make the process keep every event for
 * it (WS_MAX_PENDING_EVENTS): one job's progress is conflated to its newest snapshot,
 * and a dashboard too far behind on too many jobs has its socket dropped — while a
 * client that reads the same events keeps its socket and gets every one of them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { JobEngine } from '../../src/engine/engine';
import { asJobId, eventOf, JobEventReason, JobStatus, type JobSnapshot } from '../../src/engine/types';
import { JobKind } from '../../src/job-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { capturingLogger, rawSubscription, startTestApiServer, waitUntil, type TestApiServer } from './support/api-server';

const MAX_PENDING_EVENTS = 100;
/**
 * Events published while a client does not read: with MESSAGE, about 40 MB, far more than
 * the kernel's socket buffers on both sides hold, so most of them wait in the process.
 */
const EVENTS = 2_000;
const MESSAGE = 'x'.repeat(20_000);
/** Generous: seconds of work on an idle machine, with another test file beside it on two cores. */
const DELIVERY_BOUND_MS = 60_000;

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
const log = capturingLogger();

beforeAll(async () => {
  ctx = await createTestDb('api_slow_consumers');
  // No worker: the jobs stay QUEUED, so the only events are those the tests publish.
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations(), roles: { worker: false } });
  await engine.start();
  server = await startTestApiServer({ engine, logger: log.logger, limits: { socket: { maxPendingEvents: MAX_PENDING_EVENTS } } });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

interface Subscriber {
  socket: WebSocket;
  /** The sequences of the events received so far. */
  sequences: number[];
  /** Their job ids, where the subscription asks for them. */
  jobIds: string[];
  closed: Promise<number>;
}

async function subscribe(token: string, query: string, field: 'jobEvents' | 'jobProgress'): Promise<Subscriber> {
  const sequences: number[] = [];
  const jobIds: string[] = [];
  const { socket, closed } = await rawSubscription(server, token, query, (data) => {
    const received = data[field] as { sequence: number; jobId?: string };
    sequences.push(received.sequence);
    if (received.jobId) jobIds.push(received.jobId);
  });
  return { socket, sequences, jobIds, closed };
}

const dashboard = (token: string) => subscribe(token, 'subscription { jobEvents { jobId sequence message } }', 'jobEvents');
const progressOf = (token: string, jobId: string) => subscribe(token, `subscription { jobProgress(jobId: "${jobId}") { sequence message } }`, 'jobProgress');

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const event = (job: JobSnapshot, sequence: number) =>
  eventOf({ ...job, status: JobStatus.RUNNING, sequence, message: `${sequence} ${MESSAGE}`, messageCode: null }, JobEventReason.STEP);
const closedWithin = (subscriber: Subscriber, ms: number) =>
  Promise.race([subscriber.closed, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), ms))]);

describe('a client that does not read its socket (WS_MAX_PENDING_EVENTS)', () => {
  it("gets one job's newest snapshot when it reads again, not every event it missed", async () => {
    const { job } = await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 1 }, requestedBy: 'scheduler-1' });
    const stalled = await progressOf(server.tokens.admin, job.id);
    await waitUntil(() => stalled.sequences.length === 1, 10_000, 'the snapshot'); // the job's current snapshot
    stalled.socket.pause(); // stops reading its TCP socket: the kernel's buffers fill, then events wait in the process
    const last = job.sequence + EVENTS;
    for (let sequence = job.sequence + 1; sequence <= last; sequence++) {
      engine.bus.publish(event(job, sequence));
      if (sequence % 20 === 0) await nextTurn();
    }
    stalled.socket.resume();
    await waitUntil(() => stalled.sequences.at(-1) === last, DELIVERY_BOUND_MS, 'the newest snapshot');

    expect(stalled.sequences.length).toBeLessThan(EVENTS); // the backlog was conflated
    for (let i = 1; i < stalled.sequences.length; i++) expect(stalled.sequences[i]).toBeGreaterThan(stalled.sequences[i - 1]!);
    expect(await closedWithin(stalled, 500)).toBe('still open');
    stalled.socket.close();
    await stalled.closed;
  });

  it('is dropped when its dashboard is too far behind on too many jobs; a dashboard that reads keeps up', async () => {
    const { job } = await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 1 }, requestedBy: 'scheduler-1' });
    const reading = await dashboard(server.tokens.readAllViewer);
    const stalled = await dashboard(server.tokens.admin);
    stalled.socket.pause();
    // Each event of a job of its own, in batches the reading dashboard takes in before the next.
    const published = new Set<string>();
    const readingHas = () => reading.jobIds.filter((id) => published.has(id)).length;
    for (let i = 1; i <= EVENTS; i++) {
      const id = randomUUID();
      published.add(id);
      engine.bus.publish(event({ ...job, id: asJobId(id) }, job.sequence + 1));
      if (i % 20 === 0) await waitUntil(() => readingHas() >= i, DELIVERY_BOUND_MS, 'the reading dashboard catching up');
    }

    stalled.socket.resume();
    expect(await closedWithin(stalled, 10_000)).toBe(1006); // no close frame: it would have waited behind the rest
    expect(stalled.jobIds.filter((id) => published.has(id)).length).toBeLessThan(EVENTS);
    expect(log.lines.some((line) => String(line.msg).includes('socket dropped') && line.maxPending === MAX_PENDING_EVENTS)).toBe(true);

    expect(readingHas()).toBe(EVENTS); // every one, each once
    expect(reading.socket.readyState).toBe(WebSocket.OPEN);
    reading.socket.close();
    await reading.closed;
  });
});
