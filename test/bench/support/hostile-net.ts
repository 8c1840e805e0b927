/**
 * The wire, for the hostile-load benchmark's clients: a GraphQL POST and a graphql-ws
 * socket, each from a chosen loopback address, bounded by a timeout, and each ending in
 * an outcome named as the wire said it (HTTP status and `extensions.code`, socket close
 * code) with its verdict: accepted, refused, a server error (5xx) or failed (timeout,
 * connection error).
 */
import http from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import type { Percentiles, Verdict } from './hostile-protocol';
import { quantile } from './quantile';

export interface Outcome {
  label: string;
  verdict: Verdict;
  ms: number;
  /** The first error message or close reason, shortened (for `--examples`). */
  detail?: string;
}

const short = (text: string | undefined) => (text ? text.slice(0, 160) : undefined);

/** The first error code in a GraphQL response body (errors come first in Apollo's answer). */
function firstCode(head: string): string | null {
  const match = /"code"\s*:\s*"([A-Za-z_]+)"/.exec(head);
  return match ? match[1]! : null;
}

function firstMessage(head: string): string | undefined {
  const match = /"message"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(head);
  return short(match ? match[1] : head.trim() || undefined);
}

export interface PostOptions {
  token?: string;
  /** The raw Authorization header (a malformed one), instead of `Bearer <token>`. */
  authorization?: string;
  localAddress: string;
  timeoutMs: number;
  agent?: http.Agent;
  /**
   * Send again, once, a request whose reused keep-alive connection was reset: the server
   * closed it as idle while the request was on its way (a race every keep-alive client
   * meets; Node's documentation advises this retry, and browsers make it).
   */
  retryResetReusedConnection?: boolean;
  /** More headers (a bench tag). */
  headers?: Record<string, string>;
}

/**
 * POSTs a JSON body to /graphql and reads the whole answer (counting its bytes; only
 * the first 64 KiB are kept to find the error code).
 */
export function postGraphQL(url: string, body: string | Buffer, options: PostOptions): Promise<Outcome & { status: number; bytes: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (label: string, verdict: Verdict, status: number, bytes: number, detail?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ label, verdict, status, bytes, ms: performance.now() - started, detail });
    };
    const payload = typeof body === 'string' ? Buffer.from(body) : body;
    const authorization = options.authorization ?? (options.token ? `Bearer ${options.token}` : undefined);
    let retried = false;
    let request: http.ClientRequest;
    const send = () => {
      request = http.request(url, {
        method: 'POST',
        agent: options.agent,
        localAddress: options.localAddress,
        headers: {
          'content-type': 'application/json',
          'content-length': payload.length,
          ...(authorization ? { authorization } : {}),
          ...options.headers,
        },
      });
      request.on('response', (response) => {
        let head = '';
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (head.length < 65_536) head += chunk.toString('utf8', 0, Math.min(chunk.length, 65_536 - head.length));
        });
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          const code = firstCode(head);
          // An internal error is the server's fault whatever the status it came with.
          if (status >= 500 || code === 'INTERNAL_SERVER_ERROR') finish(`HTTP ${status}${code ? ` ${code}` : ''}`, 'server-error', status, bytes, firstMessage(head));
          else if (status === 200 && !/^\s*\{\s*"errors"/.test(head)) finish('HTTP 200 answered', 'accepted', status, bytes, `${bytes} bytes`);
          else finish(`HTTP ${status}${code ? ` ${code}` : ''}`, 'refused', status, bytes, firstMessage(head));
        });
        response.on('error', (error) => finish(`connection error ${(error as NodeJS.ErrnoException).code ?? error.message}`, 'failed', 0, 0));
      });
      request.on('error', (error) => {
        const code = (error as NodeJS.ErrnoException).code;
        if (options.retryResetReusedConnection && !retried && !settled && request.reusedSocket && code === 'ECONNRESET') {
          retried = true;
          send();
          return;
        }
        finish(`connection error ${code ?? error.message}`, 'failed', 0, 0);
      });
      request.end(payload);
    };
    // One bound for the request and its retry, from the first send.
    const timer = setTimeout(() => {
      request.destroy();
      finish('timeout', 'failed', 0, 0);
    }, options.timeoutMs);
    send();
  });
}

