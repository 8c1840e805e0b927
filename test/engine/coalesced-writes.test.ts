import { createServer, connect, type Server, type Socket } from 'node:net';
import type { ChannelModel } from 'amqplib';
import { afterEach, describe, expect, it } from 'vitest';
import { coalesceWrites } from '../../src/engine/transport/coalesced-writes';

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
});
