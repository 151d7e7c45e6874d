import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logger.js';

/**
 * Keeps a child server that the embedded defaults started (nats-server, Postgres) running: when it
 * exits without being asked to, it is started again (the same store and port, so clients simply
 * reconnect) after 0.5 s, 1 s, 2 s, ... up to 10 s. After `maxRestarts` failed starts in a row it
 * gives up and says so through `onGiveUp`, so that whatever runs the service (systemd, Kubernetes)
 * takes over. External services are never supervised: only what this process started.
 */
export interface RunningChild {
  /** Resolves when the child exits, for whatever reason. */
  exited: Promise<ChildExit>;
  /** Stops the child and waits for it. */
  stop(): Promise<void>;
}

export interface ChildExit {
  code: number | null;
  signal: string | null;
}

export const ChildStates = ['running', 'restarting', 'stopped', 'failed'] as const;
export type ChildState = (typeof ChildStates)[number];

export interface ChildStatus {
  state: ChildState;
  /** When the child last exited unexpectedly (ISO time), while it is not running. */
  downSince?: string;
  /** Failed starts since it last exited. */
  failedRestarts: number;
}

export interface SupervisedChild {
  readonly name: string;
  status(): ChildStatus;
  /** Stops the child for good (no restart) and waits for it. */
  stop(): Promise<void>;
}

export class ChildLostError extends Error {
  override name = 'ChildLostError';
}

export interface SuperviseOptions {
  /** How the child is called in logs and in the give-up message ("the embedded Postgres"). */
  name: string;
  /** Starts the child again after it exited; it was started once before supervision began. */
  restart: () => Promise<RunningChild>;
  log: Logger;
  /** Failed starts in a row before giving up (EMBEDDED_MAX_RESTARTS, default 5). */
  maxRestarts: number;
  onGiveUp: (err: ChildLostError) => void;
  /** First delay before a restart (default 500 ms); it doubles after every failure up to `maxDelayMs` (default 10 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

export function superviseChild(first: RunningChild, options: SuperviseOptions): SupervisedChild {
  const { name, log, maxRestarts } = options;
  const initialDelayMs = options.initialDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 10_000;
  let current: RunningChild | undefined = first;
  let status: ChildStatus = { state: 'running', failedRestarts: 0 };
  let starting: Promise<RunningChild> | undefined;
  const stopping = new AbortController();

  const watch = async (child: RunningChild): Promise<void> => {
    const exit = await child.exited;
    if (stopping.signal.aborted) return;
    current = undefined;
    status = { state: 'restarting', downSince: new Date().toISOString(), failedRestarts: 0 };
    log.error({ child: name, ...exit }, `${name} exited unexpectedly: restarting it`);
    let lastError: unknown;
    for (let delay = initialDelayMs; status.failedRestarts < maxRestarts; delay = Math.min(delay * 2, maxDelayMs)) {
      try {
        await sleep(delay, undefined, { signal: stopping.signal });
      } catch {
        return; // stopped while waiting
      }
      try {
        starting = options.restart();
        const child = await starting.finally(() => (starting = undefined));
        if (stopping.signal.aborted) return; // stop() stops it
        current = child;
        log.info({ child: name, downSince: status.downSince, failedRestarts: status.failedRestarts }, `${name} restarted`);
        status = { state: 'running', failedRestarts: 0 };
        void watch(child);
        return;
      } catch (err) {
        lastError = err;
        status = { ...status, failedRestarts: status.failedRestarts + 1 };
        log.error({ err, child: name, failedRestarts: status.failedRestarts, maxRestarts }, `${name} could not be restarted`);
      }
    }
    if (stopping.signal.aborted) return;
    status = { ...status, state: 'failed' };
    options.onGiveUp(
      new ChildLostError(`${name} exited and ${maxRestarts} restarts in a row failed${lastError === undefined ? '' : ` (last: ${oneLine(lastError)})`}: giving up (EMBEDDED_MAX_RESTARTS)`, {
        cause: lastError,
      }),
    );
  };
  void watch(first);

  return {
    name,
    status: () => status,
    async stop() {
      stopping.abort();
      status = { ...status, state: 'stopped' };
      const started = await starting?.catch(() => undefined);
      await (current ?? started)?.stop();
      current = undefined;
    },
  };
}

/** An error as one short line: the give-up message is read on a terminal or in a supervisor's log. */
function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
