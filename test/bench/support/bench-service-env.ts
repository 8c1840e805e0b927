import { randomBytes } from 'node:crypto';
import { rabbitUrl } from '../../support/services';

/**
 * The node flags the service runs with: `npm start` (package.json) and the Docker image's
 * CMD give node exactly these (test/node-flags.test.ts holds the three equal), and the
 * benches start their API processes and the scale bench's engine processes with them,
 * so a bench measures what is deployed.
 * - `--no-allocation-site-pretenuring`: short-lived per-event objects stay out of old
 *   space (README: the subscriptions bench; half the major collections).
 * - `--max-semi-space-size=32` (MiB; Node 20's default is 16): a request's garbage dies
 *   in the young generation instead of being promoted by a scavenge that catches it in
 *   flight (README: the API bench; ~20 % less CPU per start).
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring', '--max-semi-space-size=32'];

/** The signing settings of one bench run: the service verifies, the bench's clients sign. */
export interface BenchJwt {
  secret: string;
  issuer: string;
  audience: string;
}

export const newBenchJwt = (): BenchJwt => ({ secret: randomBytes(48).toString('base64url'), issuer: 'jiaowu-bench', audience: 'jiaowu-api' });

/**
 * The environment every bench process of the service shares (support/subscriptions-api.ts
 * reads it through `loadConfig`): a production start on loopback and a free port, the
 * bench's database and RabbitMQ prefix, JWT with issuer and audience, JSON logs, no demo
 * data. Each bench adds its ROLE, pool size and limits.
 */
export function benchServiceEnv(options: { databaseUrl: string; prefix: string; jwt: BenchJwt; logLevel: 'info' | 'warn' }): Record<string, string> {
  return {
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: options.databaseUrl,
    RABBITMQ_URL: rabbitUrl(),
    RABBITMQ_PREFIX: options.prefix,
    JWT_SECRET: options.jwt.secret,
    JWT_ISSUER: options.jwt.issuer,
    JWT_AUDIENCE: options.jwt.audience,
    LOG_LEVEL: options.logLevel,
    LOG_FORMAT: 'json',
    LOAD_DEMO_DATA: 'false',
  };
}
