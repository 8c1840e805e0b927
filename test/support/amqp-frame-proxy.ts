// A TCP proxy between an AMQP 0-9-1 client under test and the shared broker that reads
// the frames going each way, so a test can act at one exact frame (cut the connection
// at a client's Channel.Close, hold back the broker's confirm of one message) without
// touching the broker.
import net from 'node:net';

/** One AMQP frame: type 1 method, 2 header, 3 body, 8 heartbeat. */
export interface AmqpFrame {
  type: number;
  channel: number;
  payload: Buffer;
  /** The whole frame as it came. */
  raw: Buffer;
}

/** What happens to a frame: sent on, dropped, replaced by other frames, or the connection cut (both sides) before it. */
export type FrameAction = 'forward' | 'drop' | 'cut' | Buffer[];

export interface FrameRules {
  fromClient?: (frame: AmqpFrame, connection: number) => FrameAction;
  fromServer?: (frame: AmqpFrame, connection: number) => FrameAction;
}

export interface AmqpFrameProxy {
  readonly port: number;
  /** Connections accepted since the start. */
  readonly totalConnections: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** The rules every frame goes through from now on (none: everything is forwarded). */
  rules: FrameRules;
  close(): Promise<void>;
}

const FRAME_END = 0xce;
const PROTOCOL_HEADER_LENGTH = 8;

/** The class and method of a method frame. */
export function methodOf(frame: AmqpFrame): { classId: number; methodId: number } | null {
  if (frame.type !== 1 || frame.payload.length < 4) return null;
  return { classId: frame.payload.readUInt16BE(0), methodId: frame.payload.readUInt16BE(2) };
}

export const isMethod = (frame: AmqpFrame, classId: number, methodId: number): boolean => {
  const method = methodOf(frame);
  return method !== null && method.classId === classId && method.methodId === methodId;
};

export const CHANNEL_CLOSE = [20, 40] as const;
export const BASIC_PUBLISH = [60, 40] as const;
export const BASIC_ACK = [60, 80] as const;
export const CONFIRM_SELECT = [85, 10] as const;

/** The routing key of a Basic.Publish frame. */
export function publishRoutingKey(frame: AmqpFrame): string {
  const { payload } = frame;
  let at = 4 + 2; // class, method, reserved short
  at += 1 + payload.readUInt8(at); // exchange
  const length = payload.readUInt8(at);
  return payload.toString('utf8', at + 1, at + 1 + length);
}

/** The delivery tag and `multiple` bit of a Basic.Ack frame. */
export function ackOf(frame: AmqpFrame): { deliveryTag: number; multiple: boolean } {
  return { deliveryTag: Number(frame.payload.readBigUInt64BE(4)), multiple: (frame.payload.readUInt8(12) & 1) === 1 };
}

/** A Basic.Ack frame for one delivery tag (`multiple` off). */
export function singleAck(channel: number, deliveryTag: number): Buffer {
  const frame = Buffer.alloc(7 + 13 + 1);
  frame.writeUInt8(1, 0);
  frame.writeUInt16BE(channel, 1);
  frame.writeUInt32BE(13, 3);
  frame.writeUInt16BE(BASIC_ACK[0], 7);
  frame.writeUInt16BE(BASIC_ACK[1], 9);
  frame.writeBigUInt64BE(BigInt(deliveryTag), 11);
  frame.writeUInt8(0, 19);
  frame.writeUInt8(FRAME_END, 20);
  return frame;
}

/** Splits a byte stream into whole frames; keeps the rest for the next chunk. */
class FrameReader {
  private rest: Buffer = Buffer.alloc(0);
  constructor(private headerLeft: number) {}

  /** The protocol header (client side only), then whole frames. */
  push(chunk: Buffer): Array<AmqpFrame | Buffer> {
    this.rest = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    const out: Array<AmqpFrame | Buffer> = [];
    if (this.headerLeft > 0) {
      const header = this.rest.subarray(0, this.headerLeft);
      this.headerLeft -= header.length;
      this.rest = this.rest.subarray(header.length);
      out.push(header);
    }
    while (this.rest.length >= 7) {
      const size = this.rest.readUInt32BE(3);
      if (this.rest.length < 7 + size + 1) break;
      const raw = this.rest.subarray(0, 7 + size + 1);
      out.push({ type: raw.readUInt8(0), channel: raw.readUInt16BE(1), payload: raw.subarray(7, 7 + size), raw });
      this.rest = this.rest.subarray(raw.length);
    }
    return out;
  }
}

export async function startAmqpFrameProxy(targetPort = 5672, targetHost = '127.0.0.1'): Promise<AmqpFrameProxy> {
  const sockets = new Set<net.Socket>();
  let total = 0;
  const proxy: AmqpFrameProxy = {
    port: 0,
    get totalConnections() {
      return total;
    },
    urlFor(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(proxy.port);
      return parsed.toString();
    },
    rules: {},
    async close() {
      for (const socket of [...sockets]) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = net.createServer((client) => {
    const connection = ++total;
    const upstream = net.connect({ host: targetHost, port: targetPort });
    sockets.add(client);
    sockets.add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    let cut = false;
    /** The side a cut ends after the frames before it (not destroyed, so they still leave). */
    let ending: net.Socket | null = null;
    const cutBoth = () => {
      cut = true;
      for (const socket of [client, upstream]) if (socket !== ending) socket.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', cutBoth);
      socket.on('close', () => {
        sockets.delete(socket);
        cutBoth();
      });
    }
    const relay = (from: net.Socket, to: net.Socket, reader: FrameReader, rule: () => FrameRules['fromClient']) => {
      from.on('data', (chunk: Buffer) => {
        const out: Buffer[] = [];
        for (const item of reader.push(chunk)) {
          if (cut) return;
          if (Buffer.isBuffer(item)) {
            out.push(item);
            continue;
          }
          const action = rule()?.(item, connection) ?? 'forward';
          if (action === 'forward') out.push(item.raw);
          else if (action === 'cut') {
            // The frames before it still arrive; the cut one and all after it never do.
            ending = to;
            to.end(Buffer.concat(out));
            cutBoth();
            return;
          } else if (action !== 'drop') out.push(...action);
        }
        if (out.length > 0 && !cut) to.write(Buffer.concat(out));
      });
    };
    relay(client, upstream, new FrameReader(PROTOCOL_HEADER_LENGTH), () => proxy.rules.fromClient);
    relay(upstream, client, new FrameReader(0), () => proxy.rules.fromServer);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
  });
  (proxy as { port: number }).port = (server.address() as net.AddressInfo).port;
  return proxy;
}
