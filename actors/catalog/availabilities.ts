import type { Sql } from '../../src/infra/postgres.js';
import { route, type Route } from '../../src/messaging/worker.js';
import { availabilities } from '../../subjects/availabilities.js';
import { availabilitiesOfSku } from './availabilities.sql.js';

export function availabilityRoutes(sql: Sql): Route[] {
  return [
    route(availabilities.bySku, async ({ project, sku }) => ({
      availabilities: (await availabilitiesOfSku(sql, project, sku)).map((a) => ({ ...a, project })),
    })),
  ];
}
