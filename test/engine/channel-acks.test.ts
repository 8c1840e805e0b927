import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelAcks } from '../../src/engine/transport/channel-acks';
import { deleteRabbitObjects, rabbitUrl, requireRabbit, uniquePrefix } from '../support/services';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe.runIf(requireRabbit())('ChannelAcks (shared broker)', () => {
  const url = rabbitUrl();
  const prefix = uniquePrefix('channel_acks');
  const queues: string[] = [];
  let model: ChannelModel;

  beforeAll(async () => {
    model = await connect(url);
  });

  afterAll(async () => {
    await model?.close().catch(() => undefined);
    await deleteRabbitObjects(prefix, { queues });
  });

  /** A queue holding `bodies`, consumed on a channel of its own with prefetch = all of them. */
  async function deliver(name: string, bodies: string[]): Promise<{ channel: Channel; got: ConsumeMessage[]; acks: ChannelAcks }> {
    const queue = `${prefix}.${name}`;
    queues.push(queue);
    const setup = await model.createChannel();
    await setup.assertQueue(queue, { durable: false });
    for (const body of bodies) setup.sendToQueue(queue, Buffer.from(body));
    await setup.close();
    const channel = await model.createChannel();
    await channel.prefetch(bodies.length);
    const got: ConsumeMessage[] = [];
    const acks = new ChannelAcks(channel, () => false, (error) => {
      throw error;
    });
    await channel.consume(queue, (message) => {
      if (!message) return;
      acks.delivered(message);
      got.push(message);
    });
    const deadline = Date.now() + 10_000;
    while (got.length < bodies.length && Date.now() < deadline) await sleep(10);
    expect(got.map((m) => m.content.toString())).toEqual(bodies);
    return { channel, got, acks };
  }

  /** What the broker hands back once the channel closes: every delivery it still counts as unacked. */
  async function unackedAfterClose(channel: Channel, queue: string): Promise<string[]> {
    await channel.close();
    const reader = await model.createChannel();
    const back: string[] = [];
    for (;;) {
      const message = await reader.get(queue, { noAck: true });
      if (!message) break;
      back.push(message.content.toString());
    }
    await reader.close();
    return back.sort();
  }

  it('never settles a delivery still running: acks behind it go one by one', async () => {
    const { channel, got, acks } = await deliver('gap', ['a', 'b', 'c', 'd']);
    // b is still running; a, c and d are done in the same turn.
    acks.ack(got[0]!);
    acks.ack(got[2]!);
    acks.ack(got[3]!);
    await sleep(50);
    expect(await unackedAfterClose(channel, `${prefix}.gap`)).toEqual(['b']);
  });

  it('acks an unbroken run in one go, and a nack inside it hands only that delivery back', async () => {
    const { channel, got, acks } = await deliver('run', ['a', 'b', 'c', 'd', 'e']);
    acks.ack(got[0]!);
    acks.nack(got[1]!, true);
    acks.ack(got[2]!);
    acks.ack(got[3]!);
    await sleep(50);
    // e still running; b was handed back (and redelivered to this consumer, unacked).
    expect(await unackedAfterClose(channel, `${prefix}.run`)).toEqual(['b', 'e']);
  });

  it('flush sends waiting acks at once (before a deliberate close)', async () => {
    const { channel, got, acks } = await deliver('flush', ['a', 'b']);
    acks.ack(got[0]!);
    acks.ack(got[1]!);
    acks.flush();
    expect(await unackedAfterClose(channel, `${prefix}.flush`)).toEqual([]);
  });
});
