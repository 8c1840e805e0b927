/**
 * The hostile-load benchmark's attacks: the worst operations an anonymous client or a
 * viewer can send, each a loop ("lane") that sends one operation, waits for its answer
 * (or its timeout) and paces itself to the configured rate, until the deadline. Every
 * text differs (a comment with a counter), so no document cache can answer a repeat.
 * Every lane connects from a loopback address of its attack, so per-address limits
 * tell the attackers from the honest client (127.0.0.2).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { SignJWT } from 'jose';
import { Authenticator } from '../../../src/api/auth/authenticator';
import { ApiRole, READ_ALL_JOBS_GRANT } from '../../../src/api/auth/viewer';
import { getUrl, GqlSocket, postGraphQL, SlowRequest, type HeldConnection, type Outcome } from './hostile-net';
import type { AttackSettings } from './hostile-protocol';

export interface Lane {
  index: number;
  /** The attack's loopback address. */
  address: string;
  agent: http.Agent;
  /** Waits for the lane's next turn; false once the deadline has passed. */
  pace(): Promise<boolean>;
  record(outcome: Outcome): void;
  /** Connections the lane holds; closed when the attack ends. */
  hold(connection: HeldConnection): void;
}

export interface Tokens {
  viewer: string;
  /** A viewer granted every job's events (a department dashboard). */
  readAllViewer: string;
  /** A viewer of a subject of its own, whose sockets the message flood opens. */
  flooder: string;
  variants: { name: string; authorization: string; connectionParams: Record<string, unknown> }[];
  /** A viewer token that expires in about `seconds`. */
  expiring(seconds: number): Promise<string>;
}

export interface AttackContext {
  settings: AttackSettings;
  tokens: Tokens;
  graphqlUrl: string;
  wsUrl: string;
}

export interface Attack {
  name: string;
  who: string;
  what: string;
  lanes: (settings: AttackSettings) => number;
  run(lane: Lane, context: AttackContext): Promise<void>;
}

/** Health requests the health flood sends at once each turn. */
const HEALTH_FLOOD_BATCH = 50;

let counter = 0;
/** A comment that makes each document's text unique. */
const nonce = () => `# ${++counter} ${randomUUID()}`;

/** F(i) spreads F(i+1) twice: a naive depth walk visits 2^n paths. About 1 KB at n = 24. */
export function fragmentBomb(n: number): string {
  const fragments = Array.from({ length: n }, (_, i) => `fragment F${i} on Query { __typename ${i + 1 < n ? `...F${i + 1} ...F${i + 1}` : ''} }`);
  return `query Bomb { ...F0 } ${fragments.join(' ')} ${nonce()}`;
}

const aliased = (count: number, selection: string) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: ${selection}`).join(' ')} } ${nonce()}`;

/** Every course with its teacher and every teacher of every term, ten times over. */
export const aliasLists = () => aliased(10, 'terms { courses { code name students teacher { code name } } teachers { code name } rooms { code } }');
/** Every plan's evaluation (conflicts in words), its solution text and its assignments, ten times over. */
export const aliasPlans = () =>
  aliased(10, 'terms { plans { evaluation { hardViolations penalty feasible conflicts } solutionText assignments { day period room { code } course { code } } } }');
/** 40 levels of term → plans → term … */
export function tooDeep(levels = 40): string {
  let body = 'id';
  for (let i = 0; i < levels; i++) body = i % 2 === 0 ? `term { ${body} }` : `plans { ${body} }`;
  return `{ terms { plans { ${body} } } } ${nonce()}`;
}
/** Ten levels, every list on the way: within the depth limit, multiplied by the data. */
export const deepAtLimit = () => `{ terms { plans { term { plans { term { plans { term { courses { teacher { code } } } } } } } } } } ${nonce()}`;
/** The largest page, each job with its plan's assignments and term: well over the cost limit. */
export const costlyPage = () =>
  `{ jobs(first: 200) { edges { node { id ... on AutomaticScheduleJob { plan { assignments { room { code } course { code } } term { code } } } } } } } ${nonce()}`;
/** A cursor of the service's own shape whose timestamp no database accepts. */
export const BAD_CURSOR = Buffer.from(JSON.stringify(['j1', '2026-13-45T99:99:99.000000Z', '00000000-0000-4000-8000-000000000000'])).toString('base64url');
/** Many tokens within the body limit (over the anonymous one): 20,000 aliases of __typename (~380 KB). */
export const aliasFlood = () => aliased(20_000, '__typename');

