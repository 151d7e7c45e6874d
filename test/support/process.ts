import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout } from 'node:timers/promises';
import type { Test } from 'tap';
import { projectRoot } from '../../src/infra/project-root.js';

/**
 * Runs a built entry point (dist/) as its own process, the way operators do. `npm test` builds
 * first; running one of these files alone needs `npm run build`.
 */
export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or the signal name). */
  exited: Promise<number | string>;
}

export interface RunOptions {
  /**
   * Start it as the leader of a process group of its own, as a shell starts a command in a
   * terminal: `process.kill(-child.pid, 'SIGINT')` is then what Ctrl-C sends.
   */
  ownGroup?: boolean;
}

export function runBuilt(t: Test, entry: string, env: Record<string, string | undefined>, args: string[] = [], options: RunOptions = {}): ServiceProcess {
  const child = spawn(process.execPath, [path.join(projectRoot(), 'dist', entry), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup ?? false,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.removeListener('exit', killOnExit));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { child, output: () => output, exited };
}

/** Polls a URL until it answers (any status), the process exits, or the time is up. */
export async function waitForHttp(url: string, timeoutMs: number, process?: ServiceProcess): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let exitCode: number | string | undefined;
  void process?.exited.then((code) => (exitCode = code));
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`the process exited (${exitCode}) before ${url} answered: ${process?.output()}`);
    try {
      return await fetch(url);
    } catch (err) {
      lastError = err;
      await setTimeout(100);
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`, { cause: lastError });
}

/** Processes whose command line mentions a path (children a service left behind). */
export async function processesMentioning(fragment: string): Promise<string[]> {
  const { readdir, readFile } = await import('node:fs/promises');
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(fragment)) found.push(`${pid}: ${cmdline.replace(/\0/g, ' ')}`);
  }
  return found;
}
