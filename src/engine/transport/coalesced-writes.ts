import type { Socket } from 'node:net';
import type { ChannelModel } from 'amqplib';

const COALESCED = Symbol('jiaowu.coalescedWrites');

/**
 * amqplib hands the socket one frame per `write` (each publish, ack, confirm-select…):
 * under load that is one system call per frame, and the profile of a drain showed these
 * writes as the largest cost of a worker. Corking the socket at the first write of a turn
 * of the event loop and uncorking it on the next tick sends everything written in that
 * turn — amqplib's multiplexer writes every channel's frames in one pass — as one
 * `writev`. No frame waits beyond the current turn, and their order is kept.
 */
export function coalesceWrites(model: ChannelModel): void {
  const socket = (model as unknown as { connection?: { stream?: unknown } }).connection?.stream;
  if (!isSocket(socket) || (socket as unknown as Record<symbol, boolean>)[COALESCED]) return;
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

function isSocket(value: unknown): value is Socket {
  return !!value && typeof (value as Socket).write === 'function' && typeof (value as Socket).cork === 'function' && typeof (value as Socket).uncork === 'function';
}
