import type { NatsConnection } from '@nats-io/transport-node';
import { ensureStream } from '../src/infra/jetstream.js';
import type { Logger } from '../src/logger.js';
import type { Migration } from '../src/infra/migrate.js';
import type { Sql } from '../src/infra/postgres.js';
import type { Publisher } from '../src/messaging/publisher.js';
import { serveEndpoints } from '../src/messaging/worker.js';
import { jobConsumerStates } from '../src/messaging/jobs.js';
import { registerWorkerGauges, type Metrics } from '../src/infra/metrics.js';
import type { Config } from '../src/config.js';
import { EventStream } from '../subjects/events.js';
import { JobStream } from '../subjects/jobs.js';
import { createCatalogActor } from './catalog/handler.js';
import { createCheckoutActor } from './checkout/handler.js';
import { createCheckoutProcessActor } from './checkout-process/handler.js';
import { createClosingSchedulesActor } from './closing-schedules/handler.js';
import { createBatchTrigger } from './closing-schedules/batch-trigger.js';
import { createScheduleTrigger } from './closing-schedules/trigger.js';
import { createClosingSequenceActor } from './closing-sequence/handler.js';
import { createCouponsActor } from './coupons/handler.js';
import { createImportsActor } from './imports/handler.js';
import { createOrdersActor } from './orders/handler.js';
import { createReceiptsActor } from './receipts/handler.js';
import { startOutboxRelay } from './outbox/relay.js';
import { outboxBacklog } from './outbox/sql.js';
import { createPosCredentialsActor } from './pos-credentials/handler.js';
import { createPortalAccountsActor } from './portal-accounts/handler.js';
import { startFulfillmentCaller } from './fulfillment-caller/handler.js';
import { createPromotionsActor } from './promotions/handler.js';
import { createSettingsActor } from './settings/handler.js';
import { createShopsActor } from './shops/handler.js';
import { startFiscalJobs } from './fiscal/handler.js';
import { createProviderSource, type ProviderOptions } from './fiscal/providers/index.js';
import { createFiscalActor } from './fiscal/registers.js';
import { createIdempotencyActor } from './idempotency/handler.js';
import { createIntegrationsActor } from './integrations/handler.js';
import { createWebhooksActor } from './webhooks/handler.js';
import type { NatsIssuer } from './integrations/nats-access.js';
import type { KeyRing } from '../src/secrets/key-ring.js';
import { createSystemActor } from './system/handler.js';

export interface WorkerDeps {
  sql: Sql;
  /** The pool of the checkout workers (see service/start.ts). */
  checkoutSql: Sql;
  nc: NatsConnection;
  publisher: Publisher;
  log: Logger;
  migrations: readonly Migration[];
  checkout: { signingKey: Uint8Array; infoTtlMs: number };
  /** How many catalog entries the checkout workers remember (0: none). */
  checkoutCacheMaxEntries: number;
  orders: { maxListRecords: number };
  events: { maxAgeMs: number };
  /** Copies of each stream and consumer on a NATS cluster (JETSTREAM_REPLICAS). */
  jetstream: { replicas: number };
  /** Receipts: the time zone they print times in, bytes per message, threads that make them, whether made ahead (RECEIPTS_AHEAD). */
  receipts: { timeZone: string; partBytes: number; renderThreads: number; ahead: boolean };
  /** Closings: whether this process ticks the closing schedules; the software version DSFinV-K exports name. */
  closings: { schedulerEnabled: boolean; softwareVersion: string; retryScheduleMs?: readonly number[]; maxAttempts?: number };
  /** The external fulfillment service and how this process calls it (config.ts). */
  fulfillment: Config['fulfillment'] & { publicBaseUrl?: string };
  /** TSE signing (config.ts), and the providers beyond `local` (`fiskaly`) or a test's wrapper around them. */
  fiscal: Config['fiscal'] & Pick<ProviderOptions, 'fiskaly' | 'wrap'>;
  /** The process's metrics: messages handled, jobs exhausted, and what the outbox, JetStream and the pools hold at a scrape. */
  metrics?: Metrics;
  /** The key ring stored secrets are sealed with (SECRETS_KEY). */
  secrets: KeyRing;
  /** Webhook deliveries (config.ts). */
  webhooks: Config['webhooks'];
  /** What issues and revokes the integrations' NATS credentials (NATS_ISSUER opened); unset: a NATS without credentials. */
  natsIssuer?: NatsIssuer;
}

export interface Workers {
  /** Stops taking messages, waits for the running handlers, then publishes what they wrote. */
  stop(): Promise<void>;
}

