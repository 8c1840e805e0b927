import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  level: string;
  format: 'json' | 'pretty';
  name?: string;
}

/** JSON lines in production; pino-pretty's readable lines in development. */
export function createLogger(options: LoggerOptions): Logger {
  if (options.format === 'pretty') {
    return pino({
      name: options.name ?? 'jiaowu-jobs',
      level: options.level,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } },
    });
  }
  return pino({ name: options.name ?? 'jiaowu-jobs', level: options.level });
}

/** For tests and tools that want no output. */
export const silentLogger: Logger = pino({ level: 'silent' });
