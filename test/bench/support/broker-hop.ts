import * as amqp from 'amqplib';

export type QueueType = 'quorum' | 'classic';

/**
 * RabbitMQ's own share of a start: publish → delivery of one persistent message at a
 * time through a queue of `type`, over plain amqplib (no engine, Nagle off as the
 * transport has it), publisher and consumer in this process. The floor under the
 * engine's enqueue → start latency on RabbitMQ: whatever the engine does, a job's
 * message takes at least this long to reach a runner. Returns the samples (ms) after
 * `warmup` ones.
 */
export async function measureBrokerHop(url: string, queue: string, type: QueueType, samples: number, warmup: number): Promise<number[]> {
  const connection = await amqp.connect(url, { noDelay: true });
  const publisher = await connection.createConfirmChannel();
  try {
    const consumer = await connection.createChannel();
    await publisher.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': type } });
    let delivered: (() => void) | null = null;
    const hops: number[] = [];
    await consumer.consume(queue, (message) => {
      if (!message) return;
      hops.push(performance.now() - Number(message.content.toString('utf8')));
      consumer.ack(message);
      delivered?.();
    });
    for (let i = 0; i < samples + warmup; i++) {
      const arrived = new Promise<void>((resolve) => (delivered = resolve));
      publisher.publish('', queue, Buffer.from(String(performance.now())), { persistent: true });
      await arrived;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return hops.slice(warmup);
  } finally {
    await publisher.deleteQueue(queue).catch(() => undefined);
    await connection.close().catch(() => undefined);
  }
}
