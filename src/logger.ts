import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON lines for machines; readable lines when a person watches a terminal and pino-pretty is installed. */
export function createLogger(options: { level: string; name?: string }): Logger {
  const pretty = process.stdout.isTTY && hasPinoPretty();
  return pino({
    level: options.level,
    name: options.name ?? 'checkout-platform',
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' } } } : {}),
  });
}

function hasPinoPretty(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
