import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { fiscalizationView, type FiscalizationSettings } from '../../subjects/fiscal.js';
import { settings } from '../../subjects/settings.js';
import { readFiscalization, readSettings, writeSettings } from './sql.js';

export function createSettingsActor(deps: { sql: Sql }): Route[] {
  const { sql } = deps;
  // The TSE secrets are write-only: answers carry whether they are set, never them.
  const withFiscalization = (stored: FiscalizationSettings | undefined) => (stored ? { fiscalization: fiscalizationView(stored) } : {});
  return [
    route(settings.get, async ({ project }) => {
      const [{ fiscalization: _none, ...stored }, fiscalization] = await Promise.all([readSettings(sql, project), readFiscalization(sql, project)]);
      return { project, ...stored, ...withFiscalization(fiscalization) };
    }),
    route(settings.put, async ({ project, settings: next }) => {
      const { fiscalization: _written, ...rest } = next;
      const fiscalization = await writeSettings(sql, project, next);
      return { project, ...rest, ...withFiscalization(fiscalization) };
    }),
  ];
}
