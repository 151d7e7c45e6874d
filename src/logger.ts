import { pino, type Logger } from 'pino';

export type { Logger };

export const LogFormats = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LogFormats)[number];

/**
 * JSON lines for machines (one object per line, what log shippers read); readable lines, one per
 * event, when a person watches a terminal. `auto` decides by whether stdout is a terminal.
 * The readable lines come from pino-pretty in pino's transport thread, off the event loop.
 */
export function createLogger(options: { level: string; name?: string; format?: LogFormat }): Logger {
  const format = options.format ?? 'auto';
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  return pino({
    level: options.level,
    name: options.name ?? 'checkout-platform',
    ...(pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name', singleLine: true, colorize: process.stdout.isTTY === true },
          },
        }
      : {}),
  });
}
