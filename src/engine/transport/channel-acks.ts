import type { Channel, Message } from 'amqplib';

/**
 * Acknowledges the deliveries of one consumer channel, many in one frame where that is
 * safe. Acks asked for in one turn of the event loop go out together at the end of it:
 * the unbroken run of acked deliveries from the oldest one still unsettled goes as a
 * single `basic.ack` with `multiple` (it settles every delivery up to its tag, so it is
 * sent only when each of them is acked); an ack behind a delivery still running goes
 * alone. A nack goes at once and leaves the run, so no `multiple` ever settles a
 * delivery that is still running or was handed back.
 */
export class ChannelAcks {
  /** Delivery tags not yet settled, oldest first (the broker numbers them upwards). */
  private readonly unsettled = new Set<number>();
  private readonly acked = new Map<number, Message>();
  private scheduled = false;

  constructor(
    private readonly channel: Channel,
    /** True once the channel is closed: the broker requeued its deliveries, nothing is sent. */
    private readonly isClosed: () => boolean,
    /** An ack the channel refused as it closed (the broker requeues those deliveries anyway). */
    private readonly onAckError: (error: unknown) => void,
  ) {}

  delivered(message: Message): void {
    this.unsettled.add(message.fields.deliveryTag);
  }

  ack(message: Message): void {
    this.acked.set(message.fields.deliveryTag, message);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Hands a delivery back (or drops it) now. */
  nack(message: Message, requeue: boolean): void {
    this.unsettled.delete(message.fields.deliveryTag);
    this.acked.delete(message.fields.deliveryTag);
    if (!this.isClosed()) this.channel.nack(message, false, requeue);
  }

  /** Sends the acks asked for so far (also before the channel is closed on purpose). */
  flush(): void {
    try {
      this.send();
    } catch (error) {
      this.acked.clear();
      this.onAckError(error);
    }
  }

  private send(): void {
    this.scheduled = false;
    if (this.acked.size === 0) return;
    if (this.isClosed()) {
      this.acked.clear();
      this.unsettled.clear();
      return;
    }
    let lastOfRun: Message | undefined;
    for (const tag of this.unsettled) {
      const message = this.acked.get(tag);
      if (!message) break;
      lastOfRun = message;
    }
    if (lastOfRun) {
      const upTo = lastOfRun.fields.deliveryTag;
      for (const tag of this.unsettled) {
        if (tag > upTo) break;
        this.unsettled.delete(tag);
        this.acked.delete(tag);
      }
      this.channel.ack(lastOfRun, true);
    }
    for (const [tag, message] of this.acked) {
      this.unsettled.delete(tag);
      this.channel.ack(message, false);
    }
    this.acked.clear();
  }
}
