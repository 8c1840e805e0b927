import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEngine } from '../../src/engine/engine';
import { JobKind } from '../../src/job-kinds';
import { testKindRegistrations } from '../support/test-kinds';
import { buildEngine, createTestDb, waitForJob } from '../support/engine-harness';
import {
  CancelJobDocument,
  JobDocument,
  JobEventsDocument,
  JobProgressDocument,
  JobsDocument,
  MessagingHealthDocument,
  RetryJobDocument,
} from './generated/graphql';
import { collect, gql, rawSocket, startTestApiServer, TEST_JWT, waitUntil, wsClient, type TestApiServer } from './support/api-server';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
let server: TestApiServer;
let viewerJobId: string;
let otherJobId: string;

const key = new TextEncoder().encode(TEST_JWT.secret);
async function token(claims: Record<string, unknown>, options: { exp?: number | string; aud?: string; iss?: string; secret?: Uint8Array } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('someone')
    .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
    .setIssuer(options.iss ?? TEST_JWT.issuer)
    .setAudience(options.aud ?? TEST_JWT.audience)
    .setExpirationTime(options.exp ?? '1h')
    .sign(options.secret ?? key);
}

let badTokens: Record<string, string>;

beforeAll(async () => {
  ctx = await createTestDb('api_auth');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
  server = await startTestApiServer({ engine });
  viewerJobId = (await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 0 }, requestedBy: 'viewer-1' })).job.id;
  otherJobId = (await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 0 }, requestedBy: 'viewer-2' })).job.id;
  await waitForJob(engine, viewerJobId);
  await waitForJob(engine, otherJobId);
  badTokens = {
    expired: await token({ roles: ['admin'] }, { exp: Math.floor(Date.now() / 1000) - 60 }),
    'wrong signature': await token({ roles: ['admin'] }, { secret: new TextEncoder().encode('another-secret-of-thirty-two-bytes!!') }),
    'wrong audience': await token({ roles: ['admin'] }, { aud: 'someone-else' }),
    'wrong issuer': await token({ roles: ['admin'] }, { iss: 'someone-else' }),
    garbage: 'not.a.jwt',
  };
});
afterAll(async () => {
  await server?.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

type Outcome = 'ok' | 'UNAUTHENTICATED' | 'FORBIDDEN' | 'NOT_FOUND' | 'null' | 'own-only';

async function httpOutcome(operation: string, tokenValue: string | null): Promise<{ outcome: Outcome | string; status: number }> {
  const fresh = async () => {
    const { job } = await engine.enqueue({ kind: JobKind.MAKEUP_EXAM_AUTO, input: { steps: 0, fail: 'on purpose' }, requestedBy: 'viewer-1' });
    await waitForJob(engine, job.id);
    return job.id;
  };
  let result;
  switch (operation) {
    case 'job(own)':
      result = await gql(server, JobDocument, { id: viewerJobId }, tokenValue);
      if (!result.body.errors) return { outcome: result.body.data!.job ? 'ok' : 'null', status: result.status };
      break;
    case 'job(other)':
      result = await gql(server, JobDocument, { id: otherJobId }, tokenValue);
      if (!result.body.errors) return { outcome: result.body.data!.job ? 'ok' : 'null', status: result.status };
      break;
    case 'jobs':
      result = await gql(server, JobsDocument, { first: 100 }, tokenValue);
      if (!result.body.errors) {
        const owners = new Set(result.body.data!.jobs.edges.map((e) => e.node.requestedBy));
        return { outcome: owners.size === 1 && owners.has('viewer-1') ? 'own-only' : 'ok', status: result.status };
      }
      break;
    case 'messagingHealth':
      result = await gql(server, MessagingHealthDocument, {}, tokenValue);
      break;
    case 'retryJob':
      result = await gql(server, RetryJobDocument, { id: await fresh() }, tokenValue);
      break;
    case 'cancelJob': {
      const id = await fresh();
      result = await gql(server, RetryJobDocument, { id }, server.tokens.admin);
      result = await gql(server, CancelJobDocument, { id }, tokenValue);
      if (result.body.errors?.[0]?.extensions?.code === 'CONFLICT') return { outcome: 'ok', status: result.status }; // it already finished
      break;
    }
    default:
      throw new Error(operation);
  }
  return { outcome: result.body.errors ? String(result.body.errors[0]!.extensions!.code) : 'ok', status: result.status };
}

const HTTP_OPERATIONS = ['job(own)', 'job(other)', 'jobs', 'messagingHealth', 'cancelJob', 'retryJob'] as const;
const EXPECTED: Record<string, Record<(typeof HTTP_OPERATIONS)[number], Outcome>> = {
  admin: { 'job(own)': 'ok', 'job(other)': 'ok', jobs: 'ok', messagingHealth: 'ok', cancelJob: 'ok', retryJob: 'ok' },
  scheduler: { 'job(own)': 'ok', 'job(other)': 'ok', jobs: 'ok', messagingHealth: 'ok', cancelJob: 'ok', retryJob: 'ok' },
  viewer: { 'job(own)': 'ok', 'job(other)': 'null', jobs: 'own-only', messagingHealth: 'ok', cancelJob: 'FORBIDDEN', retryJob: 'FORBIDDEN' },
  readAllViewer: { 'job(own)': 'ok', 'job(other)': 'ok', jobs: 'ok', messagingHealth: 'ok', cancelJob: 'FORBIDDEN', retryJob: 'FORBIDDEN' },
  none: { 'job(own)': 'UNAUTHENTICATED', 'job(other)': 'UNAUTHENTICATED', jobs: 'UNAUTHENTICATED', messagingHealth: 'UNAUTHENTICATED', cancelJob: 'UNAUTHENTICATED', retryJob: 'UNAUTHENTICATED' },
};

describe('auth over HTTP', () => {
  it('applies each role to each operation', async () => {
    const tokens: Record<string, string | null> = {
      admin: server.tokens.admin,
      scheduler: server.tokens.scheduler,
      viewer: server.tokens.viewer,
      readAllViewer: server.tokens.readAllViewer,
      none: null,
    };
    const actual: Record<string, Record<string, string>> = {};
    for (const [role, value] of Object.entries(tokens)) {
      actual[role] = {};
      for (const operation of HTTP_OPERATIONS) actual[role]![operation] = (await httpOutcome(operation, value)).outcome;
    }
    expect(actual).toEqual(EXPECTED);
  });

  it('refuses expired, wrongly signed, wrong-audience, wrong-issuer and malformed tokens with 401 UNAUTHENTICATED on every operation', async () => {
    for (const [what, bad] of Object.entries(badTokens)) {
      for (const operation of HTTP_OPERATIONS) {
        const { outcome, status } = await httpOutcome(operation, bad);
        expect({ what, operation, outcome, status }).toEqual({ what, operation, outcome: 'UNAUTHENTICATED', status: 401 });
      }
    }
  });

  it('refuses a valid token that grants no known role with 403 FORBIDDEN', async () => {
    const noRole = await token({ roles: ['janitor'] });
    const result = await gql(server, MessagingHealthDocument, {}, noRole);
    expect(result.status).toBe(403);
    expect(result.body.errors![0]!.extensions!.code).toBe('FORBIDDEN');
  });
});

async function closeCodeFor(payload: unknown): Promise<number> {
  const socket = await rawSocket(server);
  socket.send({ type: 'connection_init', payload });
  return (await socket.closed).code;
}

describe('auth over graphql-ws', () => {
  it('closes the socket with 4401 for a missing or bad token and 4403 for a token without a role', async () => {
    expect(await closeCodeFor(undefined)).toBe(4401);
    expect(await closeCodeFor({})).toBe(4401);
    for (const bad of Object.values(badTokens)) {
      expect(await closeCodeFor({ authorization: `Bearer ${bad}` })).toBe(4401);
      expect(await closeCodeFor({ token: bad })).toBe(4401);
    }
    expect(await closeCodeFor({ authorization: `Bearer ${await token({ roles: ['janitor'] })}` })).toBe(4403);
  });

  it('acknowledges a good token given as authorization or token', async () => {
    for (const payload of [{ authorization: `Bearer ${server.tokens.viewer}` }, { token: server.tokens.viewer }]) {
      const socket = await rawSocket(server);
      socket.send({ type: 'connection_init', payload });
      await waitUntil(() => socket.messages.length > 0);
      expect(socket.messages[0]).toEqual({ type: 'connection_ack' });
      socket.socket.close();
    }
  });

  it('authorises each operation when it starts: roles, and a viewer sees only its own jobs', async () => {
    const outcomes: Record<string, Record<string, string>> = {};
    for (const role of ['admin', 'scheduler', 'viewer', 'readAllViewer'] as const) {
      const client = wsClient(server, server.tokens[role]);
      const row: Record<string, string> = {};
      try {
        for (const [name, id] of [
          ['jobProgress(own)', viewerJobId],
          ['jobProgress(other)', otherJobId],
        ] as const) {
          const sub = collect(client, JobProgressDocument, { jobId: id });
          await sub.done;
          row[name] = sub.results[0]!.errors ? String(sub.results[0]!.errors[0]!.extensions!.code) : 'ok';
        }
        const events = collect(client, JobEventsDocument, {});
        await new Promise((r) => setTimeout(r, 100));
        const mine = await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 0 }, requestedBy: 'viewer-1' });
        const theirs = await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 0 }, requestedBy: 'viewer-2' });
        await waitForJob(engine, mine.job.id);
        await waitForJob(engine, theirs.job.id);
        await waitUntil(() => events.results.some((r) => r.data?.jobEvents.jobId === mine.job.id && r.data.jobEvents.status === 'SUCCEEDED'));
        await new Promise((r) => setTimeout(r, 100));
        row.jobEvents = events.results.some((r) => r.data?.jobEvents.jobId === theirs.job.id) ? 'all' : 'own-only';
        events.stop();
        const cancel = collect(client, CancelJobDocument, { id: otherJobId });
        await cancel.done;
        row['cancelJob(ended)'] = String(cancel.results[0]!.errors?.[0]?.extensions?.code ?? 'ok');
      } finally {
        await client.dispose();
      }
      outcomes[role] = row;
    }
    expect(outcomes).toEqual({
      admin: { 'jobProgress(own)': 'ok', 'jobProgress(other)': 'ok', jobEvents: 'all', 'cancelJob(ended)': 'CONFLICT' },
      scheduler: { 'jobProgress(own)': 'ok', 'jobProgress(other)': 'ok', jobEvents: 'all', 'cancelJob(ended)': 'CONFLICT' },
      viewer: { 'jobProgress(own)': 'ok', 'jobProgress(other)': 'NOT_FOUND', jobEvents: 'own-only', 'cancelJob(ended)': 'FORBIDDEN' },
      readAllViewer: { 'jobProgress(own)': 'ok', 'jobProgress(other)': 'ok', jobEvents: 'all', 'cancelJob(ended)': 'FORBIDDEN' },
    });
  });

  it('refuses operations on a connection whose token has since expired', async () => {
    const shortLived = await new SignJWT({ roles: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('admin-2')
      .setIssuer(TEST_JWT.issuer)
      .setAudience(TEST_JWT.audience)
      .setExpirationTime(Math.floor(Date.now() / 1000) + 2)
      .sign(key);
    const client = wsClient(server, shortLived);
    try {
      const first = collect(client, JobProgressDocument, { jobId: viewerJobId });
      await first.done;
      expect(first.results[0]!.errors).toBeUndefined();
      await new Promise((r) => setTimeout(r, 2_500));
      const later = collect(client, JobProgressDocument, { jobId: viewerJobId });
      await expect(later.done).rejects.toBeTruthy();
    } finally {
      await client.dispose();
    }
  });
});
