/**
 * One engine process of `bench:engine --scale`, started by scale.ts with an IPC channel:
 * a worker (consumes and runs no-op jobs; no publisher) or an API process (enqueues
 * from its clients when asked; publishes the outbox; runs no jobs). Both talk to the
 * shared PostgreSQL and RabbitMQ named in its environment.
 */
import 'reflect-metadata';
import { openDatabase } from '../../../src/database';
import { RabbitMqEventBus } from '../../../src/engine/events/rabbitmq-event-bus';
import { jobEventsHoldMs } from '../../../src/engine/publisher';
import { silentLogger } from '../../../src/engine/logger';
import { RabbitMqTransport } from '../../../src/engine/transport/rabbitmq-transport';
import { buildEngine } from '../../support/engine-harness';

export type EngineProcessRole = 'worker' | 'api';
export type ToEngineProcess = { type: 'enqueue'; id: number; seconds: number; clients: number } | { type: 'stop'; id: number };
export type FromEngineProcess =
  | { type: 'ready' }
  | { type: 'enqueued'; id: number; count: number }
  | { type: 'stopped'; id: number }
  | { type: 'failed'; error: string };

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

async function main(): Promise<void> {
  const role = env('BENCH_ROLE') as EngineProcessRole;
  const kinds = env('BENCH_KINDS').split(',');
  const consumers = Number(env('BENCH_CONSUMERS'));
  const prefetch = Number(env('BENCH_PREFETCH'));
  const claimAhead = Number(env('BENCH_CLAIM_AHEAD'));
  const jobsPerMessage = Number(env('BENCH_JOBS_PER_MESSAGE'));
  const url = env('BENCH_RABBITMQ_URL');
  const prefix = env('BENCH_RABBITMQ_PREFIX');
  const send = (message: FromEngineProcess) => process.send?.(message);
  // Few connections each: several of these processes share one server with other users.
  const db = await openDatabase({ url: env('BENCH_DATABASE_URL'), poolSize: role === 'api' ? 10 : 6, logger: silentLogger, migrate: false });
  const transport = new RabbitMqTransport({
    url,
    prefix,
    logger: silentLogger,
    jobsPerMessage: Object.fromEntries(kinds.map((kind) => [kind, jobsPerMessage])),
  });
  // Events held back as the service's bus holds them (the default head start, where the process enqueues).
  const bus = new RabbitMqEventBus({ url, prefix, logger: silentLogger, receive: 'control', holdMs: jobEventsHoldMs({}, role === 'api') });
  const engine = buildEngine({
    db,
    transport,
    bus,
    registrations: kinds.map((kind) => ({ kind, defaults: { consumers, prefetch, claimAhead }, processor: async () => null })),
    settings: { consumers: Object.fromEntries(kinds.map((k) => [k, consumers])), publisherBatchSize: 500 },
    roles: { publisher: role === 'api', worker: role === 'worker', maintenance: false },
  });
  await engine.start();
  process.on('message', (message: ToEngineProcess) => {
    if (message.type === 'enqueue') {
      void (async () => {
        const deadline = Date.now() + message.seconds * 1000;
        let count = 0;
        await Promise.all(
          Array.from({ length: message.clients }, async (_, client) => {
            while (Date.now() < deadline) {
              await engine.enqueue({ kind: kinds[client % kinds.length]!, input: { client } });
              count++;
            }
          }),
        );
        send({ type: 'enqueued', id: message.id, count });
      })().catch((error: unknown) => send({ type: 'failed', error: String(error) }));
    } else if (message.type === 'stop') {
      void (async () => {
        await engine.stop(5_000);
        await bus.close();
        await transport.close();
        await db.close();
        send({ type: 'stopped', id: message.id });
        process.exit(0);
      })();
    }
  });
  send({ type: 'ready' });
}

main().catch((error: unknown) => {
  process.send?.({ type: 'failed', error: String(error instanceof Error ? error.stack : error) });
  process.exit(1);
});