/** Starts every worker pool of this process, and its outbox relay. Each pool serves its domain's queue group. */
export async function startWorkers(deps: WorkerDeps): Promise<Workers> {
  const { sql, checkoutSql, nc, publisher, log, migrations, checkout, metrics } = deps;
  // Events are kept for integrators; a publish repeated within two minutes is dropped.
  const { replicas } = deps.jetstream;
  await ensureStream(nc, { ...EventStream, maxAgeMs: deps.events.maxAgeMs, duplicateWindowMs: 120_000, replicas }, log);
  // Jobs stay until a worker acked them; two weeks outlasts every retry schedule.
  await ensureStream(nc, { ...JobStream, retention: 'workqueue', maxAgeMs: 14 * 86_400_000, duplicateWindowMs: 120_000, replicas }, log);
  const relay = startOutboxRelay({ sql, nc, log });
  const webhooks = createWebhooksActor({
    sql, nc, log, secrets: deps.secrets, webhooks: deps.webhooks, metrics, eventsWritten: () => relay.nudge(), userAgent: `checkout-platform-webhooks/${deps.closings.softwareVersion}`,
  });
  if (metrics) {
    registerWorkerGauges(metrics, {
      outbox: () => outboxBacklog(sql), jobConsumers: () => jobConsumerStates(nc), webhookBacklog: () => webhooks.backlogSeconds(), pools: { general: sql, checkout: checkoutSql }, log,
    });
  }
  const closingSequence = createClosingSequenceActor({
    sql, nc, log, software: { brand: 'checkout-platform', version: deps.closings.softwareVersion }, eventsWritten: () => relay.nudge(),
    retryScheduleMs: deps.closings.retryScheduleMs, maxAttempts: deps.closings.maxAttempts, metrics,
  });
  const closingWork = await closingSequence.startConsumer();
  const receipts = createReceiptsActor({ sql, nc, log, ...deps.receipts, metrics });
  const tse = createProviderSource({ sql, log, secrets: deps.secrets, timeoutMs: deps.fiscal.timeoutMs, fiskaly: deps.fiscal.fiskaly, wrap: deps.fiscal.wrap });
  const receiptJobs = await receipts.startConsumer();
  const checkoutProcesses = createCheckoutProcessActor({ sql, ...checkout, eventsWritten: () => relay.nudge(), defaultFiscalProvider: deps.fiscal.defaultProvider, receiptsAhead: deps.receipts.ahead });
  const idempotencyKeys = createIdempotencyActor({ sql, log, secrets: deps.secrets });
  const integrations = createIntegrationsActor({
    sql, nc, log, natsIssuer: deps.natsIssuer, secrets: deps.secrets, destinations: { allowPrivate: deps.webhooks.allowPrivateNetworks }, eventsWritten: () => relay.nudge(), metrics,
  });
  const endpoints = serveEndpoints({ nc, publisher, log, metrics }, [
    ...createSystemActor({ sql, migrations }),
    ...createSettingsActor({ sql, secrets: deps.secrets }),
    ...createShopsActor({ sql }),
    ...createCatalogActor({ sql }),
    ...createImportsActor({ sql }),
    ...createCheckoutActor({ sql: checkoutSql, log, signingKey: checkout.signingKey, cacheMaxEntries: deps.checkoutCacheMaxEntries, fulfillmentAvailable: Boolean(deps.fulfillment.url) }),
    ...checkoutProcesses.routes,
    ...createFiscalActor({ sql, local: tse.local, defaultProvider: deps.fiscal.defaultProvider }),
    ...createOrdersActor({ sql, maxListRecords: deps.orders.maxListRecords }),
    ...createCouponsActor({ sql, eventsWritten: () => relay.nudge() }),
    ...receipts.routes,
    ...createPromotionsActor({ sql, eventsWritten: () => relay.nudge() }),
    ...createPosCredentialsActor({ sql }),
    ...createPortalAccountsActor({ sql }),
    ...createClosingSchedulesActor({ sql }),
    ...closingSequence.routes,
    ...idempotencyKeys.routes,
    ...integrations.routes,
    ...webhooks.routes,
  ]);
  const webhookDeliveries = await webhooks.startDeliveries();
  const revocationJobs = deps.natsIssuer ? await integrations.startRevocationJobs() : undefined;
  // The fulfillment caller records the service's answers through this process's process actor.
  const { url, token, timeoutMs, publicBaseUrl, retryScheduleMs, maxAttempts, callers } = deps.fulfillment;
  const fulfillmentCaller =
    callers > 0
      ? await startFulfillmentCaller({ nc, log, processes: checkoutProcesses.fulfillmentCalls, service: { url, token, timeoutMs, publicBaseUrl }, retryScheduleMs, maxAttempts, concurrency: callers, metrics })
      : undefined;
  const { retryScheduleMs: fiscalRetries, maxAttempts: fiscalAttempts, signers } = deps.fiscal;
  const fiscalJobs =
    signers > 0
      ? await startFiscalJobs({ nc, sql, log, providers: tse.source, retryScheduleMs: fiscalRetries, maxAttempts: fiscalAttempts, concurrency: signers, eventsWritten: () => relay.nudge(), receiptsAhead: deps.receipts.ahead, metrics })
      : undefined;
  const scheduleTrigger = createScheduleTrigger({ sql, log, claimed: () => relay.nudge() });
  // Batches are claimed like fire times, on a timer of their own (node-cron's minute is too coarse).
  const batchTrigger = createBatchTrigger({ sql, log, claimed: () => relay.nudge() });
  if (deps.closings.schedulerEnabled) {
    scheduleTrigger.start();
    batchTrigger.start();
  }
  return {
    async stop() {
      await scheduleTrigger.stop();
      await batchTrigger.stop();
      await fulfillmentCaller?.stop();
      await fiscalJobs?.stop();
      await revocationJobs?.stop();
      await webhookDeliveries?.stop();
      webhooks.close();
      await endpoints.stop();
      await idempotencyKeys.stop();
      await closingWork.stop();
      await receiptJobs.stop();
      relay.nudge();
      await relay.stop();
    },
  };
}
