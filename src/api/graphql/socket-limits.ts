import type { IncomingMessage } from 'node:http';
import { getOperationAST, Kind, OperationTypeNode, type DocumentNode, type FragmentDefinitionNode, type GraphQLError, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import { CloseCode } from 'graphql-ws';
import type WebSocket from 'ws';
import type { VerifyClientCallbackAsync, WebSocketServer } from 'ws';
import type { Config } from '../../config';
import type { Viewer } from '../auth/viewer';
import type { ClientAddresses } from '../client-address';
import { OpenCounts } from '../open-counts';
import { BURST_WINDOW_SECONDS, KeyedRateLimiter } from '../rate-limiter';
import { addressCaller, subjectCaller, type CallerKey, type RefusedCallers } from '../refused-callers';
import { apiError, ErrorCode } from './errors';
import { complexityError } from './limits';

export type SocketLimitSettings = Config['limits']['socket'];

/** WebSocket's own "Try Again Later": graphql-ws clients retry it with backoff. */
export const TRY_AGAIN_LATER = 1013;
/** How long a refused upgrade asks the client to wait. */
const FULL_RETRY_AFTER_SECONDS = 10;
/**
 * RATE_LIMITED answers one socket may get within BURST_WINDOW_SECONDS; the next closes
 * it (1008 Policy Violation, which graphql-ws clients do not retry). A client told to
 * wait (`retryAfterSeconds`) waits; one that sends a hundred more meanwhile is flooding,
 * and answering each of its messages is the work the flood is for.
 */
export const REFUSALS_BEFORE_CLOSE = 100;
/** WebSocket's Policy Violation. */
export const POLICY_VIOLATION = 1008;
/**
 * Messages a socket may send before its `connection_init` is accepted: a client sends
 * that one and waits for the ack; graphql-ws would answer anything else (a `ping`) to
 * anyone, token or not.
 */
export const MESSAGES_BEFORE_ADMISSION = 10;
/** How long a subject whose socket was closed for flooding is refused new sockets. */
export const FLOOD_PENALTY_SECONDS = BURST_WINDOW_SECONDS;
/** setTimeout's longest delay (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The graphql-ws socket's limits, each cheap to check and in this process's memory:
 * - sockets per address, counted from the upgrade (before any token): beyond it the
 *   upgrade is answered 429 with Retry-After;
 * - new sockets per address (a rate with a burst allowance): beyond it the upgrade is
 *   answered 429 with Retry-After too. A socket refused later (no token, a subject at its
 *   cap) has already cost a handshake, its state and its timers; a flood of them from
 *   one address is refused before any of that;
 * - sockets per subject, once its token verified: beyond it the socket closes with 1013;
 * - a socket closes with 4403 Forbidden when its token expires (a graphql-ws client
 *   retries 4403, with fresh connection params if it computes them; 4401 would end it);
 * - operations open per socket, and subscribe messages per subject (a rate with a burst
 *   allowance): beyond either the operation gets RATE_LIMITED, before any parse or read;
 *   a socket that keeps sending after REFUSALS_BEFORE_CLOSE of those is closed (1008),
 *   and its subject's new sockets are closed at connection_init (1013) for
 *   FLOOD_PENALTY_SECONDS: a flood costs a refused socket, not an answer per message;
 * - a subscribe whose document the checks refuse (parse, validation, depth, cost) spends
 *   `refusalCost` of its subject's subscribe allowance, not 1 (as an HTTP refusal does);
 * - the cost of a subscription's selection, paid again on every event, within a
 *   per-event budget (QUERY_TOO_COMPLEX);
 * - `jobEvents` subscriptions (dashboards) per subject, across its sockets (RATE_LIMITED);
 * - messages (and ping frames) per socket, whatever they are, and at most
 *   MESSAGES_BEFORE_ADMISSION before `connection_init` is accepted: beyond, the socket
 *   closes with 1008 and its subject is penalised as a subscribe flood's is.
 * Each refusal also sends its caller (the address for an upgrade, the subject after) to
 * the back (`RefusedCallers`): its next upgrades and subscribes wait behind everyone else's.
 */
export class SocketLimits {
  private readonly byAddress = new OpenCounts();
  private readonly bySubject = new OpenCounts();
  private readonly dashboards = new OpenCounts();
  private readonly subscribes: KeyedRateLimiter;
  private readonly connects: KeyedRateLimiter;
  /** RATE_LIMITED answers per socket in the current window. */
  private readonly refusals = new WeakMap<WebSocket, { count: number; sinceMs: number }>();
  /** Subjects refused new sockets, until when (ms). */
  private readonly penalised = new Map<string, number>();
  /** The subject of each admitted socket. */
  private readonly subjects = new WeakMap<WebSocket, string>();

  constructor(
    readonly settings: SocketLimitSettings,
    /** What a subscribe refused by the document checks spends of its subject's allowance (`documentRefused`). */
    private readonly refusalCost: number,
    readonly refusedCallers: RefusedCallers,
    /** Who an upgrade comes from, for the limits per address. */
    private readonly addresses: ClientAddresses,
  ) {
    this.subscribes = new KeyedRateLimiter(settings.subscribePerSecond, settings.subscribeBurst);
    this.connects = new KeyedRateLimiter(settings.connectsPerSecond, settings.connectBurst);
  }

  /** For `new WebSocketServer({ verifyClient })`: refuses an upgrade from an address at its cap or over its rate of new sockets. */
  readonly verifyClient: VerifyClientCallbackAsync = (info, callback) => {
    const key = this.addresses.keyOf(info.req);
    const caller = addressCaller(key);
    const refuse = (status: number, message: string, retryAfterSeconds: number) => {
      this.refusedCallers.refused(caller);
      callback(false, status, message, { 'Retry-After': String(retryAfterSeconds) });
    };
    const check = () => {
      if (this.byAddress.get(key) >= this.settings.maxConnectionsPerAddress) {
        return refuse(429, `Too many sockets from this address (at most ${this.settings.maxConnectionsPerAddress})`, FULL_RETRY_AFTER_SECONDS);
      }
      this.connects.take(key).then(
        (waitSeconds) => {
          if (waitSeconds === null) return callback(true);
          refuse(429, `Too many new sockets from this address: ${this.connects.describe('new sockets')}`, waitSeconds);
        },
        () => callback(false, 503, 'Service Unavailable'),
      );
    };
    if (!this.refusedCallers.schedule(caller, check)) refuse(429, 'Too many upgrades waiting from callers refused lately', 1);
  };

  /**
   * Counts the server's sockets per address and meters each socket's messages (install
   * before the socket server's own listener, so the meter sees a message first).
   */
  track(server: WebSocketServer): void {
    server.on('connection', (socket: WebSocket, request: IncomingMessage) => {
      const key = this.addresses.keyOf(request);
      this.byAddress.opened(key);
      socket.once('close', () => this.byAddress.closed(key));
      this.meterMessages(socket, addressCaller(key));
    });
  }

  /**
   * Every message a socket sends is work for this process, answered or not: graphql-ws
   * answers each `ping` with a `pong` and `ws` each ping frame, and one viewer socket
   * had 200,000 pings answered in 2 s while the process served nothing else. Beyond
   * `messagesPerSecond` (plus `messageBurst` at once), or beyond
   * MESSAGES_BEFORE_ADMISSION before its `connection_init` is accepted, the socket is
   * closed (1008), nothing more it sends is answered, and its subject (if admitted) is
   * penalised as a subscribe flood's is.
   */
  private meterMessages(socket: WebSocket, address: CallerKey): void {
    const { messagesPerSecond, messageBurst } = this.settings;
    let tokens = messageBurst;
    let lastMs = performance.now();
    let beforeAdmission = 0;
    let closing = false;
    const close = (reason: string) => {
      closing = true;
      const subject = this.subjects.get(socket);
      this.refusedCallers.refused(subject === undefined ? address : subjectCaller(subject));
      if (subject !== undefined) this.penalise(subject);
      socket.close(POLICY_VIOLATION, reason);
      // Nothing it sends from now on is answered (graphql-ws's handler goes with this one):
      // the rest is read only to find the client's close frame, so the close completes.
      socket.removeAllListeners('message');
    };
    const spend = () => {
      if (closing) return;
      if (!this.subjects.has(socket) && ++beforeAdmission > MESSAGES_BEFORE_ADMISSION) {
        return close(`Policy Violation: more than ${MESSAGES_BEFORE_ADMISSION} messages before connection_ack`);
      }
      const now = performance.now();
      tokens = Math.min(messageBurst, tokens + ((now - lastMs) / 1000) * messagesPerSecond);
      lastMs = now;
      if (--tokens < 0) close(`Policy Violation: more than ${messagesPerSecond} messages a second (${messageBurst} at once)`);
    };
    socket.on('message', spend);
    socket.on('ping', spend);
  }

  /** The subject's new sockets are closed at connection_init (1013) for FLOOD_PENALTY_SECONDS. */
  private penalise(subject: string): void {
    this.penalised.set(subject, Date.now() + FLOOD_PENALTY_SECONDS * 1000);
  }

  /**
   * Once the socket's token verified: claims one of its subject's sockets and arranges
   * the close at expiry. Null if admitted, else the close code and reason to send.
   */
  admit(socket: WebSocket, viewer: Viewer): { code: number; reason: string } | null {
    // Closed while its token was being verified: its 'close' has fired already, so it must not be counted.
    if (socket.readyState !== socket.OPEN) return { code: 1001, reason: 'Going Away' };
    const penaltyEndsMs = this.penalised.get(viewer.subject);
    if (penaltyEndsMs !== undefined) {
      const waitSeconds = Math.ceil((penaltyEndsMs - Date.now()) / 1000);
      if (waitSeconds > 0) {
        return { code: TRY_AGAIN_LATER, reason: `Try Again Later: a socket of this token kept subscribing after being refused; wait ${waitSeconds} s` };
      }
      this.penalised.delete(viewer.subject);
    }
    const open = this.bySubject.get(viewer.subject);
    if (open >= this.settings.maxConnectionsPerSubject) {
      return { code: TRY_AGAIN_LATER, reason: `Try Again Later: this token's subject has ${open} sockets open, the most allowed` };
    }
    this.bySubject.opened(viewer.subject);
    this.subjects.set(socket, viewer.subject);
    let timer: NodeJS.Timeout | undefined;
    const closeAtExpiry = () => {
      const remainingMs = (viewer.expiresAt ?? Infinity) * 1000 - Date.now();
      if (remainingMs === Infinity) return;
      if (remainingMs <= 0) {
        socket.close(CloseCode.Forbidden, 'Forbidden: the token has expired; connect again with a new one');
        return;
      }
      timer = setTimeout(closeAtExpiry, Math.min(remainingMs, MAX_TIMER_MS));
      timer.unref();
    };
    closeAtExpiry();
    socket.once('close', () => {
      clearTimeout(timer);
      this.bySubject.closed(viewer.subject);
    });
    return null;
  }

  /**
   * Before a subscribe message is parsed: within the socket's open operations (counting
   * this one) and the subject's subscribe rate? Null if so, else the error to send.
   */
  async admitOperation(viewer: Viewer, openOperations: number, socket: WebSocket): Promise<GraphQLError | null> {
    const max = this.settings.maxSubscriptionsPerSocket;
    if (openOperations > max) {
      this.refused(socket, viewer);
      return apiError(ErrorCode.RATE_LIMITED, `This socket has ${max} operations open, the most allowed: complete one, or open another socket`, {
        limit: max,
      });
    }
    const waitSeconds = await this.subscribes.take(viewer.subject);
    if (waitSeconds === null) return null;
    this.refused(socket, viewer);
    return apiError(
      ErrorCode.RATE_LIMITED,
      `Too many subscribe messages for this token: ${this.subscribes.describe('subscribes')}; try again in ${waitSeconds} s`,
      { retryAfterSeconds: waitSeconds },
    );
  }

  /** A subscribe whose document was refused spends `refusalCost` in all (1 was taken on arrival). */
  documentRefused(viewer: Viewer): void {
    this.refusedCallers.refused(subjectCaller(viewer.subject));
    if (this.refusalCost > 1) void this.subscribes.spend(viewer.subject, this.refusalCost - 1);
  }

  /**
   * A subscription runs its selection again for every event: its cost (by the API's
   * own estimator) must fit the per-event budget. Null for other operations and for
   * subscriptions within it.
   */
  eventCostError(
    schema: GraphQLSchema,
    document: DocumentNode,
    operationName: string | null | undefined,
    variables: Record<string, unknown> | null | undefined,
  ): GraphQLError | null {
    if (getOperationAST(document, operationName ?? undefined)?.operation !== OperationTypeNode.SUBSCRIPTION) return null;
    const max = this.settings.maxEventCost;
    const over = complexityError(schema, document, operationName, variables, max);
    if (!over) return null;
    const cost = over.extensions.complexity;
    return apiError(
      ErrorCode.QUERY_TOO_COMPLEX,
      `${typeof cost === 'number' ? `Each event of this subscription costs ${cost}` : 'This subscription costs too much per event'}; ` +
        `the limit is ${max} per event: select fewer fields, and read large ones (a plan, its timetable) with a query when needed`,
      { ...(typeof cost === 'number' ? { complexity: cost } : {}), maxEventComplexity: max },
    );
  }

  /**
   * In onSubscribe, once the operation is otherwise admitted: a `jobEvents` subscription (a
   * dashboard) claims one of its subject's dashboards, or is refused (RATE_LIMITED) at the
   * cap. A dashboard runs its selection for every job's every event, so its cost grows
   * with the whole service's traffic, not with one job's: a few per person is what an
   * office needs, and more from one token is a flood. Null for any other operation; else
   * the refusal, or the claim, whose `release` runs when the operation ends (by itself, by
   * the client, or with its socket: SocketOperations.hold).
   */
  claimDashboard(viewer: Viewer, document: DocumentNode, operationName: string | null | undefined): GraphQLError | { release: () => void } | null {
    if (!isDashboard(document, operationName)) return null;
    const max = this.settings.maxDashboardsPerSubject;
    if (this.dashboards.get(viewer.subject) >= max) {
      return apiError(ErrorCode.RATE_LIMITED, `This token has ${max} jobEvents subscriptions open, the most allowed: complete one first`, { limit: max });
    }
    this.dashboards.opened(viewer.subject);
    let claimed = true;
    return {
      release: () => {
        if (!claimed) return;
        claimed = false;
        this.dashboards.closed(viewer.subject);
      },
    };
  }

  /** Counts a RATE_LIMITED answer to `socket`; past REFUSALS_BEFORE_CLOSE in a window, closes it and penalises its subject. */
  private refused(socket: WebSocket, viewer: Viewer): void {
    this.refusedCallers.refused(subjectCaller(viewer.subject));
    const now = Date.now();
    let record = this.refusals.get(socket);
    if (!record || now - record.sinceMs > BURST_WINDOW_SECONDS * 1000) this.refusals.set(socket, (record = { count: 0, sinceMs: now }));
    if (++record.count !== REFUSALS_BEFORE_CLOSE + 1) return;
    this.penalise(viewer.subject);
    // After the answers decided in this turn are written (a close first would drop them).
    setImmediate(() =>
      socket.close(POLICY_VIOLATION, `Policy Violation: more than ${REFUSALS_BEFORE_CLOSE} subscribes refused in ${BURST_WINDOW_SECONDS} s; honour retryAfterSeconds`),
    );
  }
}

/** The subscription field that streams every job's events: what the dashboard cap counts. */
const DASHBOARD_FIELD = 'jobEvents';

/** Is the operation a subscription to `jobEvents`, at its root or through root fragments? */
function isDashboard(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (operation?.operation !== OperationTypeNode.SUBSCRIPTION) return false;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const visited = new Set<string>();
  const selects = (set: SelectionSetNode): boolean =>
    set.selections.some((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === DASHBOARD_FIELD;
      if (selection.kind === Kind.INLINE_FRAGMENT) return selects(selection.selectionSet);
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || visited.has(name)) return false;
      visited.add(name);
      return selects(fragment.selectionSet);
    });
  return selects(operation.selectionSet);
}
