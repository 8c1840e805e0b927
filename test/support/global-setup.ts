// Runs once before the test files: PostgreSQL must answer; RabbitMQ must answer under
// CI=true, and otherwise its absence is announced loudly (its test files then skip).
// Test files learn the outcome from process.env.JIAOWU_TEST_RABBIT ('1' | '0') and from
// `inject('rabbitAvailable')`.
// A type-only import of 'vitest' puts the module into programs that contain no test
// file (tsconfig.build.json), so the augmentation below resolves; nothing is emitted.
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { reapOrphanedPrivatePostgres } from './private-postgres.js';
import { reapOrphanedPrivateRabbits } from './private-rabbit.js';
import { dropStaleTestDatabases, postgresAvailable, rabbitAvailable, rabbitUrl, RABBIT_ENV_FLAG, redact, testDatabaseUrl } from './services.js';

declare module 'vitest' {
  export interface ProvidedContext {
    rabbitAvailable: boolean;
    databaseUrl: string;
    rabbitUrl: string;
  }
}

function banner(lines: string[]): string {
  const bar = '#'.repeat(78);
  return `\n${bar}\n${lines.map((line) => `## ${line}`).join('\n')}\n${bar}\n`;
}

async function reapOrphans(): Promise<void> {
  const rabbits = reapOrphanedPrivateRabbits();
  const postgres = await reapOrphanedPrivatePostgres();
  if (rabbits + postgres > 0) {
    console.warn(`removed ${rabbits} private RabbitMQ node(s) and ${postgres} private PostgreSQL server(s) left by dead test processes`);
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await reapOrphans();
  const databaseUrl = testDatabaseUrl();
  const amqpUrl = rabbitUrl();
  const [postgresUp, rabbitUp] = await Promise.all([postgresAvailable(databaseUrl), rabbitAvailable(amqpUrl, 3000)]);

  if (!postgresUp) {
    throw new Error(
      banner([
        `PostgreSQL does not answer at ${redact(databaseUrl)}.`,
        'Start the machine’s server:',
        '  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
        'or point DATABASE_URL at a running server.',
      ]),
    );
  }

  if (!rabbitUp) {
    const lines = [
      `RabbitMQ does not answer at ${redact(amqpUrl)}.`,
      'Start it with `rabbitmq-server -detached` (or set RABBITMQ_URL).',
    ];
    if (process.env.CI === 'true') {
      throw new Error(banner([...lines, 'CI=true: tests that need RabbitMQ must not be skipped.']));
    }
    console.warn(banner([...lines, 'RABBITMQ TESTS WILL BE SKIPPED (this is an error under CI=true).']));
  }

  const stale = await dropStaleTestDatabases();
  if (stale.length > 0) console.warn(`dropped ${stale.length} test database(s) older than 6 h: ${stale.join(', ')}`);

  // Workers are forked after this, with this environment.
  process.env[RABBIT_ENV_FLAG] = rabbitUp ? '1' : '0';
  project.provide('rabbitAvailable', rabbitUp);
  project.provide('databaseUrl', databaseUrl);
  project.provide('rabbitUrl', amqpUrl);

  // Teardown: private servers of workers that were killed (e.g. on a timeout).
  return reapOrphans;
}