/** GETs `url` (an operator endpoint) and reads the whole answer: 200 is accepted, a 5xx a server error, anything else refused. */
export function getUrl(url: string, options: Pick<PostOptions, 'localAddress' | 'timeoutMs' | 'agent'>): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (label: string, verdict: Verdict, detail?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ label, verdict, ms: performance.now() - started, detail });
    };
    const request = http.get(url, { agent: options.agent, localAddress: options.localAddress }, (response) => {
      let head = '';
      response.on('data', (chunk: Buffer) => {
        if (head.length < 1_024) head += chunk.toString('utf8', 0, Math.min(chunk.length, 1_024 - head.length));
      });
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        finish(`HTTP ${status}`, status === 200 ? 'accepted' : status >= 500 ? 'server-error' : 'refused', short(head));
      });
      response.on('error', (error) => finish(`connection error ${(error as NodeJS.ErrnoException).code ?? error.message}`, 'failed'));
    });
    request.on('error', (error) => finish(`connection error ${(error as NodeJS.ErrnoException).code ?? error.message}`, 'failed'));
    const timer = setTimeout(() => {
      request.destroy();
      finish('timeout', 'failed');
    }, options.timeoutMs);
  });
}

/** A `ws` WebSocket that connects from a given loopback address (for graphql-ws's `createClient`). */
export function webSocketFrom(localAddress: string): typeof WebSocket {
  return class extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { localAddress });
    }
  } as unknown as typeof WebSocket;
}

/** What an attack lane holds open until the attack ends: a socket, a slow request. */
export interface HeldConnection {
  readonly closed: Promise<unknown>;
  close(): Promise<void>;
}

/**
 * A request that never finishes its headers (slowloris): half of them at once, then one
 * more header byte every `trickleMs`, until the server answers or closes the connection.
 * `ended` says how: the server's status (429 at its cap per address, 408 at its headers
 * timeout), closed without an answer, or still held when the lane closed it.
 */
export class SlowRequest implements HeldConnection {
  private readonly socket: net.Socket;
  readonly closed: Promise<void>;
  readonly ended: Promise<Outcome>;
  private closedByUs = false;

