/**
 * The graphql-ws socket's limits over a real server and real sockets: sockets per
 * address and per subject, operations per socket, the subscribe rate (3,000 made-up
 * job ids do not cost 3,000 reads), messages per socket, and the per-event cost of a
 * subscription.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MESSAGES_BEFORE_ADMISSION, POLICY_VIOLATION, REFUSALS_BEFORE_CLOSE } from '../../src/api/graphql/socket-limits';
import { DEFAULT_LIMITS } from '../../src/config';
import type { JobEngine } from '../../src/engine/engine';
import { JobKind } from '../../src/job-kinds';
import { buildEngine, createTestDb } from '../support/engine-harness';
import { testKindRegistrations } from '../support/test-kinds';
import { JobEventsDocument } from './generated/graphql';
import { collect, rawSocket, startTestApiServer, waitUntil, wsClient, type RawSocket, type TestApiServer } from './support/api-server';
import { withinOneWindow } from './support/one-window';

let ctx: Awaited<ReturnType<typeof createTestDb>>;
let engine: JobEngine;
const servers: TestApiServer[] = [];

beforeAll(async () => {
  ctx = await createTestDb('api_socket_limits');
  engine = buildEngine({ db: ctx.db, registrations: testKindRegistrations() });
  await engine.start();
});
afterAll(async () => {
  for (const server of servers) await server.close();
  await engine?.stop(2_000);
  await ctx?.close();
});

async function serve(options: Parameters<typeof startTestApiServer>[0]): Promise<TestApiServer> {
  const server = await startTestApiServer(options);
  servers.push(server);
  return server;
}

/** A non-loopback IPv4 address of this machine, to connect from "another" client. */
const externalAddress = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

/** Opens a socket and sends connection_init; resolves with the socket once acknowledged or closed. */
async function initialised(url: string, token: string): Promise<RawSocket & { outcome: 'ack' | { code: number; reason: string } }> {
  const socket = await rawSocket({ wsUrl: url });
  socket.send({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } });
  const outcome = await Promise.race([
    socket.closed,
    waitUntil(() => socket.messages.some((m) => (m as { type: string }).type === 'connection_ack')).then(() => 'ack' as const),
  ]);
  return { ...socket, outcome };
}

/** The HTTP answer to a WebSocket upgrade that was refused, or 'open'. */
function upgradeOutcome(url: string): Promise<'open' | { status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    socket.once('open', () => {
      socket.close();
      resolve('open');
    });
    socket.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined });
      res.resume();
    });
    socket.once('error', reject);
  });
}

type Message = { id?: string; type: string; payload?: unknown };
type GraphQLErrors = { message: string; extensions?: { code?: string; retryAfterSeconds?: number } }[];
const errorCode = (m: Message) => (m.payload as GraphQLErrors)[0]?.extensions?.code;

/**
 * Each operation's first answer, by id: refused before execution (an `error` message),
 * or executed (a `next`, whose errors say e.g. NOT_FOUND).
 */
function firstAnswers(messages: unknown[]): Map<string, { code: string; errors: GraphQLErrors }> {
  const answers = new Map<string, { code: string; errors: GraphQLErrors }>();
  for (const m of messages as Message[]) {
    if (!m.id || answers.has(m.id) || (m.type !== 'error' && m.type !== 'next')) continue;
    const errors = (m.type === 'error' ? m.payload : (m.payload as { errors?: GraphQLErrors }).errors ?? []) as GraphQLErrors;
    answers.set(m.id, { code: errors[0]?.extensions?.code ?? 'ok', errors });
  }
  return answers;
}

