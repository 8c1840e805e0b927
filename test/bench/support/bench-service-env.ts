import { randomBytes } from 'node:crypto';
import { rabbitUrl } from '../../support/services';

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
