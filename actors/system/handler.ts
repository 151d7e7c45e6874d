import type { Sql } from '../../src/infra/postgres.js';
import { pendingMigrations, type Migration } from '../../src/infra/migrate.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { system, type WorkerHealth } from '../../subjects/system.js';

/** Answers the edge's health question with what only a worker can see: the database and its schema. */
export function createSystemActor(deps: { sql: Sql; migrations: readonly Migration[] }): Route[] {
  return [
    route(system.health, async (): Promise<WorkerHealth> => {
      try {
        const pending = await pendingMigrations(deps.sql, deps.migrations);
        return { postgres: 'ok', migrations: pending.length ? 'pending' : 'ok', pendingMigrations: pending };
      } catch {
        return { postgres: 'unavailable', migrations: 'pending', pendingMigrations: [] };
      }
    }),
  ];
}
