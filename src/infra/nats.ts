import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { access, constants, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { connect, credsAuthenticator, errors, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../logger.js';
import { findExecutable, freePort, stopLeftoverServer } from './processes.js';
import type { ChildExit, RunningChild } from './supervise.js';

/**
 * Connects to NATS_URL: one server or the comma-separated nodes of a cluster (the client also learns
 * the nodes a server names). It waits for a server to answer at start, and once connected it never
 * gives up: when its server goes away it moves to another node (or waits for the one to return),
 * and its subscriptions move with it.
 */
export interface NatsConnectOptions {
  url: string;
  name: string;
  log: Logger;
  /** The .creds file of the user to connect as (NATS_CREDS); unset: no credentials. */
  creds?: string;
  /** TLS (NATS_TLS_*): the CA to trust, and a client certificate when the servers ask for one. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export async function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  const servers = options.url.split(',').map((s) => s.trim()).filter(Boolean);
  const authenticator = options.creds ? credsAuthenticator(credsOnEachConnect(options.creds, await readCreds(options.creds))) : undefined;
  // The client says nothing while it waits for a first server: say it here.
  const waiting = setInterval(() => options.log.warn({ servers }, 'waiting for NATS to answer'), 5000);
  try {
    const nc = await connect({
      servers,
      name: options.name,
      // Async traces allocate an Error per request to improve stack traces: too costly on the hot path.
      noAsyncTraces: true,
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // A node that vanishes without closing its sockets (a host lost) is noticed by pings: after
      // three unanswered ones 10 s apart instead of the default two minutes.
      pingInterval: 10_000,
      maxPingOut: 3,
      ...(authenticator ? { authenticator } : {}),
      ...(options.tls ? { tls: options.tls } : {}),
    });
    void logStatus(nc, options.log);
    return nc;
  } finally {
    clearInterval(waiting);
  }
}

/**
 * How long after a move to another NATS node a refused reply is the move's doing: a worker may
 * answer a request once (its user's response permission), and the node that delivered the request
 * holds that permission, not the one the worker moved to.
 */
const ReplyAfterMoveMs = 10_000;

async function logStatus(nc: NatsConnection, log: Logger): Promise<void> {
  let movedAt = -Infinity;
  for await (const status of nc.status()) {
    if (status.type === 'error' && status.error instanceof errors.PermissionViolationError) {
      const { operation, subject, queue } = status.error;
      if (operation === 'publish' && subject.startsWith('_INBOX.') && performance.now() - movedAt < ReplyAfterMoveMs) {
        log.warn({ subject }, 'NATS refused a reply sent just after this process moved to another node (the node before held its permission): its requester times out or asks again');
      } else {
        // A subject this process's user may not use: a gap in its permissions or a bug, never load.
        log.error({ operation, subject, queue }, 'NATS refused a subject this process used: its user lacks the permission');
      }
    } else if (status.type === 'error' && (status.error instanceof errors.AuthorizationError || status.error instanceof errors.UserAuthenticationExpiredError)) {
      log.error({ err: status.error }, 'NATS refused this process\'s credentials');
    } else if (status.type === 'disconnect' || status.type === 'error') log.warn({ status }, 'NATS connection trouble');
    else if (status.type === 'reconnect') {
      movedAt = performance.now();
      log.info({ server: status.server }, 'NATS reconnected');
    }
  }
}

/**
 * The .creds file read again each time the client connects: a role's credential renewed (npm run
 * nats-auth -- --renew, which writes the file whole) is taken at the reconnect that the revocation
 * of the old one causes. A file that cannot be read then leaves the last one read. Refused twice in
 * a row, the client stops trying and the connection closes (the service then exits: start.ts).
 *
 * The client asks twice per connect (for the JWT, then for the seed): a read serves every ask
 * within OneConnectMs, so that both halves come from one version of the file and it is read once.
 */
function credsOnEachConnect(file: string, first: Uint8Array): () => Uint8Array {
  let last = first;
  let readAt = -Infinity;
  return () => {
    if (performance.now() - readAt < OneConnectMs) return last;
    try {
      last = readFileSync(file);
      readAt = performance.now();
    } catch {
      // The last one read; the server says whether it still holds.
    }
    return last;
  };
}

const OneConnectMs = 100;

/** A .creds file's bytes, or one clear error naming it. */
async function readCreds(file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new NatsSetupError(`NATS_CREDS: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** NATS cannot be set up as configured (no nats-server to spawn, unreadable credentials): the start ends with its message. */
export class NatsSetupError extends Error {
  override name = 'NatsSetupError';
}

/** The nats-server to spawn: NATS_SERVER_BIN, else the one on PATH; one clear error when there is none. */
export async function natsServerBinary(configured?: string): Promise<string> {
  const bin = configured ?? (await findExecutable('nats-server'));
  if (!bin || !(await access(bin, constants.X_OK).then(() => true, () => false))) {
    throw new NatsSetupError(
      `${configured ? `nats-server could not be started (${configured} is not an executable)` : 'nats-server not found'}: install it (Debian: apt install nats-server; others: https://github.com/nats-io/nats-server/releases) or set NATS_URL to a running NATS with JetStream`,
    );
  }
  return bin;
}

export interface SpawnedNatsServer extends RunningChild {
  url: string;
  port: number;
  pid: number;
}

/**
 * The default when NATS_URL is unset: a nats-server child with JetStream, its store under the data
 * directory, on a free loopback port.
 */
export async function startNatsServer(options: {
  storeDir: string;
  bin?: string;
  log: Logger;
  /** Serve nats-server's HTTP monitoring (/connz, /jsz) on this loopback port. Default: off. */
  monitorPort?: number;
  /** Listen on this port when it is free (else on any free one). Default: any. */
  preferredPort?: number;
  /** Listen on exactly this port (a restart: clients reconnect to the address they know). */
  port?: number;
  /** A configuration file with what flags cannot say (a cluster node's name and routes); the flags win. Default: none. */
  configFile?: string;
}): Promise<SpawnedNatsServer> {
  const bin = await natsServerBinary(options.bin);
  const storeDir = path.resolve(options.storeDir);
  await mkdir(storeDir, { recursive: true });
  const pidFile = path.join(storeDir, 'nats-server.pid');
  if (await stopLeftoverServer(pidFile, storeDir)) options.log.warn({ storeDir }, 'stopped a nats-server left running by an earlier start');

  const port = options.port ?? (await freePort(options.preferredPort));
  const monitoring = options.monitorPort ? ['-m', String(options.monitorPort)] : [];
  const config = options.configFile ? ['-c', options.configFile] : [];
  const child = spawn(bin, [...config, '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, '-P', pidFile, ...monitoring], {
    stdio: ['ignore', 'ignore', 'pipe'],
    // A process group of its own: Ctrl-C in a terminal signals the service's group, and the server
    // must not stop before the service has drained its connection (the service stops it then).
    detached: true,
  });
  let output = '';
  const exited = new Promise<ChildExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  await new Promise<void>((resolve, reject) => {
    child.once('error', (err) => reject(new NatsSetupError(`nats-server could not be started (${bin}): ${err.message}`)));
    child.stderr.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      if (output.includes('Server is ready')) resolve();
    });
    void exited.then(({ code, signal }) => reject(new Error(`nats-server exited (${code ?? signal}) before it was ready: ${output.trim()}`)));
  });
  child.stderr.removeAllListeners('data');
  child.stderr.resume();
  // If this process dies without stopping it, the server must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.removeListener('exit', killOnExit));
  options.log.info({ port, storeDir, pid: child.pid }, 'nats-server started');

  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? 0,
    exited,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
