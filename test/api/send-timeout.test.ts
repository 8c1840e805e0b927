/**
 * HTTP_SEND_TIMEOUT_MS: a connection whose client takes nothing of what waits for it is
 * closed once that long has passed without progress — over HTTP and on a graphql-ws
 * socket — while a client that stops reading for less than that, again and again, keeps
 * its socket however long the whole transfer takes.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { JobEngine } from '../../src/engine/engine';
import { eventOf, JobEventReason, JobStatus, type JobSnapshot } from '../../src/engine/types';
import { JobKind } from '../../src/job-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { rawSubscription, startTestApiServer, waitUntil, type TestApiServer } from './support/api-server';

const SEND_TIMEOUT_MS = 5_000;
/** The stall, plus filling the kernel's buffers first and the once-a-second check, with room for a loaded machine. */
const DROP_BOUND_MS = SEND_TIMEOUT_MS + 15_000;
/** Shorter than the send timeout by more than a loaded machine's timer delays. */
const READER_PAUSE_MS = 1_500;
const MESSAGE = 'x'.repeat(20_000);

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
let port: number;

beforeAll(async () => {
  ctx = await createTestDb('api_send_timeout');
  // No worker: the jobs stay QUEUED, so the only events are those the tests publish.
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations(), roles: { worker: false } });
  await engine.start();
  server = await startTestApiServer({ engine, connections: { sendTimeoutMs: SEND_TIMEOUT_MS } });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

const openConnections = () => new Promise<number>((resolve, reject) => server.http.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a client that takes nothing of what waits for it (HTTP_SEND_TIMEOUT_MS)', () => {
  it('over HTTP: its connection is closed', async () => {
    // Pipelined requests whose answers (the schema's types, tens of KB each) are far more than the kernel's buffers hold.
    const body = JSON.stringify({ query: '{ __schema { types { name description fields { name description type { name } } } } }' });
    const request = `POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const client = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    client.pause(); // reads nothing
    client.on('error', () => undefined); // the reset it meets when it reads again
    const closed = new Promise((resolve) => client.once('close', resolve));
    client.write(request.repeat(150));
    await sleep(1_000);
    expect(await openConnections()).toBe(1); // held while answers wait: the kernel's buffers are full
    const started = Date.now();
    while ((await openConnections()) > 0) {
      if (Date.now() - started > DROP_BOUND_MS) throw new Error(`the connection was not closed within ${DROP_BOUND_MS} ms`);
      await sleep(100);
    }
    client.resume();
    await closed;
  });

  it('on a socket: a client that stops reading is dropped, one that pauses and reads again is not', async () => {
    const { job } = await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 1 }, requestedBy: 'scheduler-1' });
    const stalled = await dashboard(server.tokens.admin);
    const pausing = await dashboard(server.tokens.readAllViewer);
    stalled.socket.pause();
    let publishing = true;
    let sequence = job.sequence;
    // About 4 MB a second of events, until both clients have been tried.
    const publisher = (async () => {
      while (publishing) {
        for (let i = 0; i < 20; i++) engine.bus.publish(event(job, ++sequence));
        await sleep(100);
      }
    })();
    const pauser = (async () => {
      while (publishing) {
        pausing.socket.pause();
        await sleep(READER_PAUSE_MS);
        pausing.socket.resume();
        await sleep(200);
      }
    })();
    try {
      const started = Date.now();
      // The stalled client reads nothing, so only the server knows its socket is gone.
      while ((await openConnections()) > 1) {
        if (Date.now() - started > DROP_BOUND_MS) throw new Error(`the stalled socket was not dropped within ${DROP_BOUND_MS} ms`);
        await sleep(100);
      }
      await sleep(SEND_TIMEOUT_MS); // the pausing client goes on pausing past another whole timeout
    } finally {
      publishing = false;
      await Promise.all([publisher, pauser]);
    }
    pausing.socket.resume();
    const lastSequence = ++sequence;
    engine.bus.publish(event(job, lastSequence));
    await waitUntil(() => pausing.lastSequence() === lastSequence, 10_000, 'the pausing client getting the last event');
    expect(pausing.socket.readyState).toBe(WebSocket.OPEN);
    expect(await openConnections()).toBe(1);
    stalled.socket.resume();
    expect(await stalled.closed).toBe(1006);
    pausing.socket.close();
    await pausing.closed;
  });
});

const event = (job: JobSnapshot, sequence: number) =>
  eventOf({ ...job, status: JobStatus.RUNNING, sequence, message: `${sequence} ${MESSAGE}`, messageCode: null }, JobEventReason.STEP);

interface Dashboard {
  socket: WebSocket;
  lastSequence: () => number;
  closed: Promise<number>;
}

/** A `jobEvents` subscription on a raw socket, keeping the sequence of the last event received. */
async function dashboard(token: string): Promise<Dashboard> {
  let lastSequence = -1;
  const { socket, closed } = await rawSubscription(server, token, 'subscription { jobEvents { jobId sequence message } }', (data) => {
    lastSequence = (data.jobEvents as { sequence: number }).sequence;
  });
  return { socket, lastSequence: () => lastSequence, closed };
}
