import type { Sql } from '../../src/infra/postgres.js';
import type { Route } from '../../src/messaging/worker.js';
import { availabilityRoutes } from './availabilities.js';
import { pricingRoutes } from './pricing.js';
import { productRoutes } from './products.js';

/** The catalog workers: reads and single writes of products, availabilities and prices. */
export function createCatalogActor(deps: { sql: Sql }): Route[] {
  return [...productRoutes(deps.sql), ...pricingRoutes(deps.sql), ...availabilityRoutes(deps.sql)];
}
