import type { Channel } from 'amqplib';
import { withTimeout } from './with-timeout';

/**
 * How long a channel's close waits for the broker's Close-Ok. amqplib's `close()` never
 * settles when the connection dies after the Close leaves and before its Close-Ok comes
 * (the lost connection moves the channel to closed without calling the close back), and
 * a blocked connection (a resource alarm) holds it for as long as the alarm lasts.
 */
export const CHANNEL_CLOSE_TIMEOUT_MS = 2_000;

/**
 * Closes `channel`, waiting at most `timeoutMs`; never rejects. A channel that does not
 * close in time is abandoned: a lost connection has closed it already, and a live one
 * closes it with the connection.
 */
export async function closeChannel(channel: Channel, timeoutMs = CHANNEL_CLOSE_TIMEOUT_MS): Promise<void> {
  let closing: Promise<void>;
  try {
    closing = channel.close();
  } catch {
    return; // closed already
  }
  await withTimeout(closing, timeoutMs, 'channel close not answered').catch(() => undefined);
}
