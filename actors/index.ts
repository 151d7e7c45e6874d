import type { NatsConnection } from '@nats-io/transport-node';
import { ensureStream } from '../src/infra/jetstream.js';
import { createResolver, systemResolve, type DestinationPolicy } from '../src/infra/destinations.js';
import { createOutgoingHttp } from '../src/infra/outgoing-http.js';
import type { Logger } from '../src/logger.js';
import type { Migration } from '../src/infra/migrate.js';
import type { Sql } from '../src/infra/postgres.js';
import type { Publisher } from '../src/messaging/publisher.js';
import { serveEndpoints } from '../src/messaging/worker.js';
import { jobConsumerStates, jobStreamSpec } from '../src/messaging/jobs.js';
import { registerWorkerGauges, type Metrics } from '../src/infra/metrics.js';
import type { Config } from '../src/config.js';
import { EventStream } from '../subjects/events.js';
import { createCatalogActor } from './catalog/handler.js';
import { createCheckoutActor } from './checkout/handler.js';
import { createCheckoutProcessActor } from './checkout-process/handler.js';
import { createClientsActor } from './clients/handler.js';
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
import { createWebhookLogSweep } from './webhooks/log-sweep.js';
import { watchEvents, type NatsIssuer } from './integrations/nats-access.js';
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
  /** What a project's integrations may take (config.ts). */
  integrations: Config['integrations'];
  /** How long work waits for a writable Postgres before it is answered 503 (config.ts `database.waitMs`). */
  databaseWaitMs?: number;
}

/** What is read of a TSE's or the fulfillment service's answer at most (their JSON answers are a few KB). */
const AnswerBytes = 1024 * 1024;

export interface Workers {
  /** Stops taking messages, waits for the running handlers, then publishes what they wrote. */
  stop(): Promise<void>;
}

/** Starts every worker pool of this process, and its outbox relay. Each pool serves its domain's queue group. */
export async function startWorkers(deps: WorkerDeps): Promise<Workers> {
  const { sql, checkoutSql, nc, publisher, log, migrations, checkout, metrics } = deps;
  // Events are kept for integrators; a publish repeated within two minutes is dropped.
  const { replicas } = deps.jetstream;
  const events = { ...EventStream, maxAgeMs: deps.events.maxAgeMs, duplicateWindowMs: 120_000, replicas };
  await ensureStream(nc, events, log);
  // EVENTS and the integrations' consumers on it are made again when they disappear (JOBS and its consumers: src/messaging/jobs.ts).
  const eventsWatch = watchEvents({ sql, nc, log, spec: events });
  // Jobs stay until a worker acked them; two weeks outlasts every retry schedule.
  await ensureStream(nc, jobStreamSpec(replicas), log);
  const relay = startOutboxRelay({ sql, nc, log });
  // Where outsiders' URLs may lead (webhooks), their names resolved by DNS queries with a deadline of their own.
  const destinations: DestinationPolicy = {
    allowPrivate: deps.webhooks.allowPrivateNetworks,
    resolve: createResolver({ timeoutMs: deps.webhooks.dnsTimeoutMs, servers: deps.webhooks.dnsServers }),
  };
  const webhooks = createWebhooksActor({
    sql, nc, log, secrets: deps.secrets, destinations, webhooks: deps.webhooks, metrics, eventsWritten: () => relay.nudge(), userAgent: `checkout-platform-webhooks/${deps.closings.softwareVersion}`,
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
  // A project's fiskaly address is a setting (an outsider's URL): it may be private (a sandbox), never link-local.
  const fiskalyHttp = createOutgoingHttp({ policy: { allowPrivate: true, resolve: destinations.resolve }, connectionsPerOrigin: 64, maxBodyBytes: AnswerBytes });
  const tse = createProviderSource({ sql, log, secrets: deps.secrets, timeoutMs: deps.fiscal.timeoutMs, http: fiskalyHttp, fiskaly: deps.fiscal.fiskaly, wrap: deps.fiscal.wrap });
  const receiptJobs = await receipts.startConsumer();
  const checkoutProcesses = createCheckoutProcessActor({ sql, ...checkout, eventsWritten: () => relay.nudge(), defaultFiscalProvider: deps.fiscal.defaultProvider, receiptsAhead: deps.receipts.ahead });
  const idempotencyKeys = createIdempotencyActor({ sql, log, secrets: deps.secrets });
  const integrations = createIntegrationsActor({
    sql, nc, log, natsIssuer: deps.natsIssuer, secrets: deps.secrets, destinations, eventsWritten: () => relay.nudge(), limits: deps.integrations, metrics,
  });
  // This version's accounts (exports, imports, revocations) reach the servers by the account update jobs.
  if (await integrations.ensurePlatformAccounts()) relay.nudge();
  const endpoints = serveEndpoints({ nc, publisher, log, metrics, databaseWaitMs: deps.databaseWaitMs }, [
    ...createSystemActor({ sql, nc, migrations }),
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
    ...createClientsActor({ sql, signInSql: checkoutSql, log, secrets: deps.secrets }),
  ]);
  const webhookDeliveries = await webhooks.startDeliveries();
  const webhookLog = createWebhookLogSweep({ sql, nc, log, metrics, days: deps.webhooks.logDays, claimed: () => relay.nudge() });
  await webhookLog.start();
  const accountUpdates = deps.natsIssuer ? await integrations.startAccountUpdates() : undefined;
  // The fulfillment caller records the service's answers through this process's process actor.
  const { url, token, timeoutMs, publicBaseUrl, retryScheduleMs, maxAttempts, callers } = deps.fulfillment;
  // FULFILLMENT_URL is the operator's: any address, its name resolved as the system resolves (an in-cluster name).
  const fulfillmentHttp = createOutgoingHttp({ policy: { allowPrivate: true, resolve: systemResolve }, connectionsPerOrigin: Math.max(1, callers), maxBodyBytes: AnswerBytes });
  const fulfillmentCaller =
    callers > 0
      ? await startFulfillmentCaller({ nc, sql, eventsWritten: () => relay.nudge(), log, processes: checkoutProcesses.fulfillmentCalls, service: { url, token, timeoutMs, publicBaseUrl, http: fulfillmentHttp }, retryScheduleMs, maxAttempts, concurrency: callers, metrics })
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
      eventsWatch.stop();
      await scheduleTrigger.stop();
      await batchTrigger.stop();
      await fulfillmentCaller?.stop();
      await fiscalJobs?.stop();
      await accountUpdates?.stop();
      await webhookDeliveries?.stop();
      await webhookLog.stop();
      await webhooks.close();
      await Promise.all([fulfillmentHttp.close(), fiskalyHttp.close()]);
      await endpoints.stop();
      await idempotencyKeys.stop();
      await closingWork.stop();
      await receiptJobs.stop();
      relay.nudge();
      await relay.stop();
    },
  };
}