const EXPIRING_TOKEN_SECONDS = 5;
/** How often a slow request sends one more header byte: often enough to defeat an idle timeout, never finishing. */
const SLOW_TRICKLE_MS = 2_000;
/** Messages the message flood sends at once on its socket each turn: twice what a socket may send at once by default. */
const MESSAGE_FLOOD_BATCH = 1_000;
/** How long the message flood waits after a batch for its socket to be closed before it counts the batch answered. */
const MESSAGE_FLOOD_WAIT_MS = 1_000;
const EXPIRY_GRACE_MS = 3_000;
const DASHBOARD = 'subscription { jobEvents { jobId kind status currentStep progress message sequence occurredAt job { id status attempts requestedBy createdAt } } }';

const body = (query: string, variables?: Record<string, unknown>) => JSON.stringify(variables ? { query, variables } : { query });

/** Tokens of caller set `callers` (AttackSettings.callers): its subjects are its own. */
export async function mintTokens(jwt: AttackSettings['jwt'], callers: number): Promise<Tokens> {
  const subject = (name: string) => (callers === 0 ? name : `${name}-${callers}`);
  const good = new Authenticator({ secret: jwt.secret, issuer: jwt.issuer, audience: jwt.audience });
  const wrongKey = new Authenticator({ secret: `${jwt.secret}-not-this-one`, issuer: jwt.issuer, audience: jwt.audience });
  const wrongAudience = new Authenticator({ secret: jwt.secret, issuer: jwt.issuer, audience: 'some-other-service' });
  const claims = { sub: subject('bench-attacker'), roles: [ApiRole.VIEWER] };
  const now = Math.floor(Date.now() / 1000);
  const key = new TextEncoder().encode(jwt.secret);
  const noExp = await new SignJWT({ roles: claims.roles }).setProtectedHeader({ alg: 'HS256' }).setSubject(claims.sub).setIssuedAt().setIssuer(jwt.issuer).setAudience(jwt.audience).sign(key);
  const raw: [string, string][] = [
    ['malformed', 'not-a.jwt'],
    ['wrong key', await wrongKey.sign(claims, '1h')],
    ['expired', await good.sign(claims, now - 3600)],
    ['wrong audience', await wrongAudience.sign(claims, '1h')],
    ['no exp', noExp],
    ['10-year', await good.sign(claims, '3650d')],
  ];
  return {
    viewer: await good.sign(claims, '2h'),
    readAllViewer: await good.sign({ sub: subject('bench-attacker-dashboard'), roles: [ApiRole.VIEWER], scope: READ_ALL_JOBS_GRANT }, '2h'),
    // Its own subject, as the expiring token's below: the socket flood fills the viewer's sockets per subject.
    flooder: await good.sign({ ...claims, sub: subject('bench-attacker-messages') }, '2h'),
    variants: [
      ...raw.map(([name, token]) => ({ name, authorization: `Bearer ${token}`, connectionParams: { authorization: `Bearer ${token}` } })),
      { name: 'not Bearer', authorization: 'Basic YWRtaW46YWRtaW4=', connectionParams: { authorization: 'Basic YWRtaW46YWRtaW4=' } },
    ],
    // A subject of its own: sharing the socket flood's would see its sockets refused by
    // the flood's connections per subject (1013) and test the expiry only now and then.
    expiring: (seconds) => good.sign({ ...claims, sub: subject('bench-attacker-expiring') }, Math.floor(Date.now() / 1000) + seconds),
  };
}

const post = (lane: Lane, context: AttackContext, payload: string | Buffer, token?: string, authorization?: string) =>
  postGraphQL(context.graphqlUrl, payload, { token, authorization, localAddress: lane.address, timeoutMs: context.settings.timeoutMs, agent: lane.agent });

/** One socket per lane, opened again whenever it was closed; null when it cannot be opened. */
async function laneSocket(lane: Lane, context: AttackContext, current: GqlSocket | null, token: string): Promise<GqlSocket | { refused: Outcome }> {
  if (current?.open) return current;
  const socket = new GqlSocket(context.wsUrl, lane.address, { authorization: `Bearer ${token}` }, context.settings.timeoutMs);
  lane.hold(socket);
  const opened = await socket.opened;
  return opened.verdict === 'accepted' ? socket : { refused: opened };
}

