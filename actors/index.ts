import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../src/logger.js';
import type { Migration } from '../src/infra/migrate.js';
import type { Sql } from '../src/infra/postgres.js';
import type { Publisher } from '../src/messaging/publisher.js';
import { serveEndpoints, type EndpointServer } from '../src/messaging/worker.js';
import { createCatalogActor } from './catalog/handler.js';
import { createCheckoutActor } from './checkout/handler.js';
import { createImportsActor } from './imports/handler.js';
import { createSettingsActor } from './settings/handler.js';
import { createShopsActor } from './shops/handler.js';
import { createSystemActor } from './system/handler.js';

export interface WorkerDeps {
  sql: Sql;
  /** The pool of the checkout workers (see service.ts). */
  checkoutSql: Sql;
  nc: NatsConnection;
  publisher: Publisher;
  log: Logger;
  migrations: readonly Migration[];
  checkout: { signingKey: Uint8Array; infoTtlMs: number };
}

/** Starts every worker pool of this process. Each serves its endpoints in its domain's queue group. */
export function startWorkers(deps: WorkerDeps): EndpointServer {
  const { sql, checkoutSql, nc, publisher, log, migrations, checkout } = deps;
  return serveEndpoints({ nc, publisher, log }, [
    ...createSystemActor({ sql, migrations }),
    ...createSettingsActor({ sql }),
    ...createShopsActor({ sql }),
    ...createCatalogActor({ sql }),
    ...createImportsActor({ sql }),
    ...createCheckoutActor({ sql: checkoutSql, signingKey: checkout.signingKey }),
  ]);
}
