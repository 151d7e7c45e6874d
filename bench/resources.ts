import type postgres from 'postgres';
import { processCpuMs } from './cpu.js';
import type { Bench } from './harness.js';

/**
 * What operations cost in resources that do not depend on the machine's mood, beside the CPU each
 * part spent: Postgres transactions and rows written (the bench database's pg_stat_database), WAL
 * written (the WAL position), and NATS messages (the bench's nats-server's /varz, in and out). The
 * service runs split (ROLE=edge, ROLE=workers: `startBench({topology: 'split'})`) so that the edge's
 * CPU and the workers' are told apart. Used by the `capacity` and `cost` scenarios.
 */
export interface ResourceSample {
  edge: number;
  workers: number;
  postgres: number;
  nats: number;
  /** The stand-ins of outside services (fiskaly, the fulfillment service), not the platform's. */
  standIns: number;
  transactions: number;
  rows: number;
  walBytes: number;
  natsMessages: number;
}

/** Reads the counters; `standInPids` are the stand-ins' processes. */
export function resourceSampler(bench: Bench, sql: postgres.Sql, standInPids: readonly number[] = []): () => Promise<ResourceSample> {
  const [workersPid, edgePid] = bench.pids as [number, number];
  return async () => {
    const [cpu, edge, workers, standIns, [db], [wal], varz] = await Promise.all([
      bench.cpu.sample(),
      processCpuMs(edgePid),
      processCpuMs(workersPid),
      Promise.all(standInPids.map(processCpuMs)).then((ms) => ms.reduce((a, b) => a + b, 0)),
      sql<{ transactions: string; rows: string }[]>`
        select xact_commit + xact_rollback as transactions, tup_inserted + tup_updated + tup_deleted as rows
        from pg_stat_database where datname = current_database()`,
      sql<{ lsn: string }[]>`select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as lsn`,
      fetch(`${bench.natsMonitorUrl}/varz`).then((r) => r.json() as Promise<{ in_msgs: number; out_msgs: number }>),
    ]);
    return {
      edge,
      workers,
      postgres: cpu.postgres,
      nats: cpu['nats-server'],
      standIns,
      transactions: Number(db!.transactions),
      rows: Number(db!.rows),
      walBytes: Number(wal!.lsn),
      natsMessages: varz.in_msgs + varz.out_msgs,
    };
  };
}

/** The transactions a sample itself makes (its two statements, each one): not the operations'. */
const SampleTransactions = 2;

/** Postgres backends report their statistics at most once a second: wait that long before reading them. */
export function statisticsReported(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1500));
}

const Fields = ['edge', 'workers', 'postgres', 'nats', 'standIns', 'transactions', 'rows', 'walBytes', 'natsMessages'] as const satisfies ReadonlyArray<keyof ResourceSample>;

function eachField(value: (field: keyof ResourceSample) => number): ResourceSample {
  return Object.fromEntries(Fields.map((field) => [field, value(field)])) as unknown as ResourceSample;
}

export function noResources(): ResourceSample {
  return eachField(() => 0);
}

/** What was spent between two samples (the first sample's own statements not counted). */
export function spentBetween(before: ResourceSample, after: ResourceSample): ResourceSample {
  return eachField((field) => after[field] - before[field] - (field === 'transactions' ? SampleTransactions : 0));
}

/** Adds what a phase spent to a running total. */
export function addSpent(total: ResourceSample, spent: ResourceSample): void {
  for (const field of Fields) total[field] += spent[field];
}

/** What was spent, divided by the operations it was spent on. */
export function perOperation(spent: ResourceSample, operations: number): ResourceSample {
  return eachField((field) => spent[field] / Math.max(1, operations));
}

/** The platform's CPU of an operation: its processes, Postgres and NATS; not the stand-ins', not the bench's. */
export function platformCpuMs(cost: ResourceSample): number {
  return cost.edge + cost.workers + cost.postgres + cost.nats;
}
