import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/infra/embedded-postgres.js';
import { createLogger } from '../src/logger.js';
import { projectRoot } from '../src/infra/project-root.js';

/**
 * `npm test` after the build: runs tap (arguments passed on) against the Postgres the tests need.
 *
 * - TEST_DATABASE_URL set to a URL: that server (CI uses the machine's Postgres).
 * - TEST_DATABASE_URL unset and a Postgres answering on 127.0.0.1:5432: that one, as before.
 * - TEST_DATABASE_URL unset and nothing on 5432, or TEST_DATABASE_URL=embedded: an embedded
 *   Postgres started once for the whole run, as `npm start` starts one, its data directory under
 *   the system temp dir, stopped and removed afterwards. A fresh machine needs Node and nats-server
 *   (the test files spawn their own) and nothing else.
 */
const DefaultPort = 5432;

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const settle = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000);
    socket.once('connect', () => settle(true));
    socket.once('timeout', () => settle(false));
    socket.once('error', () => settle(false));
  });
}

async function startEmbedded(): Promise<{ adminUrl: string; stop(): Promise<void> }> {
  const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'warn' });
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cp-test-postgres-'));
  // As root the embedded Postgres runs as the postgres user, which must be able to enter it.
  await chmod(dataDir, 0o755);
  let database: EmbeddedDatabase;
  try {
    database = await startEmbeddedPostgres({ dataDir, log });
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const adminUrl = new URL(database.url);
  adminUrl.pathname = '/postgres';
  return {
    adminUrl: adminUrl.toString(),
    async stop() {
      await database.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function runTap(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const tap = path.join(projectRoot(), 'node_modules', '.bin', 'tap');
  const child = spawn(tap, args, { stdio: 'inherit', env });
  // Ctrl-C reaches tap through the terminal; the embedded Postgres is stopped when it has ended.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

async function main(): Promise<number> {
  const wanted = process.env.TEST_DATABASE_URL;
  const embedded = wanted === 'embedded' || (!wanted && !(await answers(DefaultPort)));
  if (!embedded) return runTap(process.argv.slice(2), process.env);

  process.stdout.write(`test: ${wanted ? 'TEST_DATABASE_URL=embedded' : `nothing answers on 127.0.0.1:${DefaultPort}`}: starting an embedded Postgres for this run\n`);
  const database = await startEmbedded();
  try {
    return await runTap(process.argv.slice(2), { ...process.env, TEST_DATABASE_URL: database.adminUrl });
  } finally {
    await database.stop();
  }
}

process.exitCode = await main();
