import type { Socket } from 'node:net';
import type { ChannelModel } from 'amqplib';

const COALESCED = Symbol('jiaowu.coalescedWrites');

/**
 * Corks `socket` at the first write of a turn of the event loop and uncorks it on the
 * next tick, so that everything written in that turn leaves as one `writev`. Protocol
 * libraries hand the socket one frame per `write` (amqplib: each publish, ack, confirm;
 * ws: each graphql-ws message), which under load is one system call per frame — the
 * largest single cost in the profiles of a drain and of a socket fanning out events.
 * No frame waits beyond the current turn, and their order is kept. `end()` flushes
 * whatever is corked, so a closing socket loses nothing. Wrapping twice does nothing.
 */
export function coalesceSocketWrites(socket: Socket): void {
  if ((socket as unknown as Record<symbol, boolean>)[COALESCED]) return;
  (socket as unknown as Record<symbol, boolean>)[COALESCED] = true;
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function coalescedWrite(this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked && !socket.destroyed) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as Socket['write'];
}

/** The same for the socket under an amqplib connection (every channel's frames share it). */
export function coalesceWrites(model: ChannelModel): void {
  const socket = (model as unknown as { connection?: { stream?: unknown } }).connection?.stream;
  if (isSocket(socket)) coalesceSocketWrites(socket);
}

function isSocket(value: unknown): value is Socket {
  return !!value && typeof (value as Socket).write === 'function' && typeof (value as Socket).cork === 'function' && typeof (value as Socket).uncork === 'function';
}
