import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/** How often the connections with data waiting to leave are looked at. */
const SEND_CHECK_INTERVAL_MS = 1_000;

const DROP = Symbol('jiaowu.dropStalledSend');

/**
 * How to drop `socket` when its sends stall, if not by destroying it: a graphql-ws
 * socket is terminated through its WebSocket, which then stops sending at once (its
 * state turns CLOSING), rather than writing to a socket destroyed under it.
 */
export function dropStalledSendWith(socket: Socket, drop: () => void): void {
  (socket as unknown as Record<symbol, () => void>)[DROP] = drop;
}

interface Progress {
  /** Bytes the kernel has taken from this socket so far. */
  sent: number;
  /** When `sent` last grew, or data started waiting (ms, `performance.now()`). */
  since: number;
}

/**
 * Closes a connection whose client has taken nothing of what waits for it for
 * `sendTimeoutMs` — as nginx's `send_timeout` does. Node has no timeout once a request
 * is in: an answer larger than the kernel's socket buffers to a client that does not
 * read (a zero window is kept open by TCP for ever) held the connection, its file
 * descriptor and the unsent bytes in this process as long as the client liked. A
 * client that reads, however slowly, moves `sent` and is never closed: the bound is on
 * a stall, not on the length of a transfer. graphql-ws sockets are connections of this
 * server too and are held to it the same way, though graphql-ws's own keep-alive (a
 * ping every 12 s, dropped without a pong 12 s later) usually drops them first.
 */
export function dropStalledSends(server: http.Server, sendTimeoutMs: number, logger: Logger): void {
  const waiting = new Map<Socket, Progress>();
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      waiting.delete(socket);
    });
  });
  const check = setInterval(() => {
    const now = performance.now();
    for (const socket of open) {
      const unsent = socket.writableLength;
      if (unsent === 0 || socket.destroyed) {
        waiting.delete(socket);
        continue;
      }
      // bytesWritten counts what is queued too: what the kernel took is the rest.
      const sent = (socket.bytesWritten ?? 0) - unsent;
      const progress = waiting.get(socket);
      if (!progress || sent !== progress.sent) waiting.set(socket, { sent, since: now });
      else if (now - progress.since >= sendTimeoutMs) {
        waiting.delete(socket);
        logger.info({ address: socket.remoteAddress, unsent, sendTimeoutMs }, 'connection closed: its client took nothing of what waited for it (HTTP_SEND_TIMEOUT_MS)');
        const drop = (socket as unknown as Record<symbol, (() => void) | undefined>)[DROP];
        if (drop) drop();
        else socket.destroy();
      }
    }
  }, SEND_CHECK_INTERVAL_MS);
  check.unref();
  server.once('close', () => clearInterval(check));
}