/**
 * The lane's socket (`state.socket` while open, else a new one), or null once the refusal
 * of a new one is recorded (and `state.socket` cleared). The caller keeps the socket in `state`.
 */
async function openLaneSocket(lane: Lane, context: AttackContext, state: { socket: GqlSocket | null }, token: string): Promise<GqlSocket | null> {
  const socket = await laneSocket(lane, context, state.socket, token);
  if (!('refused' in socket)) return socket;
  state.socket = null;
  lane.record({ ...socket.refused, label: `connect: ${socket.refused.label}` });
  return null;
}

/** Sends one document over a lane's socket (as a subscribe) and records its first answer. */
async function overSocket(lane: Lane, context: AttackContext, state: { socket: GqlSocket | null }, token: string, query: string): Promise<void> {
  const socket = await openLaneSocket(lane, context, state, token);
  if (!socket) return;
  state.socket = socket;
  lane.record(await socket.subscribe({ query }, context.settings.timeoutMs).answer);
}

export const ATTACKS: Attack[] = [
  {
    name: 'fragment-bomb',
    who: 'anonymous, HTTP',
    what: 'fragments F(i) spreading F(i+1) twice (--bomb-fragments), no token',
    lanes: () => 1,
    async run(lane, context) {
      while (await lane.pace()) lane.record(await post(lane, context, body(fragmentBomb(context.settings.bombFragments))));
    },
  },
  {
    name: 'fragment-bomb-ws',
    who: 'viewer, socket',
    what: 'the same bomb as a graphql-ws subscribe',
    lanes: () => 1,
    async run(lane, context) {
      const state = { socket: null as GqlSocket | null };
      while (await lane.pace()) await overSocket(lane, context, state, context.tokens.viewer, fragmentBomb(context.settings.bombFragments));
    },
  },
  {
    name: 'alias-lists',
    who: 'viewer, HTTP',
    what: '10 aliases of terms { courses { teacher } teachers rooms }',
    lanes: () => 2,
    async run(lane, context) {
      while (await lane.pace()) lane.record(await post(lane, context, body(aliasLists()), context.tokens.viewer));
    },
  },
  {
    name: 'alias-plans',
    who: 'viewer, HTTP',
    what: '10 aliases of terms { plans { evaluation { conflicts } solutionText assignments } }',
    lanes: () => 1,
    async run(lane, context) {
      while (await lane.pace()) lane.record(await post(lane, context, body(aliasPlans()), context.tokens.viewer));
    },
  },
  {
    name: 'deep-nesting',
    who: 'viewer, HTTP',
    what: '40 levels deep, and 10 levels of lists (at the depth limit), in turn',
    lanes: () => 1,
    async run(lane, context) {
      let turn = 0;
      while (await lane.pace()) lane.record(await post(lane, context, body(turn++ % 2 === 0 ? tooDeep() : deepAtLimit()), context.tokens.viewer));
    },
  },
  {
    name: 'costly-page',
    who: 'viewer, HTTP',
    what: 'a 200-job page with each job\'s plan, assignments and term: over the cost limit',
    lanes: () => 1,
    async run(lane, context) {
      while (await lane.pace()) lane.record(await post(lane, context, body(costlyPage()), context.tokens.viewer));
    },
  },
  {
    name: 'bad-cursor',
    who: 'viewer, HTTP',
    what: 'a jobs page after a well-formed cursor holding an impossible timestamp',
    lanes: () => 1,
    async run(lane, context) {
      while (await lane.pace()) lane.record(await post(lane, context, body(`query ($after: String) { jobs(first: 5, after: $after) { edges { cursor } } } ${nonce()}`, { after: BAD_CURSOR }), context.tokens.viewer));
    },
  },
  {
    name: 'alias-flood',
    who: 'anonymous, HTTP',
    what: '20,000 aliases of __typename (~380 KB, within the body limit, over the anonymous one)',
    lanes: () => 1,
    async run(lane, context) {
      while (await lane.pace()) lane.record(await post(lane, context, body(aliasFlood())));
    },
  },
  {
    name: 'oversized',
    who: 'anonymous, HTTP and socket',
    what: 'a body twice the body limit; a frame twice the frame limit (in turn)',
    lanes: () => 1,
    async run(lane, context) {
      const { maxBodyBytes, maxWsPayloadBytes, timeoutMs } = context.settings;
      let turn = 0;
      while (await lane.pace()) {
        if (turn++ % 2 === 0) {
          lane.record(await post(lane, context, body('{ __typename }', { padding: 'x'.repeat(maxBodyBytes * 2) })));
        } else {
          const socket = new GqlSocket(context.wsUrl, lane.address, { padding: 'x'.repeat(maxWsPayloadBytes * 2) }, timeoutMs);
          lane.hold(socket);
          lane.record(await socket.opened);
          await socket.close();
        }
      }
    },
  },
  {
    name: 'bad-tokens',
    who: 'bad tokens, HTTP and socket',
    what: 'malformed, wrong key, expired, wrong audience, no exp, 10-year, not Bearer (in turn)',
    lanes: () => 1,
    async run(lane, context) {
      const query = body(`{ jobs(first: 5) { edges { node { id status } } } } ${nonce()}`);
      let turn = 0;
      while (await lane.pace()) {
        const variant = context.tokens.variants[Math.floor(turn / 2) % context.tokens.variants.length]!;
        if (turn++ % 2 === 0) {
          const outcome = await post(lane, context, query, undefined, variant.authorization);
          lane.record({ ...outcome, label: `${variant.name}: ${outcome.label}` });
        } else {
          const socket = new GqlSocket(context.wsUrl, lane.address, variant.connectionParams, context.settings.timeoutMs);
          lane.hold(socket);
          const outcome = await socket.opened;
          lane.record({ ...outcome, label: `${variant.name}: ${outcome.label}` });
          await socket.close();
        }
      }
    },
  },
  {
    name: 'expiring-token',
    who: 'viewer, socket',
    what: `a token valid ${EXPIRING_TOKEN_SECONDS} s, a jobEvents subscription held past its expiry`,
    lanes: () => 1,
    async run(lane, context) {
      while (await lane.pace()) {
        const expiresAtMs = (Math.floor(Date.now() / 1000) + EXPIRING_TOKEN_SECONDS) * 1000;
        const token = await context.tokens.expiring(EXPIRING_TOKEN_SECONDS);
        const socket = new GqlSocket(context.wsUrl, lane.address, { authorization: `Bearer ${token}` }, context.settings.timeoutMs);
        lane.hold(socket);
        const opened = await socket.opened;
        if (opened.verdict !== 'accepted') {
          lane.record({ ...opened, label: `connect: ${opened.label}` });
          continue;
        }
        socket.subscribe({ query: 'subscription { jobEvents { jobId sequence } }' }, 60_000);
        // Closed by EXPIRY_GRACE_MS past the expiry (refused), or still open then (accepted).
        const started = performance.now();
        const waitMs = Math.max(0, expiresAtMs + EXPIRY_GRACE_MS - Date.now());
        const closedBy = await socket.closedWithin(waitMs);
        lane.record(
          closedBy === null
            ? { label: `still open ${EXPIRY_GRACE_MS / 1000} s past expiry`, verdict: 'accepted', ms: performance.now() - started }
            : { label: `closed ${closedBy} ${Date.now() >= expiresAtMs ? 'after' : 'BEFORE'} expiry`, verdict: 'refused', ms: performance.now() - started, detail: socket.closeReason },
        );
        await socket.close();
      }
    },
  },
  {
    name: 'socket-flood',
    who: 'anonymous and viewer, sockets',
    what: 'up to --flood-sockets open: silent, init without token, and viewers holding theirs (in turn), 10 more per turn',
    lanes: () => 1,
    async run(lane, context) {
      const open = new Set<GqlSocket>();
      const answers: Promise<void>[] = [];
      let turn = 0;
      while (await lane.pace()) {
        // A batch per turn, not waiting for the answers: a flood opens sockets faster than one at a time.
        const batch = Math.min(10, context.settings.floodSockets - open.size);
        for (let i = 0; i < batch; i++) {
          const kind = turn++ % 3;
          const params = kind === 0 ? null : kind === 1 ? {} : { authorization: `Bearer ${context.tokens.viewer}` };
          const socket = new GqlSocket(context.wsUrl, lane.address, params, context.settings.timeoutMs);
          lane.hold(socket);
          open.add(socket);
          void socket.closed.then(() => open.delete(socket));
          answers.push(socket.opened.then((outcome) => lane.record({ ...outcome, label: `${['silent', 'init without token', 'viewer'][kind]}: ${outcome.label}` })));
        }
      }
      await Promise.all(answers);
    },
  },
  {
    name: 'message-flood',
    who: 'viewer, socket',
    what: `${MESSAGE_FLOOD_BATCH} graphql-ws pings at once on one socket each turn (each was answered with a pong)`,
    lanes: () => 1,
    async run(lane, context) {
      const state = { socket: null as GqlSocket | null };
      while (await lane.pace()) {
        const socket = await openLaneSocket(lane, context, state, context.tokens.flooder);
        if (!socket) continue;
        state.socket = socket;
        const started = performance.now();
        for (let i = 0; i < MESSAGE_FLOOD_BATCH; i++) socket.send('{"type":"ping"}');
        const closedBy = await socket.closedWithin(MESSAGE_FLOOD_WAIT_MS);
        const ms = performance.now() - started;
        lane.record(
          closedBy === null
            ? { label: `socket still open ${MESSAGE_FLOOD_WAIT_MS / 1000} s after the batch`, verdict: 'accepted', ms }
            : { label: `close ${closedBy}`, verdict: closedBy === 1006 ? 'failed' : 'refused', ms, detail: socket.closeReason },
        );
      }
    },
  },
  {
    name: 'health-flood',
    who: 'anonymous, HTTP',
    what: `${HEALTH_FLOOD_BATCH} GETs of /health/ready and /health/messaging at once per turn (public: they answer anyone)`,
    lanes: () => 1,
    async run(lane, context) {
      const base = context.graphqlUrl.replace(/\/graphql$/, '');
      // A connection per request of a batch, kept: the batch is in flight at once.
      const agent = new http.Agent({ keepAlive: true, maxSockets: HEALTH_FLOOD_BATCH });
      let turn = 0;
      try {
        while (await lane.pace()) {
          const batch = Array.from({ length: HEALTH_FLOOD_BATCH }, () =>
            getUrl(`${base}/health/${turn++ % 2 ? 'ready' : 'messaging'}`, { localAddress: lane.address, timeoutMs: context.settings.timeoutMs, agent }),
          );
          for (const outcome of await Promise.all(batch)) lane.record(outcome);
        }
      } finally {
        agent.destroy();
      }
    },
  },
  {
    name: 'slow-headers',
    who: 'anonymous, TCP',
    what: `up to --flood-sockets connections sending half a request's headers, then a byte every ${SLOW_TRICKLE_MS / 1000} s (slowloris), 10 more per turn`,
    lanes: () => 1,
    async run(lane, context) {
      const open = new Set<SlowRequest>();
      const answers: Promise<void>[] = [];
      while (await lane.pace()) {
        const batch = Math.min(10, context.settings.floodSockets - open.size);
        for (let i = 0; i < batch; i++) {
          const request = new SlowRequest(context.graphqlUrl, lane.address, SLOW_TRICKLE_MS);
          lane.hold(request);
          open.add(request);
          answers.push(
            request.ended.then((outcome) => {
              open.delete(request);
              lane.record(outcome);
            }),
          );
        }
      }
      // Those the server still holds (within its headers timeout) end with the attack.
      await Promise.all([...open].map((request) => request.close()));
      await Promise.all(answers);
    },
  },
  {
    name: 'subscription-flood',
    who: 'viewer (all jobs granted), socket',
    what: 'up to --flood-subscriptions per socket: jobEvents held, jobProgress on made-up ids (in turn)',
    lanes: () => 2,
    async run(lane, context) {
      const state = { socket: null as GqlSocket | null };
      let held = 0;
      let turn = 0;
      while (await lane.pace()) {
        const socket = await openLaneSocket(lane, context, state, context.tokens.readAllViewer);
        if (!socket) continue;
        if (socket !== state.socket) held = 0;
        state.socket = socket;
        // A batch per turn: subscribes are cheap to send and the flood is the point.
        const batch = Array.from({ length: 10 }, async () => {
          if (turn++ % 2 === 0 && held < context.settings.floodSubscriptions) {
            held++;
            const outcome = await socket.subscribe({ query: DASHBOARD }, 5_000).answer;
            if (outcome.verdict !== 'accepted') held--;
            return { ...outcome, label: `jobEvents: ${outcome.label}` };
          }
          const outcome = await socket.subscribe({ query: 'subscription ($id: ID!) { jobProgress(jobId: $id) { jobId status sequence } }', variables: { id: randomUUID() } }, 5_000).answer;
          return { ...outcome, label: `jobProgress, made-up id: ${outcome.label}` };
        });
        for (const outcome of await Promise.all(batch)) lane.record(outcome);
      }
    },
  },
];
