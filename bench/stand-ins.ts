import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../src/infra/project-root.js';

/**
 * The stand-ins of outside services a bench scenario can run in a process of their own
 * (stand-in-process.ts): what each tells when it listens, what it can be set to, and what it counts.
 */
export interface StandIns {
  fiskaly: {
    info: { url: string; tssId: string; apiKey: string; apiSecret: string; adminPin: string };
    settings: { delayMs?: number };
    stats: { signatures: number; calls: number; revisionCalls: number };
  };
  fulfillment: {
    info: { url: string };
    settings: { failureRate?: number };
    /** `applied`: each Idempotency-Key the service applied, with the state it was asked for. */
    stats: { calls: number; applied: Array<[string, string]> };
  };
  webhook: {
    /** `url` on http, `tlsUrl` on https with a certificate the CA in `caFile` signed. */
    info: { url: string; tlsUrl: string; caFile: string };
    /** `reset`: forget what was received (a new phase). */
    settings: { reset?: boolean };
    /** Deliveries received, distinct webhook-ids, and the time from each event to its arrival (ms): p50, p99, max. */
    stats: { received: number; distinct: number; p50Ms: number; p99Ms: number; maxMs: number };
  };
}
export type StandInKind = keyof StandIns;

export interface StandInProcess<K extends StandInKind> {
  info: StandIns[K]['info'];
  pid: number;
  set(settings: StandIns[K]['settings']): Promise<void>;
  stats(): Promise<StandIns[K]['stats']>;
  stop(): Promise<void>;
}

export async function startStandInProcess<K extends StandInKind>(kind: K): Promise<StandInProcess<K>> {
  const child = spawn(process.execPath, [path.join(projectRoot(), 'dist/bench/stand-in-process.js'), kind], { stdio: ['pipe', 'pipe', 'inherit'] });
  // Each line answers the oldest command not yet answered; the first one is the listening line.
  const waiting: Array<{ resolve(line: string): void; reject(err: Error): void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => waiting.shift()?.resolve(line));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => waiting.splice(0).forEach((w) => w.reject(new Error(`the ${kind} stand-in exited`))));
  const next = () => new Promise<string>((resolve, reject) => waiting.push({ resolve, reject }));
  const send = async (command: object) => {
    const answer = next();
    child.stdin!.write(`${JSON.stringify(command)}\n`);
    return JSON.parse(await answer) as unknown;
  };
  const info = JSON.parse(await next()) as StandIns[K]['info'];
  return {
    info,
    pid: child.pid!,
    set: async (settings) => void (await send({ set: settings })),
    stats: async () => (await send({ stats: true })) as StandIns[K]['stats'],
    async stop() {
      child.stdin!.end();
      await exited;
    },
  };
}