describe('sockets per address', () => {
  it('answers an upgrade beyond the cap with 429 and Retry-After; another address and a freed place get in', async () => {
    const server = await serve({ engine, host: '0.0.0.0', limits: { socket: { maxConnectionsPerAddress: 3 } } });
    const open = [await initialised(server.wsUrl, server.tokens.viewer), await initialised(server.wsUrl, server.tokens.admin), await initialised(server.wsUrl, server.tokens.scheduler)];
    expect(open.map((s) => s.outcome)).toEqual(['ack', 'ack', 'ack']);
    const refused = await upgradeOutcome(server.wsUrl);
    expect(refused).toEqual({ status: 429, retryAfter: expect.stringMatching(/^\d+$/) });
    if (externalAddress) {
      // The same server reached from this machine's other address: a different client.
      expect(await upgradeOutcome(server.wsUrl.replace('127.0.0.1', externalAddress))).toBe('open');
    }
    open[0]!.socket.close();
    await open[0]!.closed;
    let outcome: Awaited<ReturnType<typeof upgradeOutcome>> = refused;
    for (const deadline = Date.now() + 5_000; outcome !== 'open' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      outcome = await upgradeOutcome(server.wsUrl);
    }
    expect(outcome).toBe('open');
    for (const s of open) s.socket.close();
  });
});

