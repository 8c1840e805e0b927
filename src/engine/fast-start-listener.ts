import type { ClientConfig } from 'pg';
import type { Logger } from 'pino';
import { ListenConnection } from './db/listen-connection';
import { JOB_READY_CHANNEL } from './queries/insert-job';
import { asJobId, asOutboxId, type JobMessage } from './types';

/**
 * Starts a job the moment its enqueue commits, in a worker with a free slot for its
 * kind, instead of after its message has crossed the broker (a quorum queue writes the
 * message to its log before delivering it: about 1.5 ms here, more than the claim).
 *
 * Each enqueue NOTIFYs `JOB_READY_CHANNEL`; every worker process LISTENs and offers the
 * job to its runner, which claims it with the usual fenced claim — so among several idle
 * workers one wins and the others' claims find it taken. The broker message is sent all
 * the same and stays the guarantee: a notification lost (this connection down, no slot
 * free) costs only time, and the message's copy of a job already started is settled
 * with it (see KindConsumer.offer).
 */
export class FastStartListener {
  private readonly connection: ListenConnection;

  constructor(deps: { connection: ClientConfig; logger: Logger; offer: (message: JobMessage) => void }) {
    this.connection = new ListenConnection({
      connection: deps.connection,
      channel: JOB_READY_CHANNEL,
      logger: deps.logger,
      onNotification: (payload) => {
        const message = parseJobReady(payload);
        if (message) deps.offer(message);
        else deps.logger.debug({ payload: payload.slice(0, 200) }, 'job-ready notification not understood; ignored');
      },
    });
  }

  start(): Promise<void> {
    return this.connection.start();
  }

  stop(): Promise<void> {
    return this.connection.stop();
  }
}

/** `<outbox id> <job id> <kind>` (see JOB_READY_CHANNEL), or undefined for anything else. */
export function parseJobReady(payload: string): JobMessage | undefined {
  const [outboxId, jobId, kind, ...rest] = payload.split(' ');
  if (!outboxId || !jobId || !kind || rest.length > 0 || !UUID.test(outboxId) || !UUID.test(jobId)) return undefined;
  return { outboxId: asOutboxId(outboxId), jobId: asJobId(jobId), kind };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
