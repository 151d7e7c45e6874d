import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../src/infra/project-root.js';

/** A stand-in of an outside service in its own process (stand-in-process.ts), and how the bench talks to it. */
export interface StandInProcess<Info> {
  /** What it wrote when it listened (its url, and for fiskaly the TSS and credentials). */
  info: Info;
  pid: number;
  set(options: Record<string, unknown>): Promise<void>;
  stats<T>(): Promise<T>;
  stop(): Promise<void>;
}

export async function startStandInProcess<Info>(kind: 'fiskaly' | 'fulfillment'): Promise<StandInProcess<Info>> {
  const child = spawn(process.execPath, [path.join(projectRoot(), 'dist/bench/stand-in-process.js'), kind], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  // Each line answers the oldest command not yet answered; the first one is the listening line.
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = () =>
    new Promise<string>((resolve, reject) => {
      waiting.push(resolve);
      void exited.then(() => reject(new Error(`the ${kind} stand-in exited`)));
    });
  const send = async (command: object) => {
    const answer = next();
    child.stdin!.write(`${JSON.stringify(command)}\n`);
    return JSON.parse(await answer) as unknown;
  };
  const info = JSON.parse(await next()) as Info;
  return {
    info,
    pid: child.pid!,
    set: async (options) => void (await send({ set: options })),
    stats: async <T>() => (await send({ stats: true })) as T,
    async stop() {
      child.stdin!.end();
      await exited;
    },
  };
}
