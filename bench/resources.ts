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

export type ResourceCost = ResourceSample;

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

/** What was spent between two samples, divided by the operations done in between. */
export function costPerOperation(before: ResourceSample, after: ResourceSample, operations: number): ResourceCost {
  const per = (key: keyof ResourceSample, less = 0) => (after[key] - before[key] - less) / Math.max(1, operations);
  return {
    edge: per('edge'),
    workers: per('workers'),
    postgres: per('postgres'),
    nats: per('nats'),
    standIns: per('standIns'),
    transactions: per('transactions', SampleTransactions),
    rows: per('rows'),
    walBytes: per('walBytes'),
    natsMessages: per('natsMessages'),
  };
}

/** Adds `cost`, weighed by its operations, to a running sum (divide by all operations at the end). */
export function addCost(sum: ResourceCost, cost: ResourceCost, operations: number): void {
  for (const key of Object.keys(sum) as Array<keyof ResourceCost>) sum[key] += cost[key] * operations;
}

export function emptyCost(): ResourceCost {
  return { edge: 0, workers: 0, postgres: 0, nats: 0, standIns: 0, transactions: 0, rows: 0, walBytes: 0, natsMessages: 0 };
}

/** The platform's CPU of an operation: its processes, Postgres and NATS; not the stand-ins', not the bench's. */
export function platformCpuMs(cost: ResourceCost): number {
  return cost.edge + cost.workers + cost.postgres + cost.nats;
}
