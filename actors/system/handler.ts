import { errors, type NatsConnection } from '@nats-io/transport-node';
import type { Sql } from '../../src/infra/postgres.js';
import { pendingMigrations, type Migration } from '../../src/infra/migrate.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { system, WorkerCensusReply, WorkerPresence, type WorkerHealth } from '../../subjects/system.js';

/**
 * How long the answer may take: less than the edge waits for it (2 s), since while no server takes
 * the pool's connections a query waits for one (postgres.ts) and the answer would come too late.
 */
const HealthQueryMs = 1500;

/** How long a census waits for the workers' answers (each answers at once, unless frozen). */
const CensusGatherMs = 100;
/** How long a probe waits: "no responders" comes at once; a worker that is alive answers or is busy. */
const ProbeWaitMs = 200;

/**
 * Answers the edge's health question with what only a worker can see: the database and its schema.
 * Postgres is `ok` only when a server that takes writes answers: a standby, or a primary set read
 * only, serves nothing the platform does. And takes the census of the worker processes, or probes
 * them, for an edge, which cannot from its own account (subjects/system.ts).
 */
export function createSystemActor(deps: { sql: Sql; nc: NatsConnection; migrations: readonly Migration[] }): Route[] {
  const unavailable: WorkerHealth = { postgres: 'unavailable', migrations: 'pending', pendingMigrations: [] };
  const check = async (): Promise<WorkerHealth> => {
    const [server] = await deps.sql<{ writable: boolean }[]>`select not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off' as writable`;
    if (!server?.writable) return unavailable;
    const pending = await pendingMigrations(deps.sql, deps.migrations);
    return { postgres: 'ok', migrations: pending.length ? 'pending' : 'ok', pendingMigrations: pending };
  };
  return [
    route(system.census, async () => {
      const ids = new Set<string>();
      const answers = await deps.nc.requestMany(WorkerPresence.census, '{}', { strategy: 'timer', maxWait: CensusGatherMs });
      for await (const msg of answers) {
        const reply = WorkerCensusReply.safeParse(parseJson(msg.data));
        if (reply.success) ids.add(reply.data.id);
      }
      return { ids: [...ids] };
    }),
    route(system.probe, async ({ ids }) => {
      const gone = await Promise.all(
        ids.map((id) =>
          deps.nc.request(WorkerPresence.probe(id), '', { timeout: ProbeWaitMs }).then(
            () => undefined,
            (err: unknown) => (isNoResponders(err) ? id : undefined),
          ),
        ),
      );
      return { gone: gone.filter((id): id is string => id !== undefined) };
    }),
    route(system.health, async (): Promise<WorkerHealth> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<WorkerHealth>((resolve) => (timer = setTimeout(() => resolve(unavailable), HealthQueryMs)));
      try {
        return await Promise.race([check().catch(() => unavailable), late]);
      } finally {
        clearTimeout(timer);
      }
    }),
  ];
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}

/** The server's "no responders": nobody subscribes to the subject (the worker's connection is gone). */
function isNoResponders(err: unknown): boolean {
  if (err instanceof errors.NoRespondersError) return true;
  if (err instanceof errors.RequestError && err.isNoResponders()) return true;
  return err instanceof Error && err.cause !== undefined && isNoResponders(err.cause);
}
