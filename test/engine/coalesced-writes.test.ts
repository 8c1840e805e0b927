import { createServer, connect, type Server, type Socket } from 'node:net';
import type { ChannelModel } from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { coalesceSocketWrites, coalesceWrites } from '../../src/engine/transport/coalesced-writes';

describe('coalesceWrites', () => {
  let server: Server | undefined;
  let client: Socket | undefined;

  afterEach(async () => {
    client?.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  async function pair(): Promise<{ client: Socket; chunks: string[] }> {
    const chunks: string[] = [];
    server = createServer((socket) => socket.on('data', (data) => chunks.push(data.toString())));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    client = connect({ port, host: '127.0.0.1', noDelay: true });
    await new Promise<void>((resolve) => client!.once('connect', resolve));
    return { client, chunks };
  }

  const asModel = (socket: Socket) => ({ connection: { stream: socket } }) as unknown as ChannelModel;

  it('sends what one turn of the event loop writes as one chunk, in order, and later turns after it', async () => {
    const { client, chunks } = await pair();
    coalesceWrites(asModel(client));
    coalesceWrites(asModel(client)); // a second call (a setup step run again) wraps nothing twice
    let writes = 0;
    for (const frame of ['a', 'b', 'c', 'd']) if (client.write(frame)) writes++;
    expect(writes).toBe(4);
    // Nothing left before the turn ended: all four wait corked.
    expect(client.writableLength).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.write('e');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(chunks).toEqual(['abcd', 'e']);
  });

  it('leaves an object that is no socket alone', () => {
    expect(() => coalesceWrites({ connection: {} } as unknown as ChannelModel)).not.toThrow();
  });

  it('sends the WebSocket frames of one turn (a graphql-ws fan-out) as one write, readable as the messages sent', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    try {
      await new Promise<void>((resolve) => wss.once('listening', resolve));
      const serverSide = new Promise<{ ws: WebSocket; raw: Socket }>((resolve) =>
        wss.once('connection', (ws, request) => {
          coalesceSocketWrites(request.socket);
          resolve({ ws, raw: request.socket });
        }),
      );
      const peer = new WebSocket(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`);
      const received: string[] = [];
      peer.on('message', (data) => received.push(data.toString()));
      await new Promise<void>((resolve) => peer.once('open', resolve));
      const { ws, raw } = await serverSide;
      const messages = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: String(i), type: 'next', payload: { data: { n: i } } }));
      for (const message of messages) ws.send(message);
      // All twenty frames still wait corked: nothing reached the kernel during the turn.
      expect(raw.writableLength).toBe(messages.reduce((bytes, m) => bytes + 2 + Buffer.byteLength(m), 0));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(raw.writableLength).toBe(0);
      expect(received).toEqual(messages);
      peer.close();
    } finally {
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });
});
