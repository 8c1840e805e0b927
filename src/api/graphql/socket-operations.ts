import type WebSocket from 'ws';

/** What graphql-ws hands each hook of one operation: the subscribe message's payload, the same object each time. */
export type SubscribePayload = object;

interface Operation {
  payload: SubscribePayload;
  /** The running subscription's stream, once graphql-js returned it. */
  stream: AsyncGenerator | null;
  /** What the operation holds (a dashboard place), given back when it ends. */
  releases: (() => void)[];
}

interface SocketRecord {
  operations: Map<string, Operation>;
  closed: boolean;
}

const isAsyncGenerator = (value: unknown): value is AsyncGenerator =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value && typeof (value as AsyncGenerator).return === 'function';

/**
 * Each socket's operations as this server runs them, from the subscribe message to their
 * end, each known by its subscribe message rather than by the client's id alone.
 *
 * graphql-ws keeps one entry per id and forgets an operation the client completes while
 * it is still being admitted; a subscribe under the same id then starts a second
 * operation beside the first, both write into that one entry, and the first one's stream
 * runs on unreachable — no `complete` ends it, nor does its socket's close, and it keeps
 * what it holds. Here:
 * - an id in use by an operation that has not ended closes the socket with 4409, as
 *   graphql-ws does for an id it still knows (`begin`);
 * - the operations counted against the socket's cap are the ones running here (`open`);
 * - a socket's close ends every operation it started, streams and holds alike, and an
 *   operation admitted after its socket closed ends at once (`started`, `hold`).
 */
export class SocketOperations {
  private readonly sockets = new WeakMap<WebSocket, SocketRecord>();

  /** At a subscribe message, before any await: false when `id` names an operation of this socket that has not ended. */
  begin(socket: WebSocket, id: string, payload: SubscribePayload): boolean {
    const record = this.recordOf(socket);
    if (record.operations.has(id)) return false;
    if (!record.closed) record.operations.set(id, { payload, stream: null, releases: [] });
    return true;
  }

  /** The socket's operations that have not ended, counting one just begun. */
  open(socket: WebSocket): number {
    return this.sockets.get(socket)?.operations.size ?? 0;
  }

  /** The operation holds something until it ends: `release` runs then (at once if it has ended already). */
  hold(socket: WebSocket, id: string, payload: SubscribePayload, release: () => void): void {
    const operation = this.find(socket, id, payload);
    if (operation) operation.releases.push(release);
    else release();
  }

  /** graphql-ws's onOperation: the operation's result; a stream of an operation that has ended is ended here. */
  started(socket: WebSocket, id: string, payload: SubscribePayload, result: unknown): void {
    if (!isAsyncGenerator(result)) return;
    const operation = this.find(socket, id, payload);
    if (operation) operation.stream = result;
    else void result.return(undefined);
  }

  /** The operation ended (completed, refused, failed): what it holds is given back. */
  ended(socket: WebSocket, id: string, payload: SubscribePayload): void {
    const operation = this.find(socket, id, payload);
    if (!operation) return;
    this.sockets.get(socket)!.operations.delete(id);
    release(operation);
  }

  private find(socket: WebSocket, id: string, payload: SubscribePayload): Operation | undefined {
    const operation = this.sockets.get(socket)?.operations.get(id);
    return operation?.payload === payload ? operation : undefined;
  }

  private recordOf(socket: WebSocket): SocketRecord {
    let record = this.sockets.get(socket);
    if (record) return record;
    const created: SocketRecord = { operations: new Map(), closed: socket.readyState !== socket.OPEN };
    this.sockets.set(socket, created);
    socket.once('close', () => {
      created.closed = true;
      for (const operation of created.operations.values()) {
        void operation.stream?.return(undefined);
        release(operation);
      }
      created.operations.clear();
    });
    return created;
  }
}

function release(operation: Operation): void {
  const releases = operation.releases.splice(0);
  for (const giveBack of releases) giveBack();
}
