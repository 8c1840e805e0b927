import type { Logger } from 'pino';
import type { WebSocket } from 'ws';

/**
 * ws's own errors for a client that breaks the WebSocket protocol: a frame over
 * `maxPayload` (WS_ERR_UNSUPPORTED_MESSAGE_LENGTH), a bad opcode, an unmasked frame… ws
 * emits such an error on the socket and closes it with the matching code (1009, 1002…)
 * by itself.
 */
export function isClientProtocolError(error: unknown): error is Error & { code: string } {
  const code: unknown = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('WS_ERR_');
}

/**
 * Keeps a client's protocol errors from graphql-ws, which takes every 'error' on a
 * socket for a fault of the server: it writes "Internal error … check your
 * implementation" and a stack to stderr (a synchronous write, each time a hostile client
 * sends a frame too large) and closes with 1011 over ws's own, truthful code. They are
 * the client's doing: a debug line in the service's log. Any other error goes on to
 * graphql-ws as before.
 */
export function keepClientProtocolErrorsOut(socket: WebSocket, logger: Logger, address: string | undefined): void {
  const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
  socket.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event === 'error' && isClientProtocolError(args[0])) {
      logger.debug({ code: args[0].code, address }, 'socket closed: the client broke the WebSocket protocol');
      return true;
    }
    return emit(event, ...args);
  }) as typeof socket.emit;
}
