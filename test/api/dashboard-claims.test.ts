/**
 * The dashboard cap counts in the socket server, not in resolvers: a `jobEvents`
 * subscription reached through a fragment is a dashboard too, and a socket that closes
 * without completing its dashboards gives their places back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { JobKind } from '../../src/job-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { rawSocket, startTestApiServer, waitUntil, type RawSocket, type TestApiServer } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;

beforeAll(async () => {
  ctx = await createTestDb('api_dashboard_claims');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({ engine, limits: { socket: { maxDashboardsPerSubject: 1 } } });
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

type Message = { id?: string; type: string; payload?: unknown };

async function acknowledged(token: string): Promise<RawSocket> {
  const socket = await rawSocket({ wsUrl: server.wsUrl });
  socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
  await waitUntil(() => socket.messages.some((m) => (m as Message).type === 'connection_ack'));
  return socket;
}

/** Subscribes and answers how it went: 'runs' once an event reaches it, else the refusal's code. */
async function outcome(socket: RawSocket, id: string, query: string): Promise<string> {
  socket.send({ id, type: 'subscribe', payload: { query } });
  const answer = () => socket.messages.find((m) => (m as Message).id === id) as Message | undefined;
  // A refusal comes at once; an admitted dashboard answers the next event of any job.
  for (const deadline = Date.now() + 10_000; !answer() && Date.now() < deadline; ) {
    await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 0 }, requestedBy: 'admin-1' });
    await new Promise((r) => setTimeout(r, 200));
  }
  const first = answer();
  if (!first) return 'no answer';
  if (first.type === 'next') return 'runs';
  return ((first.payload as { extensions?: { code?: string } }[])[0]?.extensions?.code ?? first.type) as string;
}

const plain = 'subscription { jobEvents { jobId } }';
const throughFragment = 'subscription Board { ...Board } fragment Board on Subscription { ... on Subscription { jobEvents { jobId sequence } } }';

describe('dashboards counted by the socket server', () => {
  it('counts a jobEvents subscription behind fragments, and a closed socket frees its dashboards', async () => {
    const first = await acknowledged(server.tokens.admin);
    const second = await acknowledged(server.tokens.admin);
    try {
      expect(await outcome(first, 'fragment', throughFragment)).toBe('runs');
      expect(await outcome(second, 'plain-1', plain)).toBe('RATE_LIMITED');
      // A job's progress is not a dashboard: not counted.
      second.send({ id: 'progress', type: 'subscribe', payload: { query: 'subscription { jobProgress(jobId: "00000000-0000-4000-8000-000000000000") { jobId } }' } });
      await waitUntil(() => second.messages.some((m) => (m as Message).id === 'progress'));
      expect(((second.messages.find((m) => (m as Message).id === 'progress') as Message).payload as { errors?: { extensions: { code: string } }[] }).errors?.[0]?.extensions.code).toBe('NOT_FOUND');
      first.socket.close();
      await first.closed;
      expect(await outcome(second, 'plain-2', plain)).toBe('runs');
    } finally {
      first.socket.close();
      second.socket.close();
    }
  });

  it('an id reused while its operation is still being admitted closes the socket (4409), and every operation the socket started ends with it', async () => {
    // Two places per subject: the two operations under one id both get one.
    const roomy = await startTestApiServer({ engine, limits: { socket: { maxDashboardsPerSubject: 2 } } });
    const connect = async () => {
      const socket = await rawSocket({ wsUrl: roomy.wsUrl });
      socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${roomy.tokens.scheduler}` } });
      await waitUntil(() => socket.messages.some((m) => (m as Message).type === 'connection_ack'));
      return socket;
    };
    try {
      const reusing = await connect();
      // Subscribe, complete and subscribe again under one id, in one write: the second
      // subscribe arrives while the first is still being admitted.
      const tcp = (reusing.socket as unknown as { _socket: import('node:net').Socket })._socket;
      tcp.cork();
      reusing.send({ id: 'board', type: 'subscribe', payload: { query: plain } });
      reusing.send({ id: 'board', type: 'complete' });
      reusing.send({ id: 'board', type: 'subscribe', payload: { query: plain } });
      tcp.uncork();
      // The server closes the socket; were both operations let run, events would reach them.
      const running = async () => {
        while (!reusing.messages.some((m) => (m as Message).id === 'board' && (m as Message).type === 'next')) {
          await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 0 }, requestedBy: 'admin-1' });
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      await Promise.race([reusing.closed, running()]);
      reusing.socket.close();
      const { code } = await reusing.closed;
      // Both places are free again: the subject's two dashboards on a new socket run.
      const fresh = await connect();
      try {
        expect(await outcome(fresh, 'one', plain)).toBe('runs');
        expect(await outcome(fresh, 'two', plain)).toBe('runs');
      } finally {
        fresh.socket.close();
      }
      expect(code).toBe(4409);
    } finally {
      await roomy.close();
    }
  });
});
