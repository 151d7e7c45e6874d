import { access, constants, readFile, unlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Helpers for the child servers the embedded defaults start (Postgres, nats-server). */

/** A free loopback port: `preferred` when it is free, else any. */
export async function freePort(preferred = 0): Promise<number> {
  if (preferred) {
    const taken = await listenOn(preferred).then(
      () => false,
      () => true,
    );
    if (!taken) return preferred;
  }
  return listenOn(0);
}

function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Finds an executable on PATH, also looking in the sbin folders where Debian installs servers. */
export async function findExecutable(name: string): Promise<string | undefined> {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/**
 * A server we started earlier may outlive us when this process is killed hard; its pid file then
 * still names it and it still holds the data directory. Stop it before starting a new one.
 */
export async function stopLeftoverServer(pidFile: string, commandFragment: string): Promise<boolean> {
  const pid = await readPid(pidFile);
  if (pid === undefined || !(await commandLineIncludes(pid, commandFragment))) return false;
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return false;
  }
  for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(100);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  return true;
}

/**
 * Removes a pid file whose pid now belongs to a program other than `commandFragment` (the server it
 * named was killed and the pid handed out again): the server would take it for a running copy of
 * itself and refuse to start. A pid file of a dead pid is left to the server, which knows it is stale.
 */
export async function forgetReusedPid(pidFile: string, commandFragment: string): Promise<boolean> {
  const pid = await readPid(pidFile);
  if (pid === undefined || !isAlive(pid) || (await commandLineIncludes(pid, commandFragment))) return false;
  await unlink(pidFile).catch(() => undefined);
  return true;
}

async function readPid(pidFile: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt((await readFile(pidFile, 'utf8')).split('\n')[0] ?? '', 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function commandLineIncludes(pid: number, fragment: string): Promise<boolean> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).includes(fragment);
  } catch {
    return false;
  }
}

/** Whether a process of that id runs (signal 0). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