describe('new sockets per address', () => {
  it('answers upgrades beyond the rate of new sockets with 429 and Retry-After, before any handshake; another address gets in', async () => {
    const server = await serve({ engine, host: '0.0.0.0', limits: { socket: { connectsPerSecond: 1, connectBurst: 1 } } });
    const outcomes: Awaited<ReturnType<typeof upgradeOutcome>>[] = [];
    for (let i = 0; i < 10; i++) outcomes.push(await upgradeOutcome(server.wsUrl));
    // One from the burst, one per second of the steady rate: ten upgrades in a row take
    // well under three seconds, so at most five get in whatever the machine's load.
    const refused = outcomes.filter((o) => o !== 'open');
    expect(outcomes[0]).toBe('open');
    expect(refused.length).toBeGreaterThanOrEqual(5);
    for (const o of refused) expect(o).toEqual({ status: 429, retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
    if (externalAddress) expect(await upgradeOutcome(server.wsUrl.replace('127.0.0.1', externalAddress))).toBe('open');
  });
});

describe('sockets per subject', () => {
  it('closes a socket beyond its subject’s cap with 1013 Try Again Later; other subjects and a freed place get in', async () => {
    const server = await serve({ engine, limits: { socket: { maxConnectionsPerSubject: 2 } } });
    const first = await initialised(server.wsUrl, server.tokens.viewer);
    const second = await initialised(server.wsUrl, server.tokens.viewer);
    const third = await initialised(server.wsUrl, server.tokens.viewer);
    expect([first.outcome, second.outcome]).toEqual(['ack', 'ack']);
    expect(third.outcome).toEqual({ code: 1013, reason: expect.stringMatching(/Try Again Later/) });
    expect((await initialised(server.wsUrl, server.tokens.otherViewer)).outcome).toBe('ack');
    first.socket.close();
    await first.closed;
    let again = await initialised(server.wsUrl, server.tokens.viewer);
    for (const deadline = Date.now() + 5_000; again.outcome !== 'ack' && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
      again = await initialised(server.wsUrl, server.tokens.viewer);
    }
    expect(again.outcome).toBe('ack');
    second.socket.close();
    again.socket.close();
  });
});

describe('operations per socket and the subscribe rate', () => {
  it('refuses an operation beyond the socket’s cap with RATE_LIMITED; completing one makes room', async () => {
    const server = await serve({ engine, limits: { socket: { maxSubscriptionsPerSocket: 3 } } });
    const client = wsClient(server, server.tokens.admin);
    try {
      const open = [0, 1, 2].map(() => collect(client, JobEventsDocument, {}));
      const fourth = collect(client, JobEventsDocument, {});
      const error = (await fourth.done.then(() => null, (e: unknown) => e)) as { message: string; extensions: { code: string } }[];
      expect(error[0]!.extensions.code).toBe('RATE_LIMITED');
      expect(error[0]!.message).toMatch(/3 operations open/);
      open[0]!.stop();
      // The server learns of the completion asynchronously: try until one is admitted
      // (a jobEvents stream never ends by itself, so "still open after 300 ms" is admitted).
      const admitted = async () => {
        const next = collect(client, JobEventsDocument, {});
        return (await Promise.race([next.done.then(() => 'ended', () => 'refused'), new Promise((r) => setTimeout(() => r('open'), 300))])) === 'open';
      };
      let ok = await admitted();
      for (const deadline = Date.now() + 5_000; !ok && Date.now() < deadline; ) ok = await admitted();
      expect(ok).toBe(true);
    } finally {
      await client.dispose();
    }
  });

  it('3,000 jobProgress subscribes on made-up ids cost at most the rate allowance in reads; the socket is closed once it ignored 100 refusals, and its subject waits (default limits)', async () => {
    const server = await serve({ engine });
    let reads = 0;
    const getJob = engine.getJob.bind(engine);
    engine.getJob = async (id) => {
      reads++;
      return getJob(id);
    };
    try {
      const socket = await initialised(server.wsUrl, server.tokens.viewer);
      expect(socket.outcome).toBe('ack');
      const started = Date.now();
      const query = 'subscription ($id: ID!) { jobProgress(jobId: $id) { sequence status } }';
      let closedBy: { code: number; reason: string } | null = null;
      void socket.closed.then((c) => (closedBy = c));
      // In batches of 100, each answered (or the socket closed) before the next.
      const batch = 100;
      for (let sent = 0; sent < 3_000 && !closedBy; sent += batch) {
        for (let i = sent; i < sent + batch; i++) socket.send({ id: `s${i}`, type: 'subscribe', payload: { query, variables: { id: randomUUID() } } });
        await waitUntil(() => closedBy !== null || firstAnswers(socket.messages).size === sent + batch, 30_000, `answers to subscribes ${sent}…${sent + batch - 1}`);
      }
      expect(closedBy).toMatchObject({ code: POLICY_VIOLATION, reason: expect.stringMatching(/more than 100 subscribes refused/) });
      const elapsedSeconds = (Date.now() - started) / 1000;
      const codes = [...firstAnswers(socket.messages).values()].map((a) => a.code);
      const notFound = codes.filter((c) => c === 'NOT_FOUND').length;
      const limited = codes.filter((c) => c === 'RATE_LIMITED').length;
      expect(notFound + limited).toBe(codes.length);
      // Answered until the flood had ignored REFUSALS_BEFORE_CLOSE refusals (and the rest of that batch); no more.
      expect(limited).toBeGreaterThanOrEqual(REFUSALS_BEFORE_CLOSE);
      expect(limited).toBeLessThanOrEqual(REFUSALS_BEFORE_CLOSE + batch);
      // Reads of admitted subscribes whose NOT_FOUND the close overtook are counted too.
      expect(reads).toBeGreaterThanOrEqual(notFound);
      // Within the subject's allowance: the burst plus the steady rate over the windows the flood spanned.
      const { subscribeBurst, subscribePerSecond } = DEFAULT_LIMITS.socket;
      expect(reads).toBeLessThanOrEqual(subscribeBurst + subscribePerSecond * (Math.ceil(elapsedSeconds) + 1));
      expect(reads).toBeGreaterThan(0);
      // The flooding subject's next socket is closed at connection_init, asked to wait; another subject's is not.
      const again = await initialised(server.wsUrl, server.tokens.viewer);
      expect(again.outcome).toMatchObject({ code: 1013, reason: expect.stringMatching(/kept subscribing after being refused; wait \d+ s/) });
      const other = await initialised(server.wsUrl, server.tokens.otherViewer);
      expect(other.outcome).toBe('ack');
      other.socket.close();
    } finally {
      engine.getJob = getJob;
    }
  });

  it('limits subscribe messages per subject across its sockets, with retryAfterSeconds', async () => {
    const server = await serve({ engine, limits: { socket: { subscribePerSecond: 2, subscribeBurst: 3 } } });
    const sockets = [await initialised(server.wsUrl, server.tokens.viewer), await initialised(server.wsUrl, server.tokens.viewer)];
    const query = 'subscription ($id: ID!) { jobProgress(jobId: $id) { sequence } }';
    const started = Date.now();
    // One at a time, alternating sockets: the allowance is the subject's, not the socket's.
    for (let i = 0; i < 20; i++) {
      const socket = sockets[i % 2]!;
      socket.send({ id: `r${i}`, type: 'subscribe', payload: { query, variables: { id: randomUUID() } } });
      await waitUntil(() => firstAnswers(socket.messages).has(`r${i}`));
    }
    const elapsedSeconds = (Date.now() - started) / 1000;
    const answers = sockets.flatMap((s) => [...firstAnswers(s.messages).values()]);
    const limited = answers.filter((a) => a.code === 'RATE_LIMITED');
    expect(answers).toHaveLength(20);
    expect(answers.filter((a) => a.code === 'NOT_FOUND')).toHaveLength(20 - limited.length);
    expect(20 - limited.length).toBeLessThanOrEqual(3 + 2 * (Math.ceil(elapsedSeconds) + 1));
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.errors[0]!.extensions!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    for (const s of sockets) s.socket.close();
  });

  it('a subscribe refused by the document checks spends RATE_LIMIT_REFUSAL_COST of the subject’s allowance, an accepted one 1', async () => {
    // 3 a second, no burst; a refusal spends all 3: within one second the refused
    // subject's next subscribe is RATE_LIMITED, another subject's are not.
    const server = await serve({ engine, limits: { socket: { subscribePerSecond: 3, subscribeBurst: 0 }, refusalCost: 3 } });
    const progress = 'subscription ($id: ID!) { jobProgress(jobId: $id) { sequence } }';
    const answer = async (socket: Awaited<ReturnType<typeof initialised>>, id: string, payload: Record<string, unknown>) => {
      socket.send({ id, type: 'subscribe', payload });
      await waitUntil(() => firstAnswers(socket.messages).has(id));
      return firstAnswers(socket.messages).get(id)!.code;
    };
    const pairs = [
      [server.tokens.viewer, server.tokens.admin],
      [server.tokens.otherViewer, server.tokens.readAllViewer],
    ] as const;
    const codes = await withinOneWindow(pairs, async ([refusedToken, acceptedToken]) => {
      const refused = await initialised(server.wsUrl, refusedToken);
      const accepted = await initialised(server.wsUrl, acceptedToken);
      try {
        return [
          await answer(refused, 'bad', { query: 'subscription { noSuchField }' }),
          await answer(refused, 'after', { query: progress, variables: { id: randomUUID() } }),
          await answer(accepted, 'one', { query: progress, variables: { id: randomUUID() } }),
          await answer(accepted, 'two', { query: progress, variables: { id: randomUUID() } }),
        ];
      } finally {
        refused.socket.close();
        accepted.socket.close();
      }
    });
    expect(codes).toEqual(['GRAPHQL_VALIDATION_FAILED', 'RATE_LIMITED', 'NOT_FOUND', 'NOT_FOUND']);
  });
});

describe('messages per socket', () => {
  const limits = { socket: { messagesPerSecond: 10, messageBurst: 20 } };
  const pongs = (socket: RawSocket) => socket.messages.filter((m) => (m as Message).type === 'pong').length;

  it('closes a socket sending messages beyond the rate (1008) and answers none of what it sends after; one within the rate stays open', async () => {
    const server = await serve({ engine, limits });
    const flood = await initialised(server.wsUrl, server.tokens.viewer);
    expect(flood.outcome).toBe('ack');
    // 200,000 of these were each answered with a pong before.
    for (let i = 0; i < 1_000; i++) flood.send({ type: 'ping' });
    const closed = await flood.closed;
    expect(closed).toEqual({ code: POLICY_VIOLATION, reason: 'Policy Violation: more than 10 messages a second (20 at once)' });
    // connection_init took one of the burst; a few more may have refilled meanwhile.
    expect(pongs(flood)).toBeLessThanOrEqual(limits.socket.messageBurst + 5);
    // Its subject's next socket is closed at connection_init, asked to wait, as a subscribe flood's is.
    const again = await initialised(server.wsUrl, server.tokens.viewer);
    expect(again.outcome).toMatchObject({ code: 1013, reason: expect.stringMatching(/wait \d+ s/) });

    const calm = await initialised(server.wsUrl, server.tokens.otherViewer);
    expect(calm.outcome).toBe('ack');
    for (let i = 0; i < 15; i++) calm.send({ type: 'ping' });
    await waitUntil(() => pongs(calm) === 15, 10_000, '15 pongs');
    expect(calm.socket.readyState).toBe(WebSocket.OPEN);
    calm.socket.close();
  });

  it(`closes a socket sending more than ${MESSAGES_BEFORE_ADMISSION} messages before its connection_init is accepted`, async () => {
    const server = await serve({ engine });
    const anonymous = await rawSocket({ wsUrl: server.wsUrl });
    for (let i = 0; i < 100; i++) anonymous.send({ type: 'ping' });
    expect(await anonymous.closed).toEqual({ code: POLICY_VIOLATION, reason: `Policy Violation: more than ${MESSAGES_BEFORE_ADMISSION} messages before connection_ack` });
    expect(pongs(anonymous)).toBeLessThanOrEqual(MESSAGES_BEFORE_ADMISSION);
  });

  it('counts WebSocket ping frames too', async () => {
    const server = await serve({ engine, limits });
    const flood = await initialised(server.wsUrl, server.tokens.viewer);
    expect(flood.outcome).toBe('ack');
    for (let i = 0; i < 1_000; i++) flood.socket.ping();
    expect((await flood.closed).code).toBe(POLICY_VIOLATION);
  });
});

describe('dashboards per subject', () => {
  it('refuses a jobEvents subscription beyond the subject’s cap across its sockets with RATE_LIMITED; ending one makes room; other subjects are not counted', async () => {
    const server = await serve({ engine, limits: { socket: { maxDashboardsPerSubject: 2 } } });
    const first = wsClient(server, server.tokens.admin);
    const second = wsClient(server, server.tokens.admin);
    const other = wsClient(server, server.tokens.viewer);
    /** 'open' when the subscription still runs after 500 ms (a jobEvents stream never ends by itself), else the code it ended with. */
    const outcome = async (client: typeof first) => {
      const sub = collect(client, JobEventsDocument, {});
      const ended = await Promise.race([
        sub.done.then(
          () => (sub.results[0]?.errors?.[0] as { extensions?: { code?: string } } | undefined)?.extensions?.code ?? 'ended',
          (e: unknown) => (e as { extensions: { code: string } }[])[0]?.extensions.code ?? 'error',
        ),
        new Promise<'open'>((r) => setTimeout(() => r('open'), 500)),
      ]);
      return { ended, sub };
    };
    try {
      const a = await outcome(first);
      const b = await outcome(second);
      expect([a.ended, b.ended]).toEqual(['open', 'open']);
      expect((await outcome(first)).ended).toBe('RATE_LIMITED');
      expect((await outcome(other)).ended).toBe('open');
      a.sub.stop();
      let again = 'RATE_LIMITED';
      for (const deadline = Date.now() + 5_000; again !== 'open' && Date.now() < deadline; ) again = (await outcome(second)).ended;
      expect(again).toBe('open');
    } finally {
      await Promise.all([first.dispose(), second.dispose(), other.dispose()]);
    }
  });
});

describe('the cost of a subscription per event', () => {
  it('refuses at subscribe time a selection beyond the per-event budget (QUERY_TOO_COMPLEX); a dashboard-sized one runs', async () => {
    const server = await serve({ engine, limits: { socket: { maxEventCost: 5 } } });
    const socket = await initialised(server.wsUrl, server.tokens.admin);
    const timetable = `subscription { jobEvents { jobId job { id ... on AutomaticScheduleJob {
      plan { id solutionText evaluation { penalty conflicts } assignments { day period course { code } room { code } } term { code } } } } } }`;
    socket.send({ id: 'costly', type: 'subscribe', payload: { query: timetable } });
    socket.send({ id: 'cheap', type: 'subscribe', payload: { query: 'subscription { jobEvents { jobId status progress job { id status } } }' } });
    await waitUntil(() => socket.messages.some((m) => (m as Message).id === 'costly'));
    const refusal = socket.messages.find((m) => (m as Message).id === 'costly') as Message;
    expect(refusal.type).toBe('error');
    expect(errorCode(refusal)).toBe('QUERY_TOO_COMPLEX');
    expect((refusal.payload as { message: string }[])[0]!.message).toMatch(/per event/);
    // The cheap one is running: an event reaches it.
    await new Promise((r) => setTimeout(r, 100));
    expect(socket.messages.some((m) => (m as Message).id === 'cheap')).toBe(false);
    await engine.enqueue({ kind: JobKind.SCHEDULE_PUBLISH, input: { steps: 0 }, requestedBy: 'admin-1' });
    await waitUntil(() => socket.messages.some((m) => (m as Message).id === 'cheap' && (m as Message).type === 'next'));
    socket.socket.close();
  });
});