  constructor(url: string, localAddress: string, trickleMs: number) {
    const started = performance.now();
    const { hostname, port, pathname } = new URL(url);
    this.socket = net.connect({ host: hostname, port: Number(port), localAddress });
    let head = '';
    this.socket.setEncoding('latin1');
    this.socket.on('data', (chunk: string) => {
      if (head.length < 64) head += chunk;
    });
    this.socket.on('error', () => undefined);
    let trickle: NodeJS.Timeout | undefined;
    this.socket.once('connect', () => {
      this.socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nX-Slow: `);
      trickle = setInterval(() => this.socket.write('a'), trickleMs);
    });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
    this.ended = this.closed.then(() => {
      clearInterval(trickle);
      const ms = performance.now() - started;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
      if (status) return { label: `HTTP ${status}`, verdict: status.startsWith('5') ? 'server-error' : 'refused', ms };
      if (this.closedByUs) return { label: 'held until the attack ended', verdict: 'accepted', ms };
      return { label: 'closed without an answer', verdict: 'refused', ms };
    });
  }

  async close(): Promise<void> {
    this.closedByUs = true;
    this.socket.destroy();
    await this.closed;
  }
}

type ServerMessage = { id?: string; type: string; payload?: unknown };

/**
 * One raw graphql-ws socket, so that every answer can be counted as it comes: the
 * upgrade (HTTP status when refused), `connection_ack` or the close code, then per
 * subscription its first `next`, `error` (with `extensions.code`) or `complete`.
 * After the first answer of a subscription, its further messages are only counted.
 */
export class GqlSocket implements HeldConnection {
  readonly ws: WebSocket;
  private readonly waiting = new Map<string, (outcome: Outcome) => void>();
  private readonly started = new Map<string, number>();
  private nextId = 0;
  closeCode: number | null = null;
  closeReason = '';
  /** Messages received for subscriptions that had already answered. */
  extraMessages = 0;
  readonly opened: Promise<Outcome>;
  readonly closed: Promise<number>;

  constructor(url: string, localAddress: string, connectionParams: Record<string, unknown> | null, timeoutMs: number) {
    const started = performance.now();
    this.ws = new WebSocket(url, 'graphql-transport-ws', { localAddress, handshakeTimeout: timeoutMs });
    this.closed = new Promise((resolve) => this.ws.once('close', (code) => resolve(code)));
    this.opened = new Promise((resolve) => {
      let settled = false;
      const finish = (label: string, verdict: Verdict, detail?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ label, verdict, ms: performance.now() - started, detail });
      };
      const timer = setTimeout(() => {
        finish('timeout', 'failed');
        this.ws.terminate();
      }, timeoutMs);
      this.ws.on('unexpected-response', (_request, response) => {
        const status = response.statusCode ?? 0;
        finish(`upgrade refused HTTP ${status}`, status >= 500 ? 'server-error' : 'refused');
        response.resume();
        this.ws.terminate();
      });
      this.ws.on('open', () => {
        if (connectionParams) this.ws.send(JSON.stringify({ type: 'connection_init', payload: connectionParams }));
      });
      this.ws.on('error', (error) => finish(`socket error ${(error as NodeJS.ErrnoException).code ?? error.message}`.slice(0, 80), 'failed'));
      this.ws.on('close', (code, reason) => {
        this.closeCode = code;
        this.closeReason = reason.toString();
        finish(`close ${code}`, code === 1006 ? 'failed' : 'refused', short(this.closeReason));
        for (const [id, done] of this.waiting) done({ label: `close ${code}`, verdict: code === 1006 ? 'failed' : 'refused', ms: performance.now() - (this.started.get(id) ?? started), detail: short(this.closeReason) });
        this.waiting.clear();
      });
      this.ws.on('message', (data: Buffer) => {
        const text = data.toString();
        // Most messages are the `next` of a subscription that already answered: count them without parsing.
        const head = /^\{"id":"([^"]+)","type":"next"/.exec(text);
        if (head && !this.waiting.has(head[1]!)) {
          this.extraMessages++;
          return;
        }
        let message: ServerMessage;
        try {
          message = JSON.parse(text) as ServerMessage;
        } catch {
          return;
        }
        if (message.type === 'connection_ack') finish('connection_ack', 'accepted');
        else if (message.type === 'ping') this.ws.send('{"type":"pong"}');
        else if (message.id !== undefined) this.answer(message);
      });
    });
  }

  private answer(message: ServerMessage): void {
    const done = this.waiting.get(message.id!);
    if (!done) {
      this.extraMessages++;
      return;
    }
    this.waiting.delete(message.id!);
    const ms = performance.now() - (this.started.get(message.id!) ?? 0);
    this.started.delete(message.id!);
    type Errors = { message?: string; extensions?: { code?: string } }[];
    if (message.type === 'next') {
      const errors = (message.payload as { errors?: Errors } | undefined)?.errors;
      if (errors?.length) done({ label: `next with error ${errors[0]!.extensions?.code ?? '(no code)'}`, verdict: errors[0]!.extensions?.code === 'INTERNAL_SERVER_ERROR' ? 'server-error' : 'refused', ms, detail: short(errors[0]!.message) });
      else done({ label: 'next (data)', verdict: 'accepted', ms });
    } else if (message.type === 'error') {
      const errors = message.payload as Errors | undefined;
      const first = Array.isArray(errors) ? errors[0] : undefined;
      const code = first?.extensions?.code;
      done({ label: `error ${code ?? '(no code)'}`, verdict: code === 'INTERNAL_SERVER_ERROR' ? 'server-error' : 'refused', ms, detail: short(first?.message) });
    } else if (message.type === 'complete') done({ label: 'complete (no data)', verdict: 'accepted', ms });
  }

  /**
   * Sends a subscribe; resolves with its first answer, or after `timeoutMs` with
   * `held open` (accepted: the server took it and keeps it).
   */
  subscribe(payload: Record<string, unknown>, timeoutMs: number): { id: string; answer: Promise<Outcome> } {
    const id = String(++this.nextId);
    const answer = new Promise<Outcome>((resolve) => {
      if (this.ws.readyState !== WebSocket.OPEN) {
        resolve({ label: `close ${this.closeCode ?? 'before subscribe'}`, verdict: 'refused', ms: 0 });
        return;
      }
      const timer = setTimeout(() => {
        if (this.waiting.delete(id)) resolve({ label: `held open, no answer in ${Math.round(timeoutMs / 1000)} s`, verdict: 'accepted', ms: timeoutMs });
      }, timeoutMs);
      this.started.set(id, performance.now());
      this.waiting.set(id, (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
      this.ws.send(JSON.stringify({ id, type: 'subscribe', payload }));
    });
    return { id, answer };
  }

  /** The close code if the socket closes within `ms`, else null (the socket stays as it is). */
  closedWithin(ms: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
    return Promise.race([this.closed, waited]).finally(() => clearTimeout(timer));
  }

  send(data: string | Buffer): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(data);
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Closes (or drops, when the server does not answer the close) the socket. */
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    if (this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.terminate();
      return;
    }
    this.ws.close(1000);
    const timer = setTimeout(() => this.ws.terminate(), 2_000);
    await this.closed;
    clearTimeout(timer);
  }
}

export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { count: 0, p50: NaN, p99: NaN, max: NaN };
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1]! };
}

/** A loop of this process's own timer lag: how late its own measurements may be. */
export function ownStallMonitor(): { takeMaxMs(): number } {
  let last = performance.now();
  let max = 0;
  setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last - 10);
    last = now;
  }, 10).unref();
  return {
    takeMaxMs() {
      const value = max;
      max = 0;
      return Math.max(0, value);
    },
  };
}
