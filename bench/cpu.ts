import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

/**
 * What an operation costs, not only how fast it went: the CPU time each process of a run spent,
 * read from /proc before and after a measured phase and divided by the operations it did. A
 * figure in CPU milliseconds per operation means the same on a fast and a slow day, where req/s
 * drifts with whatever else the machine runs.
 *
 * - service: the service's processes (one, or edge and workers);
 * - postgres: every process of the Postgres server the bench's database lives on (its postmaster and
 *   the processes it started: backends, WAL writer, checkpointer): the server is shared, so what
 *   else it serves at the time counts too; other Postgres servers on the machine do not (when the
 *   postmaster is unknown, every Postgres process does);
 * - nats-server: the bench's own nats-server (found by its store folder);
 * - bench: this process, the load generator (autocannon or the flow driver), and the stand-ins of
 *   outside services it runs in processes of their own (stand-ins.ts).
 */
export const CpuGroups = ['service', 'postgres', 'nats-server', 'bench'] as const;
export type CpuGroup = (typeof CpuGroups)[number];
export type CpuTimes = Record<CpuGroup, number>;

export interface CpuWatch {
  /** CPU milliseconds each group has used so far. */
  sample(): Promise<CpuTimes>;
}

const ClockTicksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process in ms (fields 14 and 15 of /proc/<pid>/stat), 0 once it is gone. */
export async function processCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  return (ticks * 1000) / ClockTicksPerSecond;
}

async function pidsWhere(matches: (comm: string, cmdline: string) => boolean): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [comm, cmdline] = await Promise.all([
      readFile(`/proc/${entry}/comm`, 'utf8').catch(() => ''),
      readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => ''),
    ]);
    if (matches(comm.trim(), cmdline)) pids.push(Number(entry));
  }
  return pids;
}

/** The parent process of a process (PPid in /proc/<pid>/status); undefined once it is gone. */
export async function parentPid(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /^PPid:\s+(\d+)/m.exec(status);
  return match ? Number(match[1]) : undefined;
}

export function cpuWatch(processes: { servicePids: readonly number[]; natsStoreDir: string; benchPids?: readonly number[]; postmasterPid?: number }): CpuWatch {
  const { postmasterPid } = processes;
  const ofServer = async (pid: number) => postmasterPid === undefined || pid === postmasterPid || (await parentPid(pid)) === postmasterPid;
  return {
    async sample() {
      const [postgres, nats] = await Promise.all([
        pidsWhere((comm) => comm === 'postgres').then(async (pids) => (await Promise.all(pids.map(async (pid) => ((await ofServer(pid)) ? [pid] : [])))).flat()),
        pidsWhere((comm, cmdline) => comm === 'nats-server' && cmdline.includes(processes.natsStoreDir)),
      ]);
      const sum = async (pids: readonly number[]) => (await Promise.all(pids.map(processCpuMs))).reduce((a, b) => a + b, 0);
      const own = process.cpuUsage();
      return {
        service: await sum(processes.servicePids),
        postgres: await sum(postgres),
        'nats-server': await sum(nats),
        bench: (own.user + own.system) / 1000 + (await sum(processes.benchPids ?? [])),
      };
    },
  };
}

export function emptyCpuTimes(): CpuTimes {
  return { service: 0, postgres: 0, 'nats-server': 0, bench: 0 };
}

/** Adds what each group spent between two samples to a running total. */
export function addCpuSpent(total: CpuTimes, before: CpuTimes, after: CpuTimes): void {
  for (const group of CpuGroups) total[group] += Math.max(0, after[group] - before[group]);
}

/** What the platform's processes spent (service, Postgres, nats-server): everything but the bench and its stand-ins. */
export function platformCpu(spent: CpuTimes): number {
  return spent.service + spent.postgres + spent['nats-server'];
}

/** Runs a phase and returns what each group spent in it. */
export async function cpuSpentBy<T>(watch: CpuWatch, phase: () => Promise<T>): Promise<{ result: T; spent: CpuTimes }> {
  const before = await watch.sample();
  const result = await phase();
  const spent = emptyCpuTimes();
  addCpuSpent(spent, before, await watch.sample());
  return { result, spent };
}

/** `  CPU per checkout: service 0.21 ms, postgres 0.05 ms, nats-server 0.02 ms, bench 0.04 ms; total 0.32 ms` */
export function formatCpu(spent: CpuTimes, operations: number, operation: string): string {
  if (operations <= 0) return `  CPU per ${operation}: no ${operation} measured`;
  const per = (ms: number) => `${(ms / operations).toFixed(ms / operations < 10 ? 3 : 1)} ms`;
  const total = CpuGroups.reduce((sum, g) => sum + spent[g], 0);
  return `  CPU per ${operation}: ${CpuGroups.map((g) => `${g} ${per(spent[g])}`).join(', ')}; total ${per(total)}`;
}
