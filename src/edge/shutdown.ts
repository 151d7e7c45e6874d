import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../logger.js';

/**
 * The edge's part of a graceful shutdown (SIGTERM, SIGINT, SIGHUP: service/main.ts). While it
 * drains, /health/ready answers 503 and every answer says `Connection: close`, so that clients
 * and load balancers open their next connection elsewhere. Requests that arrive on a connection
 * that is still open are served as usual (Fastify's `return503OnClosing` is off): a rolling
 * restart shows no 5xx, only refused connections, which clients retry.
 */
export interface EdgeDrain {
  readonly draining: boolean;
}

export interface DrainState extends EdgeDrain {
  draining: boolean;
}

export function createDrainState(): DrainState {
  return { draining: false };
}

export function registerDrain(app: FastifyInstance, state: EdgeDrain): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (state.draining) reply.header('connection', 'close');
    done(null, payload);
  });
}

export interface DrainOptions {
  /** How long new connections are still taken while /health/ready says 503 (SHUTDOWN_DELAY_MS). */
  delayMs: number;
  /** How long requests in flight may take after that before their connections are closed (SHUTDOWN_GRACE_MS). */
  graceMs: number;
  log: Logger;
}

/** Drains the edge: not ready at once, then no new connections, then closed when the requests in flight are done. */
export async function drainEdge(app: FastifyInstance, state: DrainState, options: DrainOptions): Promise<void> {
  const { delayMs, graceMs, log } = options;
  state.draining = true;
  if (delayMs > 0) {
    log.info({ delayMs }, 'draining: /health/ready answers 503; new connections are still taken');
    await sleep(delayMs);
  }
  log.info({ graceMs }, 'draining: no new connections; waiting for the requests in flight');
  // Fastify's close stops listening, closes idle connections and resolves once the busy ones are done.
  const cut = setTimeout(() => {
    log.warn({ graceMs }, 'shutdown grace is over: closing the connections of requests still running');
    app.server.closeAllConnections();
  }, graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
