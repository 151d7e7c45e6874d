import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { settings } from '../../subjects/settings.js';
import { readSettings, writeSettings } from './sql.js';

export function createSettingsActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;
  return [
    route(settings.get, async ({ project }) => ({ project, ...(await readSettings(sql, project)) })),
    route(settings.put, async ({ project, settings: next }) => {
      await writeSettings(sql, project, next);
      return { project, ...next };
    }),
  ];
}
